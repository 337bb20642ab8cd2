/**
 * Type tests of the worker's `on`, run by `vitest --typecheck` and by `tsc`:
 * the same compile-time checks as a receiver's, the schema's output reaching
 * the handler, and the delivery with its tenant.
 */
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type { CallMissedEvent, DedupStore, UnknownWebhookEvent, WebhookDelivery, WebhookEvent } from '../../../src/index.js';
import { work, type BullMQWorker } from '../../../src/queues/bullmq/index.js';

declare const dedup: DedupStore;
const connection = { host: '127.0.0.1', port: 6379 };

describe("the worker's handlers", () => {
  it('type each handler by its event, and give it the delivery', () => {
    const worker = work('webhooks', {
      dedup: { store: dedup },
      on: {
        'call.missed': (event, delivery) => {
          expectTypeOf(event).toEqualTypeOf<CallMissedEvent>();
          expectTypeOf(delivery).toEqualTypeOf<WebhookDelivery>();
          expectTypeOf(delivery.tenant).toEqualTypeOf<string | undefined>();
          expectTypeOf(delivery.dedupKey).toEqualTypeOf<string>();
        },
      },
      onUnknownEvent: (event, delivery) => {
        expectTypeOf(event).toEqualTypeOf<UnknownWebhookEvent>();
        expectTypeOf(delivery).toEqualTypeOf<WebhookDelivery>();
      },
      onHandlerError: (error, event, delivery) => {
        expectTypeOf(error).toEqualTypeOf<unknown>();
        expectTypeOf(event).toEqualTypeOf<WebhookEvent>();
        expectTypeOf(delivery).toEqualTypeOf<WebhookDelivery>();
      },
      worker: { connection, concurrency: 50 },
    });
    expectTypeOf(worker).toEqualTypeOf<Promise<BullMQWorker>>();
  });

  it("give a handler its schema's output", () => {
    void work('webhooks', {
      worker: { connection },
      dedup: { store: dedup },
      schemas: { 'call.missed': z.object({ id: z.string() }).transform(({ id }) => ({ short: id })) },
      on: { 'call.missed': (event) => expectTypeOf(event).toEqualTypeOf<{ short: string }>() },
    });
  });

  it('refuse a type that is not known, a missing dedup store and a missing connection, and a store or BullMQ option out of place', () => {
    const worker = { connection };
    // @ts-expect-error: a misspelled event type
    void work('webhooks', { worker, dedup: { store: dedup }, on: { 'call.mised': () => {} } });
    // @ts-expect-error: the worker needs dedup options
    void work('webhooks', { worker, on: {} });
    // @ts-expect-error: the worker's dedup options need a store
    void work('webhooks', { worker, dedup: { leaseMs: 60_000 }, on: {} });
    // @ts-expect-error: the store goes under dedup, as dedup: { store }
    void work('webhooks', { worker, dedup, on: {} });
    // @ts-expect-error: BullMQ needs a connection
    void work('webhooks', { dedup: { store: dedup }, on: {} });
    // @ts-expect-error: BullMQ needs a connection, under worker
    void work('webhooks', { worker: { concurrency: 5 }, dedup: { store: dedup }, on: {} });
    // @ts-expect-error: BullMQ's options go under worker
    void work('webhooks', { worker, concurrency: 5, dedup: { store: dedup }, on: {} });
    // @ts-expect-error: the lease goes under dedup
    void work('webhooks', { worker, leaseMs: 60_000, dedup: { store: dedup }, on: {} });
  });
});

/**
 * Type tests of the worker's `on`, run by `vitest --typecheck` and by `tsc`:
 * the same compile-time checks as a receiver's, the schema's output reaching
 * the handler, and the context with its tenant.
 */
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type { CallMissedEvent, DedupStore, HandlerContext, UnknownWebhookEvent } from '../../../src/index.js';
import { createWorker, type WebhookWorker } from '../../../src/queues/bullmq/index.js';

declare const dedup: DedupStore;
const connection = { host: '127.0.0.1', port: 6379 };

describe("the worker's handlers", () => {
  it('type each handler by its event, and give it the context', () => {
    const worker = createWorker('webhooks', {
      connection,
      dedup,
      concurrency: 50,
      on: {
        'call.missed': (event, context) => {
          expectTypeOf(event).toEqualTypeOf<CallMissedEvent>();
          expectTypeOf(context).toEqualTypeOf<HandlerContext>();
          expectTypeOf(context.tenant).toEqualTypeOf<string | undefined>();
        },
      },
      onUnknown: (event) => expectTypeOf(event).toEqualTypeOf<UnknownWebhookEvent>(),
    });
    expectTypeOf(worker).toEqualTypeOf<Promise<WebhookWorker>>();
  });

  it("give a handler its schema's output", () => {
    void createWorker('webhooks', {
      connection,
      dedup,
      schemas: { 'call.missed': z.object({ id: z.string() }).transform(({ id }) => ({ short: id })) },
      on: { 'call.missed': (event) => expectTypeOf(event).toEqualTypeOf<{ short: string }>() },
    });
  });

  it('refuse a type that is not known, a missing dedup store and a missing connection', () => {
    // @ts-expect-error: a misspelled event type
    void createWorker('webhooks', { connection, dedup, on: { 'call.mised': () => {} } });
    // @ts-expect-error: the worker needs a dedup store
    void createWorker('webhooks', { connection, on: {} });
    // @ts-expect-error: BullMQ needs a connection
    void createWorker('webhooks', { dedup, on: {} });
  });
});

/**
 * Type tests of the worker, run by `vitest --typecheck` (and by `tsc` in
 * `npm test`): its `on` has the receiver's checks (known types only, each
 * handler its own event or its schema's output, and the delivery), and
 * pg-boss's work options sit beside the handler options; an instance of
 * pg-boss 10, 11 or 12 is taken as it is.
 */
import type PgBoss from 'pg-boss';
import type PgBoss11 from 'pg-boss11';
import type { PgBoss as PgBoss12 } from 'pg-boss12';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { verifyWebhook } from '../../../adapters/fetch.js';
import type { CallMissedEvent, Handoff, TranscriptReadyEvent, UnknownWebhookEvent, WebhookDelivery, WebhookEvent } from '../../../src/index.js';
import { enqueue, work, type PgPool } from '../../../src/queues/pg-boss/index.js';

declare const boss: PgBoss;
declare const pool: PgPool;
declare const boss11: PgBoss11;
declare const boss12: PgBoss12;

describe('the pg-boss instance', () => {
  it('is one of pg-boss 10, 11 or 12, each typed by its own declarations', () => {
    for (const instance of [boss, boss11, boss12]) {
      expectTypeOf(enqueue(instance, 'webhooks', { pool, job: { retryLimit: 3 } })).toEqualTypeOf<Handoff>();
      expectTypeOf(work(instance, 'webhooks', { on: {}, worker: { batchSize: 5 } })).toEqualTypeOf<Promise<string>>();
    }
  });

  it('is no other object', () => {
    // @ts-expect-error: no send, work or complete.
    enqueue({ start: async () => {} }, 'webhooks', { pool });
    // @ts-expect-error: no send, work or complete.
    void work({}, 'webhooks', { on: {} });
  });
});

describe('work', () => {
  it('types each handler by its event type and gives it the delivery', () => {
    void work(boss, 'webhooks', {
      on: {
        'call.missed': (event, delivery) => {
          expectTypeOf(event).toEqualTypeOf<CallMissedEvent>();
          expectTypeOf(delivery).toEqualTypeOf<WebhookDelivery>();
        },
        'transcript.ready': (event, delivery) => {
          expectTypeOf(event).toEqualTypeOf<TranscriptReadyEvent>();
          expectTypeOf(delivery).toEqualTypeOf<WebhookDelivery>();
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
    });
    void work(boss, 'webhooks', { on: {}, unknownEvents: 'reject' });
  });

  it('refuses a type that is not known, as the receiver does', () => {
    // @ts-expect-error: 'call.mised' is no known event type.
    void work(boss, 'webhooks', { on: { 'call.mised': () => {} } });
  });

  it("hands a handler its schema's output", () => {
    const schema = z.object({ id: z.string(), type: z.literal('call.missed'), data: z.object({ object: z.object({ from: z.string() }) }) });
    void work(boss, 'webhooks', {
      schemas: { 'call.missed': schema },
      on: { 'call.missed': (event) => expectTypeOf(event.data.object.from).toEqualTypeOf<string>() },
    });
  });

  it("takes pg-boss's work options, typed as pg-boss types them", () => {
    void work(boss, 'webhooks', { on: {}, worker: { batchSize: 10, pollingIntervalSeconds: 1, priority: false } });
    // @ts-expect-error: batchSize is a number.
    void work(boss, 'webhooks', { on: {}, batchSize: 'ten' });
    expectTypeOf(work(boss, 'webhooks', { on: {} })).toEqualTypeOf<Promise<string>>();
  });

  it('needs on', () => {
    // @ts-expect-error: on is required.
    void work(boss, 'webhooks', { batchSize: 1 });
  });
});

describe('enqueue', () => {
  it("is a handoff any entry takes, with pg-boss's job options", () => {
    const handoff = enqueue(boss, 'webhooks', { pool, job: { retryLimit: 5, expireInSeconds: 60 } });
    expectTypeOf(handoff).toEqualTypeOf<Handoff>();
    verifyWebhook({ secret: 'whsec_x', handoff });
    // @ts-expect-error: the job's id is the entry's.
    enqueue(boss, 'webhooks', { pool, job: { id: 'x' } });
    // @ts-expect-error: the pool is required.
    enqueue(boss, 'webhooks', {});
  });
});

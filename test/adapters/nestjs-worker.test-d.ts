/**
 * Type tests of `WebhooksModule.forWorker`, run by `vitest --typecheck` (and
 * by `tsc` in `npm test`): the queue of each engine with its own options, an
 * instance of pg-boss 10, 11 or 12 taken as it is, the options of `on`
 * beside the queue, and no handlers, secret or handoff of its own.
 */
import type PgBoss from 'pg-boss';
import type PgBoss11 from 'pg-boss11';
import type { PgBoss as PgBoss12 } from 'pg-boss12';
import { describe, expectTypeOf, it } from 'vitest';
import { WebhooksModule, type WebhooksModuleWorkerOptions } from '../../adapters/nestjs.js';
import type { DynamicModule } from '@nestjs/common';
import type { DedupStore, Handoff, StandardSchema } from '../../src/index.js';

declare const store: DedupStore;
declare const handoff: Handoff;
declare const schema: StandardSchema;
declare const boss: PgBoss;
declare const boss11: PgBoss11;
declare const boss12: PgBoss12;

describe('WebhooksModule.forWorker', () => {
  it('takes a BullMQ queue with its dedup store and BullMQ worker options, connection optional', () => {
    expectTypeOf(WebhooksModule.forWorker({ queue: { engine: 'bullmq', name: 'webhooks', dedup: { store, leaseMs: 30_000 } } })).toEqualTypeOf<DynamicModule>();
    WebhooksModule.forWorker({ queue: { engine: 'bullmq', name: 'webhooks', dedup: { store }, worker: { connection: { host: 'redis' }, concurrency: 10 } } });
    // @ts-expect-error the worker's dedup store is required on BullMQ
    WebhooksModule.forWorker({ queue: { engine: 'bullmq', name: 'webhooks' } });
    // @ts-expect-error BullMQ's options go under worker
    WebhooksModule.forWorker({ queue: { engine: 'bullmq', name: 'webhooks', dedup: { store }, concurrency: 10 } });
  });

  it('takes a pg-boss queue on an instance of pg-boss 10, 11 or 12, each typed by its own declarations', () => {
    for (const instance of [boss, boss11, boss12]) {
      WebhooksModule.forWorker({ queue: { engine: 'pg-boss', boss: instance, name: 'webhooks', worker: { batchSize: 5 } } });
    }
    // @ts-expect-error no pg-boss instance
    WebhooksModule.forWorker({ queue: { engine: 'pg-boss', boss: { start: async () => {} }, name: 'webhooks' } });
    // @ts-expect-error a queue of no known engine
    WebhooksModule.forWorker({ queue: { engine: 'sqs', name: 'webhooks' } });
  });

  it('takes the options of on beside the queue, from a factory too, and no handlers, secret or handoff', () => {
    const queue = { engine: 'pg-boss', boss, name: 'webhooks' } as const;
    WebhooksModule.forWorker({ queue, schemas: { 'call.missed': schema }, unknownEvents: 'reject', onHandlerError: () => undefined, logger: console });
    WebhooksModule.forWorkerAsync({ inject: ['BOSS'], useFactory: (instance: PgBoss) => ({ queue: { ...queue, boss: instance } }) });
    // @ts-expect-error the @OnWebhook methods are the handlers: no on
    WebhooksModule.forWorker({ queue, on: {} });
    // @ts-expect-error the receiving side verifies: no secret
    WebhooksModule.forWorker({ queue, secret: 'whsec_c2VjcmV0' });
    // @ts-expect-error the receiving side hands off
    WebhooksModule.forWorker({ queue, handoff });
    // @ts-expect-error the factory builds the worker's options
    WebhooksModule.forWorkerAsync({ useFactory: () => ({ secret: 'whsec_c2VjcmV0', handoff }) });
    expectTypeOf<WebhooksModuleWorkerOptions['queue']['engine']>().toEqualTypeOf<'bullmq' | 'pg-boss'>();
  });
});

/**
 * Type tests of the Cloudflare entry, run by `vitest --typecheck` (and by
 * `tsc` in `npm test`): `on` has the receiver's checks, `dedup.store` may be
 * a function of the Worker's own `env`, and the shapes of Workers' own
 * types (copied here from @cloudflare/workers-types, which the package does
 * not depend on) fit the entry: a `Queue` is a producer, and the handler is
 * a Worker's `queue`.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { CallMissedEvent, Handoff, WebhookDelivery } from '../../../src/index.js';
import { enqueue, work, type CloudflareQueueHandler } from '../../../src/queues/cloudflare/index.js';
import { D1DedupStore, type D1Database } from '../../../src/stores/d1/index.js';

/** The parts of @cloudflare/workers-types' `Queue`, `Message`, `MessageBatch`, `ExecutionContext` and `D1Database` in use. */
interface WorkersQueue<Body = unknown> {
  send(message: Body, options?: { contentType?: 'text' | 'bytes' | 'json' | 'v8'; delaySeconds?: number }): Promise<void>;
  sendBatch(messages: Iterable<{ body: Body }>): Promise<void>;
}
interface WorkersMessage<Body = unknown> {
  readonly id: string;
  readonly timestamp: Date;
  readonly body: Body;
  readonly attempts: number;
  retry(options?: { delaySeconds?: number }): void;
  ack(): void;
}
interface WorkersMessageBatch<Body = unknown> {
  readonly queue: string;
  readonly messages: readonly WorkersMessage<Body>[];
  retryAll(options?: { delaySeconds?: number }): void;
  ackAll(): void;
}
interface WorkersExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException(): void;
}
interface WorkersD1Result {
  results: unknown[];
  success: true;
  meta: { duration: number; changes: number; last_row_id: number; changed_db: boolean; size_after: number; rows_read: number; rows_written: number };
}
interface WorkersD1PreparedStatement {
  bind(...values: unknown[]): WorkersD1PreparedStatement;
  first<T = Record<string, unknown>>(colName?: string): Promise<T | null>;
  run<T = Record<string, unknown>>(): Promise<WorkersD1Result & { results: T[] }>;
  all<T = Record<string, unknown>>(): Promise<WorkersD1Result & { results: T[] }>;
}
interface WorkersD1Database {
  prepare(query: string): WorkersD1PreparedStatement;
  batch<T = unknown>(statements: WorkersD1PreparedStatement[]): Promise<Array<WorkersD1Result & { results: T[] }>>;
  exec(query: string): Promise<{ count: number; duration: number }>;
}
interface Env {
  readonly DB: WorkersD1Database;
  readonly WEBHOOKS: WorkersQueue;
}
type ExportedQueueHandler = (batch: WorkersMessageBatch, env: Env, ctx: WorkersExecutionContext) => void | Promise<void>;

declare const env: Env;

describe('Workers bindings', () => {
  it('take a D1 binding as a D1Database and a Queue as a producer', () => {
    expectTypeOf(new D1DedupStore(env.DB)).toEqualTypeOf<D1DedupStore>();
    expectTypeOf(env.DB).toExtend<D1Database>();
    expectTypeOf(enqueue(env.WEBHOOKS)).toEqualTypeOf<Handoff>();
  });

  it("give a Worker's queue handler, with the store made from the Worker's env", () => {
    const handler = work<{}, Env>({ on: {}, dedup: { store: (bindings) => new D1DedupStore(bindings.DB, { table: 'svc_webhooks_queue_dedup' }) } });
    expectTypeOf(handler).toEqualTypeOf<CloudflareQueueHandler<Env>>();
    expectTypeOf(handler).toExtend<ExportedQueueHandler>();
  });
});

describe('on', () => {
  it("types each handler's event and delivery, as a receiver's on does", () => {
    work({
      on: {
        'call.missed': (event, delivery) => {
          expectTypeOf(event).toEqualTypeOf<CallMissedEvent>();
          expectTypeOf(delivery).toEqualTypeOf<WebhookDelivery>();
        },
      },
      dedup: { store: new D1DedupStore(env.DB) },
    });
  });

  it('refuses an unknown event type, and a store function that takes no env of its type', () => {
    // @ts-expect-error not an event type
    work({ on: { 'call.unknown': () => undefined }, dedup: { store: new D1DedupStore(env.DB) } });
    // @ts-expect-error the env has no DB
    work<{}, { OTHER: string }>({ on: {}, dedup: { store: (bindings) => new D1DedupStore(bindings.DB) } });
  });
});

/**
 * The consuming Worker of the Cloudflare tests: `work()` under a
 * D1DedupStore made from `env` (table `processed`). Its handler reaches D1
 * through `cloudflare:workers`' `env`, as a Worker's module-scope code does,
 * and records each run that succeeded in `runs`; an event `fail<N>_…`
 * fails its first N runs (counted in `attempts`), an event `random_…` fails
 * one run in three. Every ack and retry of a message is counted in
 * `settled`, so a test knows when the queue is drained.
 */
import { env as bindings } from 'cloudflare:workers';
import { work, type QueueBatch, type QueueMessage } from '../../../src/queues/cloudflare/index.js';
import { D1DedupStore, type D1Database } from '../../../src/stores/d1/index.js';

interface Env {
  readonly DB: D1Database & { prepare(sql: string): { bind(...values: unknown[]): { first<T>(): Promise<T | null>; run(): Promise<unknown> } } };
}

const FAILING = /^fail(\d+)_/;

const handle = work<{}, Env>({
  on: {
    'call.missed': async (event) => {
      const { DB } = bindings as unknown as Env;
      const planned = FAILING.exec(event.id);
      if (planned !== null) {
        const attempt = await DB.prepare('INSERT INTO attempts (id, n) VALUES (?, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1 RETURNING n').bind(event.id).first<{ n: number }>();
        if (attempt!.n <= Number(planned[1])) throw new Error(`planned failure ${attempt!.n}`);
      }
      if (event.id.startsWith('random_') && Math.random() < 1 / 3) throw new Error('random failure');
      await DB.prepare('INSERT INTO runs (id) VALUES (?)').bind(event.id).run();
    },
  },
  dedup: { store: (env) => new D1DedupStore(env.DB, { table: 'processed' }), leaseMs: 4_000 },
  onHandlerError: () => undefined,
  logger: { warn: () => undefined, error: () => undefined },
});

/** The message, its ack and retry counted in `settled`. */
function counted(message: QueueMessage, settled: string[]): QueueMessage {
  return {
    id: message.id,
    body: message.body,
    ack: () => {
      settled.push('ack');
      message.ack();
    },
    retry: (options) => {
      settled.push('retry');
      message.retry(options);
    },
  };
}

export default {
  async queue(batch: QueueBatch, env: Env, ctx: unknown): Promise<void> {
    const settled: string[] = [];
    await handle({ queue: batch.queue, messages: batch.messages.map((message) => counted(message, settled)) }, env, ctx);
    if (settled.length === 0) return;
    await env.DB.batch(settled.map((kind) => env.DB.prepare('INSERT INTO settled (kind) VALUES (?)').bind(kind)));
  },
};

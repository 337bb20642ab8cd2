/**
 * The consuming Worker of the Cloudflare tests: `work()` under a
 * D1DedupStore made from `env` (table `processed`), with `ordering` by the
 * event's `timestamp` when `ORDERED` is `yes`. Its handler reaches D1
 * through `cloudflare:workers`' `env`, as a Worker's module-scope code does,
 * and records each run that succeeded in `runs`; an event `fail<N>_…`
 * fails its first N runs (counted in `attempts`), an event `…_after_<id>`
 * fails until the event `<id>` has run, an event `random_…` fails one run
 * in three. The ordered handler also records, in `steps`, when each run
 * began and when it succeeded. Every ack, retry and retry with a delay (a
 * wait) of a message is counted in `settled`, so a test knows when the
 * queue is drained.
 */
import { env as bindings } from 'cloudflare:workers';
import type { WebhookEvent } from '../../../src/core/event.js';
import { work, type CloudflareWorkerOptions, type QueueBatch, type QueueMessage } from '../../../src/queues/cloudflare/index.js';
import { D1DedupStore, type D1Database } from '../../../src/stores/d1/index.js';

interface Env {
  readonly DB: D1Database & { prepare(sql: string): { bind(...values: unknown[]): { first<T>(): Promise<T | null>; run(): Promise<unknown> } } };
  readonly ORDERED: 'yes' | 'no';
}

const FAILING = /^fail(\d+)_/;
const AFTER = /_after_(.+)$/;

const db = (): Env['DB'] => (bindings as unknown as Env).DB;

async function run(event: WebhookEvent): Promise<void> {
  const planned = FAILING.exec(event.id);
  if (planned !== null) {
    const attempt = await db().prepare('INSERT INTO attempts (id, n) VALUES (?, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1 RETURNING n').bind(event.id).first<{ n: number }>();
    if (attempt!.n <= Number(planned[1])) throw new Error(`planned failure ${attempt!.n}`);
  }
  const after = AFTER.exec(event.id);
  if (after !== null && (await db().prepare('SELECT id FROM runs WHERE id = ?').bind(after[1]!).first()) === null) throw new Error(`planned failure until ${after[1]} ran`);
  if (event.id.startsWith('random_') && Math.random() < 1 / 3) throw new Error('random failure');
  await db().prepare('INSERT INTO runs (id) VALUES (?)').bind(event.id).run();
}

const step = (id: string, name: 'began' | 'ran') => db().prepare('INSERT INTO steps (id, step) VALUES (?, ?)').bind(id, name).run();

const options: CloudflareWorkerOptions<{}, Env> = {
  on: { 'call.missed': run },
  dedup: { store: (env) => new D1DedupStore(env.DB, { table: 'processed' }), leaseMs: 4_000 },
  onHandlerError: () => undefined,
  logger: { warn: () => undefined, error: () => undefined },
};

const plain = work(options);
const ordered = work({
  ...options,
  on: {
    'call.missed': async (event) => {
      await step(event.id, 'began');
      await run(event);
      await step(event.id, 'ran');
    },
  },
  ordering: { version: (event) => event.timestamp },
});

/** The message, its ack, retry and wait counted in `settled`. */
function counted(message: QueueMessage, settled: string[]): QueueMessage {
  return {
    id: message.id,
    body: message.body,
    ack: () => {
      settled.push('ack');
      message.ack();
    },
    retry: (options) => {
      settled.push(options?.delaySeconds === undefined ? 'retry' : 'wait');
      message.retry(options);
    },
  };
}

export default {
  async queue(batch: QueueBatch, env: Env, ctx: unknown): Promise<void> {
    const settled: string[] = [];
    const handle = env.ORDERED === 'yes' ? ordered : plain;
    await handle({ queue: batch.queue, messages: batch.messages.map((message) => counted(message, settled)) }, env, ctx);
    if (settled.length === 0) return;
    await env.DB.batch(settled.map((kind) => env.DB.prepare('INSERT INTO settled (kind) VALUES (?)').bind(kind)));
  },
};

/**
 * The Cloudflare tests' deployment, in workerd through miniflare: the
 * receiving Worker (test/helpers/cloudflare/receiver-worker.ts) with a
 * producer binding on the queue `webhooks` and a D1 database, and the
 * consuming Worker (consumer-worker.ts) on the same queue and database, its
 * `work()` plain or with `ordering`. Each
 * is bundled from the sources as the web build is (no `node:` module; no
 * `nodejs_compat`), and sends go to the receiver over workerd's own dispatch.
 */
import { join } from 'node:path';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { webModules } from '../../scripts/web-modules.js';
import type { WebhookEvent } from '../../src/core/event.js';
import { queuedDelivery } from '../../src/queues/queued-delivery.js';
import { D1DedupStore } from '../../src/stores/d1/d1-dedup-store.js';
import type { D1Database } from '../../src/stores/d1/d1-database.js';
import { signedHeaders } from '../../src/testing/index.js';
import { sentAgainOnClosedSocket } from './miniflare-d1.js';
import { keyOf, SECRET } from './signed-request.js';

const ROOT = new URL('../..', import.meta.url).pathname;

/** One Worker bundled from its source file: one ES module with everything in it but workerd's own modules. */
async function bundled(file: string): Promise<string> {
  const result = await build({
    entryPoints: [join(ROOT, 'test/helpers/cloudflare', file)],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    external: ['cloudflare:*'],
    plugins: [webModules(ROOT, join(ROOT, 'src/process/diagnostics-channel.web.ts'), '.ts')],
    logLevel: 'warning',
  });
  return result.outputFiles[0]!.text;
}

/**
 * The tables the test Workers write besides the stores': runs that succeeded, planned failures'
 * attempts, the ordered handler's steps, settled messages.
 */
const TEST_TABLES = [
  'CREATE TABLE runs (id TEXT NOT NULL)',
  'CREATE TABLE attempts (id TEXT PRIMARY KEY, n INTEGER NOT NULL)',
  'CREATE TABLE steps (id TEXT NOT NULL, step TEXT NOT NULL)',
  'CREATE TABLE settled (kind TEXT NOT NULL)',
];

/** What a sent event is about, besides its id: its object (`call_<id>` by default) and the time it happened, its `timestamp`. */
export interface EventFields {
  readonly object?: string;
  readonly timestamp?: string;
}

/** The event `id` of type `call.missed`, as JSON. */
function eventBody(id: string, { object = `call_${id}`, timestamp }: EventFields): string {
  return JSON.stringify({ id, type: 'call.missed', created_at: '2026-01-01T00:00:00Z', ...(timestamp === undefined ? {} : { timestamp }), data: { object: { id: object } } });
}

export interface CloudflareDeployment {
  /** Sends the event `id` signed now, as the service would, to the receiver; answers its status. */
  send(id: string, fields?: EventFields): Promise<number>;
  /** How many times the handler succeeded for each event. */
  runs(): Promise<Map<string, number>>;
  /** The ordered handler's steps, in order: `began:<id>` when a run began, `ran:<id>` when it succeeded. */
  steps(): Promise<string[]>;
  /** How many messages the consumer acked, retried, and retried after a delay (a wait for another run). */
  settled(): Promise<{ ack: number; retry: number; wait: number }>;
  /** Sends `body` straight to the queue, as a program other than `enqueue` might. */
  sendRaw(body: unknown): Promise<void>;
  /** Queues the events as `enqueue` would, in one send, so that the consumer takes them in one batch. */
  queueAtOnce(events: ReadonlyArray<EventFields & { readonly id: string }>): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts both Workers on a fresh, migrated database. `receiverDedup` is the
 * receiver's store: D1, or none (every copy of an event queued); `consumer`
 * the consumer's `work()`: plain, or with `ordering` by the event's `timestamp`.
 */
export async function cloudflareDeployment(receiverDedup: 'd1' | 'none', consumer: 'plain' | 'ordered' = 'plain'): Promise<CloudflareDeployment> {
  const [receiver, consumerScript] = await Promise.all([bundled('receiver-worker.ts'), bundled('consumer-worker.ts')]);
  const shared = { modules: true, compatibilityDate: '2025-07-01', d1Databases: { DB: 'webhooks-db' } } as const;
  const miniflare = new Miniflare({
    workers: [
      { ...shared, name: 'receiver', script: receiver, queueProducers: { WEBHOOKS: 'webhooks' }, bindings: { WEBHOOK_SECRET: SECRET, RECEIVER_DEDUP: receiverDedup } },
      // Retries come back at once, but for a busy event's own delay; enough of them that no message runs out. A failed
      // ordered message comes back after 3 s: beside a waiting one, each 1 s, it would take the object from it at
      // every turn while the failure lasts.
      {
        ...shared,
        name: 'consumer',
        script: consumerScript,
        bindings: { ORDERED: consumer === 'ordered' ? 'yes' : 'no' },
        queueConsumers: { webhooks: { maxBatchSize: 25, maxBatchTimeout: 0, maxRetries: 100, retryDelay: consumer === 'ordered' ? 3 : 0 } },
      },
    ],
  });
  const db = sentAgainOnClosedSocket((await miniflare.getD1Database('DB', 'receiver')) as unknown as D1Database);
  const reader = db as unknown as { prepare(sql: string): { all(): Promise<{ results: unknown[] }> } };
  await new D1DedupStore(db, { table: 'received' }).migrate();
  await new D1DedupStore(db, { table: 'processed' }).migrate();
  await db.batch(TEST_TABLES.map((sql) => db.prepare(sql)));
  const rows = async <T>(sql: string): Promise<T[]> => (await reader.prepare(sql).all()).results as T[];
  return {
    async send(id, fields = {}) {
      const body = eventBody(id, fields);
      const headers = signedHeaders(body, { id, timestamp: Math.floor(Date.now() / 1000), secret: SECRET });
      const response = await miniflare.dispatchFetch('http://receiver.test/webhooks', { method: 'POST', body, headers: { ...headers, 'content-type': 'application/json' } });
      await response.arrayBuffer();
      return response.status;
    },
    async runs() {
      const counted = await rows<{ id: string; n: number }>('SELECT id, COUNT(*) AS n FROM runs GROUP BY id');
      return new Map(counted.map(({ id, n }) => [id, n]));
    },
    async steps() {
      return (await rows<{ id: string; step: string }>('SELECT id, step FROM steps ORDER BY rowid')).map(({ id, step }) => `${step}:${id}`);
    },
    async settled() {
      const counted = await rows<{ kind: 'ack' | 'retry' | 'wait'; n: number }>('SELECT kind, COUNT(*) AS n FROM settled GROUP BY kind');
      const of = (kind: string): number => counted.find((row) => row.kind === kind)?.n ?? 0;
      return { ack: of('ack'), retry: of('retry'), wait: of('wait') };
    },
    async sendRaw(body) {
      const queue = await miniflare.getQueueProducer('WEBHOOKS', 'receiver');
      await queue.send(body, { contentType: 'json' });
    },
    async queueAtOnce(events) {
      const queue = await miniflare.getQueueProducer('WEBHOOKS', 'receiver');
      const timestamp = Math.floor(Date.now() / 1000);
      const messages = events.map(({ id, ...fields }) => {
        const event = JSON.parse(eventBody(id, fields)) as WebhookEvent;
        return { body: queuedDelivery({ event, id, timestamp, keyId: '0', dedupKey: keyOf(id) }), contentType: 'json' as const };
      });
      await queue.sendBatch(messages);
    },
    close: () => miniflare.dispose(),
  };
}

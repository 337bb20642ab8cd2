/** The pairs `npm run bench` times, each entry against its hand-written minimum, and how long it times them. */

export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
export const BLOCKS = 6;
/**
 * Requests per block, for a pair of 35 to 70 µs a request: 35 to 70 ms a block, long enough that a
 * collection falls on both sides alike. Blocks of 200 put the Fetch pair's rounds' quartiles as far apart
 * as 0.85–1.31 in one run; of 1,000, 1.03–1.07. A faster pair's blocks hold more, as long.
 */
export const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1000);
/** The events a dedup store already holds when a round starts, as a receiver's store does after a while. */
export const STORED = Number(process.env.BENCH_STORED ?? 10_000);

/** Each pair: its row's label, the names of its two cases in `entry-pairs.ts`, and how many times `REQUESTS` its blocks hold. */
export const PAIRS = {
  fetch: { label: 'Fetch', minimum: 'Fetch: minimum', ours: 'Fetch: verifyWebhook', scale: 1 },
  lambda: { label: 'Lambda', minimum: 'Lambda: minimum', ours: 'Lambda: verifyWebhook', scale: 6 },
  azure: { label: 'Azure Functions', minimum: 'Azure: minimum', ours: 'Azure: verifyWebhook', scale: 1 },
  hono: { label: 'Hono', minimum: 'Hono: minimum', ours: 'Hono: verifyWebhook', scale: 1 },
  fastify: { label: 'Fastify (inject), dedup by default', minimum: 'Fastify: minimum', ours: 'Fastify: verifyWebhook', scale: 1 },
  express: { label: 'Express (light-my-request), dedup by default', minimum: 'Express: minimum', ours: 'Express: verifyWebhook', scale: 1 },
  h3: { label: 'h3 2 (app.fetch), dedup by default', minimum: 'h3: minimum', ours: 'h3: verifyWebhook', scale: 1 },
  nestjs: { label: 'NestJS on Express (light-my-request), dedup by default', minimum: 'NestJS: minimum', ours: 'NestJS: WebhooksModule', scale: 1 },
  dedup: {
    label: `Fetch + its MemoryDedupStore vs a Map, ${STORED.toLocaleString('en-US')} events stored`,
    minimum: 'Fetch + dedup: minimum with a Map',
    ours: 'Fetch + dedup: verifyWebhook with its MemoryDedupStore',
    scale: 1,
  },
  sqlite: {
    label: `Fetch + a SqliteDedupStore (WAL file) vs its MemoryDedupStore, ${STORED.toLocaleString('en-US')} events stored`,
    minimum: 'Fetch + dedup: verifyWebhook with its MemoryDedupStore',
    ours: 'Fetch + sqlite: verifyWebhook with a SqliteDedupStore',
    scale: 1,
  },
  commits: {
    label: 'Fetch + its MemoryDedupStore and two single-row commits to a WAL file per event vs its MemoryDedupStore',
    minimum: 'Fetch + dedup: verifyWebhook with its MemoryDedupStore',
    ours: 'Fetch + commits: verifyWebhook with its MemoryDedupStore, the handler committing twice',
    scale: 1,
  },
  ordering: {
    label: `Fetch + its MemoryDedupStore with \`ordering\` vs without, ${STORED.toLocaleString('en-US')} events stored`,
    minimum: 'Fetch + dedup: verifyWebhook with its MemoryDedupStore',
    ours: 'Fetch + ordering: verifyWebhook with its MemoryDedupStore and ordering',
    scale: 1,
  },
  on: { label: '`on` vs a lookup by type', minimum: 'on: minimum lookup by type', ours: 'on: verifyWebhook with on', scale: 1 },
} as const;

/** A pair's name, as `entry-pairs.ts` takes it. */
export type PairName = keyof typeof PAIRS;

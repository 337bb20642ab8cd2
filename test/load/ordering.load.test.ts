/**
 * Events of one object in order, under load and a crash: 200 objects of 5
 * events each (each event an id of its own, its version the envelope's
 * `timestamp`), each event delivered as 1 to 3 copies, every copy shuffled
 * into one list and delivered by 16 concurrent senders, each copy retried
 * after a short random delay until it gets a 2xx, a 409 included, as the
 * service does: a retry may come while the first still runs, after it
 * succeeded, or after later events of its object. The receivers and
 * workers write, for each event they apply, the apply and the object's
 * state, whatever state they held, as a handler trusting the order does.
 *
 * Four setups, each with one crash mid-run: (a) Express with `ordering` on
 * a RedisDedupStore, its private Redis killed and restarted from its
 * append-only file; (b) Express whose route applies in its own transaction
 * with markProcessedInOrder, its process killed and restarted; (c) a BullMQ
 * worker with `ordering` on a RedisDedupStore behind an Express `handoff`,
 * the worker process killed and restarted; (d) a pg-boss worker applying
 * with markProcessedInOrder, killed and restarted. Each must leave every
 * object at its highest version, no apply after an apply of a higher
 * version of its object, no event applied twice, and none lost: each
 * applied, or skipped as stale. (c)'s handler writes outside any
 * transaction: a worker killed between its write and the store's complete
 * runs it again, the limit of any side effect outside the store; such a
 * run is counted, and excused only when the killed worker wrote the first.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import type { OrderingOptions } from '../../src/index.js';
import { enqueue as bullmqEnqueue } from '../../src/queues/bullmq/index.js';
import { enqueue as pgBossEnqueue } from '../../src/queues/pg-boss/index.js';
import { migrateProcessedEvents } from '../../src/stores/postgres/index.js';
import { RedisDedupStore } from '../../src/stores/redis/index.js';
import { serveExpressHandlers } from '../helpers/adapter-servers.js';
import { BULLMQ_MAJORS, uniqueQueueName } from '../helpers/bullmq-majors.js';
import { WorkerFleet } from '../helpers/bullmq-worker-fleet.js';
import { freePort } from '../helpers/free-port.js';
import { closeAfterAll, midRun } from '../helpers/load/load-run.js';
import { buildOrderedRun, orderOf, type OrderedRun } from '../helpers/load/ordered-events.js';
import { createLedger, describeVerdict, dropLedger, orderingVerdict, recordApply, type LedgerTables, type OrderingVerdict } from '../helpers/load/ordering-ledger.js';
import { describeAnswers, startSending, type OrderingAnswers } from '../helpers/load/ordering-sender.js';
import { replayableSeed } from '../helpers/load/seeded-random.js';
import { jobsQuery, startTestBoss } from '../helpers/pg-boss-instance.js';
import { pgBossMajor } from '../helpers/pg-boss-majors.js';
import { pgPool, uniqueTable } from '../helpers/postgres-clients.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { connectIoredis, randomPrefix } from '../helpers/redis-clients.js';
import { now, SECRET } from '../helpers/signed-request.js';
import { testDatabase } from '../helpers/test-database.js';
import { until } from '../helpers/until.js';

const OBJECTS = 200;
const VERSIONS = 5;
const SENDER = { workers: 16, answerWindowMs: 10_000, maxDelayMs: 30, giveUpAfterMs: 90_000 };
const ORDERING: OrderingOptions = { version: (event) => event.timestamp };
/** The dedup lease of (a) and (c): longer than the Redis outage, so every settlement pending at the kill lands. */
const LEASE_MS = 3_000;
/** How long (a)'s Redis stays down: longer than the store's command timeout, so claims meanwhile fail. */
const OUTAGE_MS = 500;
/** How long (c) and (d) may take to run their queue out after the last answer. */
const DRAIN_MS = 60_000;
const TEST_MS = 180_000;

const closeAtEnd = closeAfterAll();

/** The run's seed and events, the database, an admin pool on it, and a ledger of tables no other run uses. */
async function startRun(): Promise<{ seed: number; run: OrderedRun; url: string; admin: ReturnType<typeof pgPool>; tables: LedgerTables }> {
  const seed = replayableSeed();
  const run = buildOrderedRun(seed, OBJECTS, VERSIONS);
  const database = await testDatabase();
  closeAtEnd(() => database.close());
  const admin = pgPool(database.url, { max: 2 });
  closeAtEnd(() => admin.end());
  const tables = await createLedger(admin);
  closeAtEnd(() => dropLedger(admin, tables));
  return { seed, run, url: database.url, admin, tables };
}

/** Prints the run's figures as one line, for the closing note and docs/benchmarks.md. */
function report(setup: string, run: OrderedRun, answers: OrderingAnswers, verdict: OrderingVerdict, ms: number, more: string): void {
  console.info(
    `ordering ${setup}: ${run.events.length} events of ${run.objects} objects, ${run.copies.length} copies; ${describeAnswers(answers)}; ` +
      `${describeVerdict(verdict, run)}; ${more}; ${(ms / 1000).toFixed(1)} s`,
  );
}

/** What every setup must hold. */
function expectInOrder(verdict: OrderingVerdict, answers: OrderingAnswers, run: OrderedRun): void {
  expect(verdict.afterHigher).toEqual([]);
  expect(verdict.notAtHighest).toEqual([]);
  expect(verdict.lost).toEqual([]);
  expect(answers.delivered).toBe(run.copies.length);
  // The shuffle sent events after later ones of their object: some were skipped as stale.
  expect(verdict.staleEvents).toBeGreaterThan(0);
}

/** Sends the run to `target`, and calls `crash` once a third of the copies got their 2xx; answers the answers and the time taken. */
async function sendWithCrash(run: OrderedRun, target: string, seed: number, crash: () => Promise<unknown>): Promise<{ answers: OrderingAnswers; ms: number; beforeCrash: number }> {
  const started = performance.now();
  const { answers, done } = startSending(run.copies, target, seed, SENDER);
  await midRun(done, () => answers.delivered >= run.copies.length / 3);
  const beforeCrash = answers.delivered;
  await crash();
  await done;
  return { answers, ms: performance.now() - started, beforeCrash };
}

/** Resolves once `drained()` holds, asked every 250 ms; rejects after DRAIN_MS. */
function untilDrained(drained: () => Promise<boolean>): Promise<void> {
  return until(async () => {
    await new Promise((resolve) => setTimeout(resolve, 250));
    return drained();
  }, DRAIN_MS);
}

describe(`events of one object in order, ${OBJECTS} objects × ${VERSIONS} versions, one crash each`, () => {
  it('(a) Express with ordering on a RedisDedupStore, Redis killed and restarted from its append-only file', async () => {
    const { seed, run, url, admin, tables } = await startRun();
    const redis = await PrivateRedis.start({ appendOnly: true });
    closeAtEnd(() => redis.close());
    // ioredis queues commands while disconnected; the store's command timeout answers them.
    const client = await connectIoredis(redis.url, { retryStrategy: () => 50, maxRetriesPerRequest: null });
    closeAtEnd(() => client.disconnect());
    const pool = pgPool(url, { max: 16 });
    closeAtEnd(() => pool.end());
    const { logger, lines } = recordingLogger();
    const app = await serveExpressHandlers<{}>({
      secret: SECRET,
      now,
      logger,
      dedup: { store: new RedisDedupStore(client, { keyPrefix: randomPrefix(), commandTimeoutMs: 200 }), leaseMs: LEASE_MS },
      ordering: ORDERING,
      on: {
        'message.received': async (event) => {
          const { object, version } = orderOf(event);
          await recordApply(pool, tables, event.id, object, version);
        },
      },
    });
    closeAtEnd(() => app.close());

    const { answers, ms, beforeCrash } = await sendWithCrash(run, `${app.url}/webhooks`, seed, async () => {
      await redis.kill();
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
      await redis.start();
    });
    const verdict = await orderingVerdict(admin, tables, run, answers.staleEvents);
    const storeLines = lines.filter(([, fields]) => fields.code !== 'stale_event').length;
    report('(a) Express + RedisDedupStore, Redis killed', run, answers, verdict, ms, `Redis killed after ${beforeCrash} deliveries, down ${OUTAGE_MS} ms; ${storeLines} store-failure lines`);

    expectInOrder(verdict, answers, run);
    expect(verdict.doubled).toEqual([]);
    // The outage fell mid-run: claims were refused meanwhile.
    expect(beforeCrash).toBeLessThan(run.copies.length);
    expect(answers.count('503')).toBeGreaterThan(0);
  }, TEST_MS);

  it('(b) Express applying in its own transaction with markProcessedInOrder, the receiver process killed and restarted', async () => {
    const { seed, run, url, admin, tables } = await startRun();
    const processed = uniqueTable('ord');
    const versions = `${processed}_versions`;
    await migrateProcessedEvents(admin, { table: processed, versionsTable: versions });
    closeAtEnd(() => admin.query(`DROP TABLE IF EXISTS ${processed}, ${versions}`));
    const port = await freePort();
    const settings = { url, port, processed, versions, ledger: tables };
    const receiver = await WorkerFleet.start([{ ORDERING_SETTINGS: JSON.stringify(settings) }], new URL('../helpers/load/ordered-receiver-process.ts', import.meta.url).pathname);
    closeAtEnd(() => receiver.stop());

    const { answers, ms, beforeCrash } = await sendWithCrash(run, `http://127.0.0.1:${port}/webhooks`, seed, () => receiver.killOne());
    const verdict = await orderingVerdict(admin, tables, run, answers.staleEvents);
    report('(b) Express + markProcessedInOrder, receiver killed', run, answers, verdict, ms, `receiver killed after ${beforeCrash} deliveries; skips ${JSON.stringify(verdict.skips)}`);
    if (verdict.lost.length > 0) console.error(`ordering (b): the receiver's last stderr:\n${receiver.stderr}`);

    expectInOrder(verdict, answers, run);
    expect(verdict.doubled).toEqual([]);
    // Deliveries in flight at the kill went unanswered, and were retried.
    expect(receiver.killed.size).toBe(1);
    expect(answers.count('unanswered')).toBeGreaterThan(0);
  }, TEST_MS);

  it('(c) a BullMQ worker with ordering on a RedisDedupStore behind an Express handoff, the worker killed and restarted', async () => {
    const { seed, run, url, admin, tables } = await startRun();
    const redis = await PrivateRedis.start();
    closeAtEnd(() => redis.close());
    const client = await connectIoredis(redis.url, { retryStrategy: () => 50 });
    closeAtEnd(() => client.disconnect());
    const name = uniqueQueueName('ordering');
    const queue = BULLMQ_MAJORS[0]!.queue(name, redis.url, { retryStrategy: () => 50 });
    queue.on('error', () => {});
    closeAtEnd(() => queue.close());
    const app = await serveExpressHandlers({
      secret: SECRET,
      now,
      dedup: { store: new RedisDedupStore(client, { keyPrefix: 'receivers:' }) },
      handoff: bullmqEnqueue(queue, { job: { attempts: 1_000, backoff: { type: 'fixed', delay: 500 } } }),
    });
    closeAtEnd(() => app.close());
    const settings = { url, redisUrl: redis.url, queue: name, keyPrefix: 'workers:', leaseMs: LEASE_MS, lockMs: 2_000, concurrency: 16, ledger: tables };
    const worker = await WorkerFleet.start([{ ORDERING_SETTINGS: JSON.stringify(settings) }], new URL('../helpers/load/ordered-bullmq-worker.ts', import.meta.url).pathname);
    closeAtEnd(() => worker.stop());

    const { answers, ms: sentMs, beforeCrash } = await sendWithCrash(run, `${app.url}/webhooks`, seed, () => worker.killOne());
    const started = performance.now() - sentMs;
    await untilDrained(async () => {
      const counts = await queue.getJobCounts('completed', 'failed');
      return counts.completed! + counts.failed! >= run.events.length;
    });
    const ms = performance.now() - started;
    const jobs = await queue.getJobs(['completed', 'failed']);
    const results = new Map<string, number>();
    for (const job of jobs) results.set(String(job.returnvalue), (results.get(String(job.returnvalue)) ?? 0) + 1);
    // A job found done ('duplicate') and never applied was skipped as stale by the killed worker, whose result was lost with it.
    const skippedJobs = new Set(jobs.filter((job) => job.returnvalue !== 'processed').map((job) => (job.data as { delivery: { id: string } }).delivery.id));
    const [killedPid] = worker.killed.keys();
    const verdict = await orderingVerdict(admin, tables, run, skippedJobs, killedPid);
    const unexcused = verdict.doubled.filter(({ firstPid }) => firstPid !== killedPid);
    report(
      '(c) BullMQ worker + RedisDedupStore behind an Express handoff, worker killed',
      run,
      answers,
      verdict,
      ms,
      `worker killed after ${beforeCrash} deliveries; ${jobs.length} jobs, results ${JSON.stringify(Object.fromEntries(results))}; ` +
        `${verdict.doubled.length - unexcused.length} applies run again after the kill`,
    );
    if (verdict.lost.length > 0) console.error(`ordering (c): the worker's last stderr:\n${worker.stderr}`);

    expectInOrder(verdict, answers, run);
    expect(unexcused).toEqual([]);
    expect(jobs.length).toBe(run.events.length);
    expect(results.get('processed')! + (results.get('stale') ?? 0) + (results.get('duplicate') ?? 0)).toBe(run.events.length);
    expect(worker.killed.size).toBe(1);
  }, TEST_MS);

  it('(d) a pg-boss worker applying with markProcessedInOrder in its own transaction, the worker killed and restarted', async () => {
    const { seed, run, url, admin, tables } = await startRun();
    const major = pgBossMajor('10');
    // This process's pg-boss runs no handler: it creates the queue and expires the killed worker's jobs every second.
    const testBoss = await startTestBoss(url, { schedule: false, ...major.expiryEverySecond }, major);
    closeAtEnd(() => testBoss.close());
    const queue = uniqueTable('queue');
    await testBoss.boss.createQueue(queue, { retryLimit: 100, retryDelay: 0, expireInSeconds: 5 });
    const queued = uniqueTable('ordq');
    const handled = uniqueTable('ordh');
    const versions = `${handled}_versions`;
    await migrateProcessedEvents(admin, { table: queued });
    await migrateProcessedEvents(admin, { table: handled, versionsTable: versions });
    closeAtEnd(() => admin.query(`DROP TABLE IF EXISTS ${queued}, ${handled}, ${versions}`));
    const pool = pgPool(url, { max: 16, connectionTimeoutMillis: 1_000 });
    closeAtEnd(() => pool.end());
    // The handoff's transaction is the deduplication: no lease store in front.
    const app = await serveExpressHandlers({ secret: SECRET, now, dedup: false, handoff: pgBossEnqueue(testBoss.boss, queue, { pool, table: queued }), onHandlerError: () => {} });
    closeAtEnd(() => app.close());
    const settings = { url, schema: testBoss.schema, queue, batchSize: 16, processed: handled, versions, ledger: tables };
    const worker = await WorkerFleet.start([{ ORDERING_SETTINGS: JSON.stringify(settings) }], new URL('../helpers/load/ordered-pg-boss-worker.ts', import.meta.url).pathname);
    closeAtEnd(() => worker.stop());

    const { answers, ms: sentMs, beforeCrash } = await sendWithCrash(run, `${app.url}/webhooks`, seed, () => worker.killOne());
    const started = performance.now() - sentMs;
    const states = async (): Promise<Record<string, number>> =>
      Object.fromEntries((await admin.query(`SELECT state, count(*)::int AS n FROM (${jobsQuery(major, testBoss.schema, 'state')}) AS jobs GROUP BY state`, [queue])).rows.map(({ state, n }) => [state, n]));
    await untilDrained(async () => {
      const counts = await states();
      return ['created', 'retry', 'active'].every((state) => counts[state] === undefined);
    });
    const ms = performance.now() - started;
    const jobs = await states();
    const verdict = await orderingVerdict(admin, tables, run, new Set());
    report(
      '(d) pg-boss worker + markProcessedInOrder, worker killed',
      run,
      answers,
      verdict,
      ms,
      `worker killed after ${beforeCrash} deliveries; jobs ${JSON.stringify(jobs)}; skips ${JSON.stringify(verdict.skips)}`,
    );
    if (verdict.lost.length > 0) console.error(`ordering (d): the worker's last stderr:\n${worker.stderr}`);

    expectInOrder(verdict, answers, run);
    expect(verdict.doubled).toEqual([]);
    expect(jobs.completed).toBe(run.events.length);
    expect(jobs.failed).toBeUndefined();
    expect(worker.killed.size).toBe(1);
  }, TEST_MS);
});

/**
 * One run of the pg-boss load and crash tests on a database: two receivers
 * (the Fetch entry on Node's HTTP server) whose handoff is `enqueue`, a
 * pg-boss in this process that only expires the jobs of dead workers, and a
 * fleet of worker processes (pg-boss-worker-process.ts). Every connection
 * of an enqueue or a handler transaction is named `applicationName`, so that
 * a test can kill them mid-transaction.
 */
import type { Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import { createAdaptorServer } from '@hono/node-server';
import { verifyWebhook } from '../../adapters/fetch.js';
import { enqueue } from '../../src/queues/pg-boss/enqueue.js';
import { migrateProcessedEvents } from '../../src/stores/postgres/migrate.js';
import { SideEffectLedger } from './load/side-effect-ledger.js';
import { pgPool, uniqueTable } from './postgres-clients.js';
import { serveNode, type ServedApp } from './http-harness.js';
import { jobsQuery, startTestBoss, type TestBoss } from './pg-boss-instance.js';
import type { PgBossMajor } from './pg-boss-majors.js';
import { startWorkerFleet, type WorkerFleet } from './pg-boss-worker-fleet.js';
import { now, SECRET } from './signed-request.js';

export interface PgBossRunOptions {
  /** The pg-boss of the receivers, of this process and of the workers. */
  readonly major: PgBossMajor;
  readonly url: string;
  readonly applicationName: string;
  readonly workers: number;
  readonly batchSize: number;
  readonly handlerMs: number;
  /** pg-boss's expiry of an active job: past it, a dead worker's job is retried. Longer than `handlerMs`. */
  readonly expireInSeconds: number;
}

export interface PgBossRun {
  /** The receivers' webhook URLs. */
  readonly urls: readonly string[];
  /** How long each answer took the receivers, in milliseconds, from the request to the answer. */
  readonly answerMs: number[];
  readonly fleet: WorkerFleet;
  /** The side effects as the database holds them: one process() per side-effect row. */
  rows(): Promise<SideEffectLedger>;
  /** How many times a handler started, for every event together. */
  executions(): Promise<number>;
  /** How many handler runs found their event's effect done already, and wrote nothing. */
  skips(): Promise<number>;
  /** How many jobs each event id has, whatever their state. */
  jobsPerEvent(): Promise<Map<string, number>>;
  /** Waits until no job is waiting or active, for at most `timeoutMs`; answers the count of jobs by state. */
  drained(timeoutMs: number): Promise<Record<string, number>>;
  close(): Promise<void>;
}

/** The connections of the receivers' transactions. */
const RECEIVER_CONNECTIONS = 16;

export async function startPgBossRun(options: PgBossRunOptions): Promise<PgBossRun> {
  const { url, applicationName } = options;
  const admin = pgPool(url, { max: 2 });
  const prefix = uniqueTable('pgboss');
  const tables = {
    processed: `${prefix}_queued`,
    handled: `${prefix}_handled`,
    effects: `${prefix}_effects`,
    skips: `${prefix}_skips`,
    calls: `${prefix}_calls`,
  };
  await migrateProcessedEvents(admin, { table: tables.processed });
  await migrateProcessedEvents(admin, { table: tables.handled });
  for (const table of [tables.effects, tables.skips, tables.calls]) await admin.query(`CREATE TABLE ${table} (event_id text NOT NULL)`);

  // This process's pg-boss expires the jobs of killed workers every second; it runs no handler.
  const testBoss: TestBoss = await startTestBoss(url, { schedule: false, ...options.major.expiryEverySecond }, options.major);
  const { boss, schema } = testBoss;
  const queue = uniqueTable('queue');
  await boss.createQueue(queue, { retryLimit: 100, retryDelay: 0, expireInSeconds: options.expireInSeconds });

  const pool = pgPool(url, { max: RECEIVER_CONNECTIONS, application_name: applicationName, connectionTimeoutMillis: 1000 });
  const answerMs: number[] = [];
  const receivers: ServedApp[] = [];
  for (let index = 0; index < 2; index++) receivers.push(await startReceiver(enqueue(boss, queue, { pool, table: tables.processed }), answerMs));

  const fleet = await startWorkerFleet(options.workers, {
    major: options.major.major,
    url,
    schema,
    queue,
    handled: tables.handled,
    effects: tables.effects,
    skips: tables.skips,
    calls: tables.calls,
    handlerMs: options.handlerMs,
    batchSize: options.batchSize,
    applicationName,
  });

  const countRows = async (table: string): Promise<number> => (await admin.query(`SELECT count(*)::int AS count FROM ${table}`)).rows[0].count;
  const jobs = jobsQuery(options.major, schema, `data->'delivery'->>'id' AS id, state`);
  return {
    urls: receivers.map((receiver) => `${receiver.url}/webhooks`),
    answerMs,
    fleet,
    async rows() {
      const rows = new SideEffectLedger();
      for (const { event_id } of (await admin.query(`SELECT event_id FROM ${tables.effects}`)).rows) rows.process(event_id);
      return rows;
    },
    executions: () => countRows(tables.calls),
    skips: () => countRows(tables.skips),
    async jobsPerEvent() {
      const { rows } = await admin.query(`SELECT id, count(*)::int AS count FROM (${jobs}) AS jobs GROUP BY id`, [queue]);
      return new Map(rows.map(({ id, count }: { id: string; count: number }) => [id, count]));
    },
    async drained(timeoutMs) {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const { rows } = await admin.query(`SELECT state, count(*)::int AS count FROM (${jobs}) AS jobs GROUP BY state`, [queue]);
        const states: Record<string, number> = Object.fromEntries(rows.map(({ state, count }: { state: string; count: number }) => [state, count]));
        if (['created', 'retry', 'active'].every((state) => states[state] === undefined)) return states;
        if (performance.now() > deadline) throw new Error(`the queue did not drain in ${timeoutMs} ms: ${JSON.stringify(states)}`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    },
    async close() {
      await fleet.close();
      for (const receiver of receivers) await receiver.close();
      await pool.end();
      await testBoss.close();
      await admin.query(`DROP TABLE IF EXISTS ${Object.values(tables).join(', ')}`).catch(() => {});
      await admin.end();
    },
  };
}

/**
 * A receiver on the Fetch entry that times each answer. The shared sender
 * (test/helpers/load/retrying-sender.ts) knows 204 and the duplicate's 200 as a
 * delivery's 2xx: the handoff's 202 reaches it as 204, its same meaning there.
 */
async function startReceiver(handoff: ReturnType<typeof enqueue>, answerMs: number[]): Promise<ServedApp> {
  // A failed handoff is answered 503 and retried by the sender, which counts it.
  const webhook = verifyWebhook({ secret: SECRET, now, dedup: false, handoff, onHandlerError: () => {} });
  const server = createAdaptorServer({
    fetch: async (request: Request) => {
      const started = performance.now();
      const answer = await webhook(request);
      answerMs.push(performance.now() - started);
      return answer.status === 202 ? new Response(null, { status: 204 }) : answer;
    },
  });
  return serveNode(server as Server);
}


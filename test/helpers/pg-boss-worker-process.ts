/**
 * A worker process of the pg-boss load and crash tests, to be killed with
 * SIGKILL: `node --import tsx pg-boss-worker-process.ts <json settings>`.
 * It runs `work()` on the queue; its handler records every execution in the
 * calls table (on its own, outside any transaction, so that an execution
 * cut off later still counts), then works for `handlerMs` with its side
 * effect halfway: in one transaction it records the event's key with
 * markProcessed and, the first time only, writes the side-effect row (a
 * later run writes a row of the skips table instead). A
 * worker killed in the second half leaves the effect committed and the job
 * active, so the job's next run finds the record: without it, the effect
 * would double. It prints `working` once its worker polls, and for each
 * handler `committed` once its effect has committed and `finished` as it
 * ends.
 */
import pg from 'pg';
import { work } from '../../src/queues/pg-boss/work.js';
import { inTransaction } from '../../src/queues/pg-boss/transaction.js';
import { markProcessed } from '../../src/stores/postgres/mark-processed.js';
import { pgBossMajor } from './pg-boss-majors.js';

/** What the test hands the process. */
export interface WorkerSettings {
  /** The pg-boss major to run (`'10'`, `'11'`, `'12'`). */
  readonly major: string;
  readonly url: string;
  readonly schema: string;
  readonly queue: string;
  /** markProcessed's table for the side effects: not the receivers' one, which holds every queued key. */
  readonly handled: string;
  readonly effects: string;
  /** One row per run that found the effect done, written in its transaction. */
  readonly skips: string;
  readonly calls: string;
  readonly handlerMs: number;
  readonly batchSize: number;
  /** The application_name of the handler's transactions, for the test's backend killer. */
  readonly applicationName: string;
}

const settings = JSON.parse(process.argv[2]!) as WorkerSettings;
const pool = new pg.Pool({ connectionString: settings.url, max: 8, application_name: settings.applicationName, connectionTimeoutMillis: 2000 });
// An idle client the server ended must not take the process down; a query on it fails and is retried by the job.
pool.on('error', () => {});
const boss = await pgBossMajor(settings.major).create({ connectionString: settings.url, schema: settings.schema, max: 4, supervise: false, schedule: false, migrate: false });
boss.on('error', () => {});
await boss.start();
await work(boss, settings.queue, {
  // Every failure is already retried by pg-boss; the test counts outcomes in the database.
  onHandlerError: () => {},
  on: {
    'message.received': async (_event, delivery) => {
      // One endpoint: the id names the event in the tables the test counts; the dedup key records it.
      const key = delivery.id;
      await pool.query(`INSERT INTO ${settings.calls} (event_id) VALUES ($1)`, [key]);
      await slowWork(settings.handlerMs / 2);
      await inTransaction(pool, async (client) => {
        const first = await markProcessed(client, delivery.dedupKey, { table: settings.handled });
        await client.query(`INSERT INTO ${first ? settings.effects : settings.skips} (event_id) VALUES ($1)`, [key]);
        return { commit: true, value: undefined };
        // A bound far above any transaction of the run: one that passes it fails its job, which pg-boss retries.
      }, 60_000);
      // The fleet kills only workers that hold a committed effect: their jobs' next runs must find it.
      console.log('committed');
      await slowWork(settings.handlerMs / 2);
      console.log('finished');
    },
  },
  worker: { batchSize: settings.batchSize, pollingIntervalSeconds: 0.5 },
});
console.log('working');

function slowWork(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

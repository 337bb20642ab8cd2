/**
 * The pg-boss worker of the ordering run, in a process of its own to be
 * SIGKILLed mid-run: `work` on pg-boss 10 (it has no dedup store), its
 * handler applying each event in its own transaction with
 * markProcessedInOrder (apply-in-order.ts). Configured by
 * `ORDERING_SETTINGS` (JSON); prints `ready` once it polls.
 */
import { work } from '../../../src/queues/pg-boss/work.js';
import { pgBossMajor } from '../pg-boss-majors.js';
import { pgPool } from '../postgres-clients.js';
import { applyInOrder, type InOrderTables } from './apply-in-order.js';

const settings = JSON.parse(process.env.ORDERING_SETTINGS!) as InOrderTables & {
  readonly url: string;
  readonly schema: string;
  readonly queue: string;
  readonly batchSize: number;
};
const pool = pgPool(settings.url, { max: settings.batchSize, connectionTimeoutMillis: 2_000 });
const boss = await pgBossMajor('10').create({ connectionString: settings.url, schema: settings.schema, max: 4, supervise: false, schedule: false, migrate: false });
boss.on('error', () => {});
await boss.start();
await work(boss, settings.queue, {
  // pg-boss retries every failure; the run reads the outcomes from the ledger.
  onHandlerError: () => {},
  on: { 'message.received': async (_event, delivery) => void (await applyInOrder(pool, settings, delivery)) },
  worker: { batchSize: settings.batchSize, pollingIntervalSeconds: 0.5 },
});
console.log('ready');

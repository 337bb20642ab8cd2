/**
 * `npm run bench:postgres`: what markProcessed adds to a delivery's
 * transaction. For pg and for postgres.js, the same transaction (BEGIN, one
 * side-effect INSERT, COMMIT) runs with and without markProcessed before the
 * INSERT, one delivery after another on one connection, a new event id each
 * time. The two transactions alternate delivery by delivery so that both see
 * the same machine; each figure is the median of the rounds. Runs on DATABASE_URL
 * (default postgres://postgres@127.0.0.1:5432/test), on tables of its own.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import postgres from 'postgres';
import { markProcessed, migrateProcessedEvents, type PostgresConnection } from '../src/stores/postgres/index.js';
import { benchPool, DATABASE_URL, uniqueName } from './servers.js';

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const PAYLOAD = randomBytes(256).toString('base64');

/** Runs one delivery's transaction; `record` decides whether markProcessed is in it. */
type Delivery = (id: string, record: boolean) => Promise<void>;

interface Client {
  readonly name: string;
  readonly deliver: Delivery;
}

const admin = benchPool(1);
const table = uniqueName('processed');
const effects = `${table}_effects`;
const pool = benchPool(1);
const sql = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });

/** The transaction's body, the same for both clients. */
async function body(db: PostgresConnection, insert: (id: string) => Promise<unknown>, id: string, record: boolean): Promise<void> {
  if (record && !(await markProcessed(db, id, { table }))) throw new Error(`${id} was already processed`);
  await insert(id);
}

function pgClient(client: pg.PoolClient): Client {
  return {
    name: 'pg',
    async deliver(id, record) {
      await client.query('BEGIN');
      await body(client, (eventId) => client.query(`INSERT INTO ${effects} (event_id, payload) VALUES ($1, $2)`, [eventId, PAYLOAD]), id, record);
      await client.query('COMMIT');
    },
  };
}

function postgresJsClient(sql: postgres.Sql): Client {
  return {
    name: 'postgres.js',
    async deliver(id, record) {
      await sql.begin((tx) => body(tx, (eventId) => tx`INSERT INTO ${tx(effects)} (event_id, payload) VALUES (${eventId}, ${PAYLOAD})`, id, record));
    },
  };
}

/**
 * Microseconds per delivery without and with markProcessed, over `DELIVERIES`
 * pairs: the two alternate delivery by delivery, so that a load change on the
 * machine hits both alike.
 */
async function measurePairs(client: Client, round: number): Promise<{ without: number; with: number }> {
  const totals = { without: 0, with: 0 };
  for (let i = 0; i < DELIVERIES; i++) {
    for (const record of [false, true]) {
      const started = performance.now();
      await client.deliver(`evt_${client.name}_${round}_${i}_${record}`, record);
      totals[record ? 'with' : 'without'] += performance.now() - started;
    }
  }
  return { without: (totals.without * 1000) / DELIVERIES, with: (totals.with * 1000) / DELIVERIES };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const pgConnection = await pool.connect();
try {
  await migrateProcessedEvents(admin, { table });
  await admin.query(`CREATE TABLE ${effects} (event_id text NOT NULL, payload text NOT NULL)`);
  const clients = [pgClient(pgConnection), postgresJsClient(sql)];
  const samples = new Map(clients.map((client) => [client.name, { without: [] as number[], with: [] as number[] }]));
  // Round -1 warms up connections, statement caches and the JIT, and is not kept.
  for (let round = -1; round < ROUNDS; round++) {
    for (const client of clients) {
      const pair = await measurePairs(client, round);
      if (round < 0) continue;
      samples.get(client.name)!.without.push(pair.without);
      samples.get(client.name)!.with.push(pair.with);
    }
  }
  console.log(`${DELIVERIES} deliveries of each transaction per round, alternating, median of ${ROUNDS} rounds, one connection per client\n`);
  console.log('| client | transaction | µs per delivery | added by markProcessed | ratio |');
  console.log('|---|---|---:|---:|---:|');
  for (const client of clients) {
    const without = median(samples.get(client.name)!.without);
    const withRecord = median(samples.get(client.name)!.with);
    const added = withRecord - without;
    console.log(`| ${client.name} | BEGIN, INSERT, COMMIT | ${without.toFixed(0)} | | 1.00× |`);
    console.log(
      `| ${client.name} | BEGIN, markProcessed, INSERT, COMMIT | ${withRecord.toFixed(0)} | ${added < 0 ? '−' : '+'}${Math.abs(added).toFixed(0)} µs | ${(withRecord / without).toFixed(2)}× |`,
    );
  }
} finally {
  pgConnection.release();
  await admin.query(`DROP TABLE IF EXISTS ${table}, ${effects}`);
  await Promise.all([admin.end(), pool.end(), sql.end()]);
}

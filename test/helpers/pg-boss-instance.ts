/**
 * pg-boss for the tests: an instance of the given major on a schema no
 * other run uses, on the given database, its errors collected instead of
 * thrown (pg-boss emits 'error' and an EventEmitter without a listener would
 * throw it), and its schema dropped when it stops.
 */
import { pgPool, uniqueTable } from './postgres-clients.js';
import { pgBossMajor, type PgBossMajor, type TestPgBoss } from './pg-boss-majors.js';

export interface TestBoss {
  readonly boss: TestPgBoss;
  /** The schema pg-boss keeps its tables in. */
  readonly schema: string;
  /** What pg-boss emitted as 'error'. */
  readonly errors: unknown[];
  /** Stops pg-boss without waiting for its workers, and drops its schema. */
  close(): Promise<void>;
}

/** A started pg-boss of `major` (by default 10, which every Node of the package runs) on `url` in a fresh schema; `options` go to its constructor. */
export async function startTestBoss(url: string, options: Record<string, unknown> = {}, major: PgBossMajor = pgBossMajor('10')): Promise<TestBoss> {
  const schema = uniqueTable('boss');
  const boss = await major.create({ connectionString: url, schema, max: 4, ...options });
  const errors: unknown[] = [];
  boss.on('error', (error) => errors.push(error));
  await boss.start();
  return {
    boss,
    schema,
    errors,
    async close() {
      await boss.stop({ graceful: false, wait: true, timeout: 1000 });
      const admin = pgPool(url, { max: 1 });
      try {
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** A query of `columns` of every job of the queue `$1` in pg-boss's tables, finished ones too, whichever table `major` keeps them in. */
export function jobsQuery(major: PgBossMajor, schema: string, columns: string): string {
  return major.jobTables.map((table) => `SELECT ${columns} FROM ${schema}.${table} WHERE name = $1`).join(' UNION ALL ');
}

/** The data of every job of `queue` in pg-boss's tables, finished ones too, oldest first. */
export async function jobsOf(
  major: PgBossMajor,
  boss: TestPgBoss,
  schema: string,
  queue: string,
): Promise<Array<{ id: string; state: string; data: unknown; output: unknown }>> {
  const { rows } = await boss.getDb().executeSql(`${jobsQuery(major, schema, 'id, state, data, output, created_on')} ORDER BY created_on`, [queue]);
  return rows.map(({ id, state, data, output }) => ({ id, state, data, output }));
}

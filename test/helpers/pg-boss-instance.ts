/**
 * pg-boss for the tests: an instance on a schema no other run uses, on the
 * given database, its errors collected instead of thrown (pg-boss emits
 * 'error' and an EventEmitter without a listener would throw it), and its
 * schema dropped when it stops.
 */
import PgBoss from 'pg-boss';
import { pgPool, uniqueTable } from '../postgres/clients.js';

export interface TestBoss {
  readonly boss: PgBoss;
  /** The schema pg-boss keeps its tables in. */
  readonly schema: string;
  /** What pg-boss emitted as 'error'. */
  readonly errors: unknown[];
  /** Stops pg-boss without waiting for its workers, and drops its schema. */
  close(): Promise<void>;
}

/** A started pg-boss on `url` in a fresh schema; `options` go to its constructor. */
export async function startTestBoss(url: string, options: Partial<PgBoss.ConstructorOptions> = {}): Promise<TestBoss> {
  const schema = uniqueTable('boss');
  const boss = new PgBoss({ connectionString: url, schema, max: 4, ...options });
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

/** The data of every job of `queue` in pg-boss's tables, archived ones too, oldest first. */
export async function jobsOf(boss: PgBoss, schema: string, queue: string): Promise<Array<{ id: string; state: string; data: unknown; output: unknown }>> {
  const { rows } = await boss.getDb().executeSql(
    `SELECT id, state, data, output, created_on FROM ${schema}.job WHERE name = $1
     UNION ALL SELECT id, state, data, output, created_on FROM ${schema}.archive WHERE name = $1 ORDER BY created_on`,
    [queue],
  );
  return rows.map(({ id, state, data, output }) => ({ id, state, data, output }));
}

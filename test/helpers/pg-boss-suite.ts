/**
 * The shared set-up of a pg-boss suite on one major: a Postgres suite, a
 * processed-events table for enqueue, and a started pg-boss in a schema of
 * its own that runs no maintenance, all made before the suite and dropped
 * after it.
 */
import type pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { migrateProcessedEvents } from '../../src/stores/postgres/migrate.js';
import { postgresSuite } from './postgres-suite.js';
import { jobsOf, startTestBoss, type TestBoss } from './pg-boss-instance.js';
import type { PgBossMajor, TestPgBoss } from './pg-boss-majors.js';

export interface PgBossSuite {
  readonly major: PgBossMajor;
  /** The test database's URL, for pools of a test's own. */
  readonly url: string;
  readonly pool: pg.Pool;
  readonly boss: TestPgBoss;
  /** The schema pg-boss keeps its tables in. */
  readonly schema: string;
  /** The processed-events table for enqueue. */
  readonly table: string;
  /** Every job of `queue`, finished ones too, oldest first. */
  jobs(queue: string): ReturnType<typeof jobsOf>;
}

export function pgBossSuite(major: PgBossMajor): PgBossSuite {
  const postgres = postgresSuite();
  let testBoss: TestBoss | undefined;
  let table: string | undefined;
  beforeAll(async () => {
    table = postgres.table('processed');
    await migrateProcessedEvents(postgres.pool, { table });
    testBoss = await startTestBoss(postgres.url, { supervise: false, schedule: false }, major);
  }, 60_000);
  // Hooks after the suite run last first: pg-boss stops before the Postgres suite closes its pool.
  afterAll(async () => {
    await testBoss?.close();
  });
  const started = (): TestBoss => {
    if (testBoss === undefined) throw new Error('pg-boss is not started yet');
    return testBoss;
  };
  return {
    major,
    get url() {
      return postgres.url;
    },
    get pool() {
      return postgres.pool;
    },
    get boss() {
      return started().boss;
    },
    get schema() {
      return started().schema;
    },
    get table() {
      started();
      return table!;
    },
    jobs: (queue) => jobsOf(major, started().boss, started().schema, queue),
  };
}

/**
 * The README's query-function snippets for Drizzle and Kysely, run as written
 * against a real database: a side effect and markProcessed in one ORM
 * transaction, processed once, and rolled back together.
 */
import { sql as drizzleSql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { markProcessed } from '../../../src/stores/postgres/mark-processed.js';
import { migrateProcessedEvents } from '../../../src/stores/postgres/migrate.js';
import { postgresSuite } from '../../helpers/postgres-suite.js';

const suite = postgresSuite();
const table = suite.table('processed');
const effects = suite.table('effects');

beforeAll(async () => {
  await migrateProcessedEvents(suite.pool, { table });
  await suite.pool.query(`CREATE TABLE ${effects} (event_id text NOT NULL)`);
});

/** Delivers each event twice and once more with a failure before commit; each must leave one row. */
async function expectOncePerEvent(deliver: (id: string, fail: boolean) => Promise<boolean>, prefix: string): Promise<void> {
  await expect(deliver(`${prefix}_1`, true)).rejects.toThrow('the handler failed');
  expect(await deliver(`${prefix}_1`, false)).toBe(true);
  expect(await deliver(`${prefix}_1`, false)).toBe(false);
  const { rows } = await suite.pool.query(`SELECT count(*)::int AS n FROM ${effects} WHERE event_id = $1`, [`${prefix}_1`]);
  expect(rows[0].n).toBe(1);
}

describe('markProcessed with an ORM transaction', () => {
  it('Drizzle (node-postgres)', async () => {
    const db = drizzle(suite.pool);
    await expectOncePerEvent(
      (id, fail) =>
        db.transaction(async (tx) => {
          // Each placeholder appears once, in order: put the parameters between the pieces.
          const query = (text: string, params: string[]) => {
            const [head = '', ...tail] = text.split(/\$\d+/);
            return tx.execute(drizzleSql.join([drizzleSql.raw(head), ...tail.flatMap((piece, i) => [drizzleSql.param(params[i]), drizzleSql.raw(piece)])]));
          };
          const first = await markProcessed(query, id, { table });
          if (first) await tx.execute(drizzleSql`INSERT INTO ${drizzleSql.identifier(effects)} (event_id) VALUES (${id})`);
          if (fail) throw new Error('the handler failed');
          return first;
        }),
      'evt_drizzle',
    );
  });

  it('Kysely', async () => {
    const db = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool: suite.pool }) });
    await expectOncePerEvent(
      (id, fail) =>
        db.transaction().execute(async (trx) => {
          const query = (text: string, params: string[]) => trx.executeQuery(CompiledQuery.raw(text, params));
          const first = await markProcessed(query, id, { table });
          if (first) await trx.executeQuery(CompiledQuery.raw(`INSERT INTO ${effects} (event_id) VALUES ($1)`, [id]));
          if (fail) throw new Error('the handler failed');
          return first;
        }),
      'evt_kysely',
    );
  });
});

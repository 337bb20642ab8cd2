/**
 * The clients the Postgres entry speaks to, told apart by their shape: every
 * kind runs a statement with its parameters, anything else is refused with a
 * message naming the caller, and only a pool counts as one.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { isPool, statementRunner, type PostgresConnection } from '../../../src/stores/postgres/connection.js';
import { postgresSuite } from '../../helpers/postgres-suite.js';
import { WebhookOptionsError } from '../../../src/base/options-error.js';

const suite = postgresSuite();
const ECHO = 'SELECT $1::text AS first, $2::int AS second';

/** A pg Client of its own, connected for `work` and ended after it. */
async function withPgClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: suite.url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

describe('statementRunner', () => {
  it('runs a statement with its parameters on every kind of client, and resolves to its rows', async () => {
    const echo = (db: PostgresConnection) => statementRunner(db, 'test')(ECHO, ['a', '2']);
    const expected = [{ first: 'a', second: 2 }];
    expect(await echo(suite.pool)).toEqual(expected);
    expect(await echo(suite.sql)).toEqual(expected);
    expect(await withPgClient((client) => echo(client))).toEqual(expected);
    const poolClient = await suite.pool.connect();
    try {
      expect(await echo(poolClient)).toEqual(expected);
    } finally {
      poolClient.release();
    }
    expect(await suite.sql.begin((tx) => echo(tx))).toEqual(expected);
    const reserved = await suite.sql.reserve();
    try {
      expect(await echo(reserved)).toEqual(expected);
    } finally {
      reserved.release();
    }
    expect(await echo((text, params) => suite.pool.query(text, params))).toEqual(expected);
    expect(await echo(async (text, params) => (await suite.pool.query(text, params)).rows)).toEqual(expected);
  });

  it('reads a client by the method it really has, not by a property of that name', async () => {
    // An unsafe that is no function does not make a postgres.js sql; the query beside it runs.
    const withQuery = { unsafe: 'not a function', query: (text: string, params: string[]) => suite.pool.query(text, params) };
    expect(await statementRunner(withQuery as unknown as PostgresConnection, 'test')(ECHO, ['b', '3'])).toEqual([{ first: 'b', second: 3 }]);
    // Nor a query that is no function a pg client: a function carrying one is still called as the function.
    const fn = Object.assign((text: string, params: string[]) => suite.pool.query(text, params), { query: 5 });
    expect(await statementRunner(fn as unknown as PostgresConnection, 'test')(ECHO, ['c', '4'])).toEqual([{ first: 'c', second: 4 }]);
  });

  it('throws a WebhookOptionsError naming the caller for anything that is no client', () => {
    const message =
      'svc-webhooks: purgeProcessed needs a pg client or pool, a postgres.js sql, or a (text, params) => Promise<{ rows }> function';
    for (const bad of [null, undefined, {}, 'postgres://127.0.0.1/test', 5, { query: 'SELECT 1' }, { unsafe: true }]) {
      expect(() => statementRunner(bad as unknown as PostgresConnection, 'purgeProcessed')).toThrow(new WebhookOptionsError(message));
    }
  });

  it('rejects with a WebhookOptionsError naming the caller when the connection answers neither { rows } nor rows', async () => {
    const message = 'svc-webhooks: migrate: the connection answered neither { rows } nor an array of rows';
    for (const answer of [null, undefined, 5, 'rows', {}, { rows: 'not rows' }, { rowCount: 1 }]) {
      const run = statementRunner(async () => answer as never, 'migrate');
      await expect(run('SELECT 1', [])).rejects.toThrow(new WebhookOptionsError(message));
    }
  });

  it('hands the rows on as the client gave them, an empty array included', async () => {
    const rows = [{ count: 1 }, null];
    expect(await statementRunner(async () => rows as never, 'test')('SELECT 1', [])).toBe(rows);
    expect(await statementRunner(async () => ({ rows }) as never, 'test')('SELECT 1', [])).toBe(rows);
    expect(await statementRunner(async () => ({ rows: [] }), 'test')('SELECT 1', [])).toEqual([]);
  });
});

describe('isPool', () => {
  it('is true for a pg Pool and a postgres.js top-level sql, whose statements each take a connection of their own', () => {
    expect(isPool(suite.pool)).toBe(true);
    expect(isPool(suite.sql)).toBe(true);
  });

  it('is false for a pg Client or PoolClient, a postgres.js transaction or reserved sql, and a function', async () => {
    expect(isPool(new pg.Client({ connectionString: suite.url }))).toBe(false);
    const poolClient = await suite.pool.connect();
    try {
      expect(isPool(poolClient)).toBe(false);
    } finally {
      poolClient.release();
    }
    expect(await suite.sql.begin(async (tx) => isPool(tx))).toBe(false);
    const reserved = await suite.sql.reserve();
    try {
      expect(isPool(reserved)).toBe(false);
    } finally {
      reserved.release();
    }
    expect(isPool(async () => ({ rows: [] }))).toBe(false);
  });

  it('needs a connect that is a function and an idleCount both, or a begin that is a function', () => {
    const query = async () => ({ rows: [] });
    const shaped = (shape: object) => isPool({ query, ...shape } as PostgresConnection);
    expect(shaped({ connect() {}, idleCount: 0 })).toBe(true);
    expect(shaped({ connect() {} })).toBe(false);
    expect(shaped({ connect: 'no', idleCount: 0 })).toBe(false);
    expect(shaped({ idleCount: 0 })).toBe(false);
    expect(shaped({ begin() {} })).toBe(true);
    expect(shaped({ begin: 'no' })).toBe(false);
  });
});

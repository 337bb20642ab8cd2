/**
 * inTransaction on a real pg Pool of one connection: what commits, what
 * rolls back, and what becomes of the client: given back after a failed
 * work, destroyed after its connection broke.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../../src/queues/pg-boss/transaction.js';
import { pgPool } from '../../postgres/clients.js';
import { postgresSuite } from '../../postgres/postgres-suite.js';

const suite = postgresSuite();
let single: pg.Pool;

beforeAll(() => {
  single = pgPool(suite.url, { max: 1 });
});

afterAll(async () => {
  await single?.end();
});

async function rowsOf(table: string): Promise<string[]> {
  return (await suite.pool.query(`SELECT value FROM ${table} ORDER BY value`)).rows.map((row: { value: string }) => row.value);
}

async function newTable(): Promise<string> {
  const table = suite.table('transaction');
  await suite.pool.query(`CREATE TABLE ${table} (value text NOT NULL)`);
  return table;
}

/** The backend of the pool's one connection, and whether a transaction is open on it. */
async function connection(): Promise<{ pid: number; inTransaction: boolean }> {
  const { rows } = await single.query('SELECT pg_backend_pid() AS pid, now() <> statement_timestamp() AS in_transaction');
  return { pid: rows[0].pid, inTransaction: rows[0].in_transaction };
}

describe('inTransaction', () => {
  it("commits the work when it says so, rolls it back when it says not, and resolves to the work's value either way", async () => {
    const table = await newTable();
    const write = (value: string, commit: boolean) =>
      inTransaction(single, async (client) => {
        await client.query(`INSERT INTO ${table} (value) VALUES ($1)`, [value]);
        return { commit, value };
      });
    expect(await write('kept', true)).toBe('kept');
    expect(await write('dropped', false)).toBe('dropped');
    expect(await rowsOf(table)).toEqual(['kept']);
  });

  it('rolls back and rethrows what the work threw, and gives the client back with no transaction open', async () => {
    const table = await newTable();
    const before = await connection();
    const failure = new Error('the work failed');
    await expect(
      inTransaction(single, async (client) => {
        await client.query(`INSERT INTO ${table} (value) VALUES ($1)`, ['written']);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await rowsOf(table)).toEqual([]);
    expect(await connection()).toEqual({ pid: before.pid, inTransaction: false });
  });

  it('destroys a client whose connection the server ended, instead of giving it back, and the next transaction runs', async () => {
    const table = await newTable();
    const before = await connection();
    await expect(
      inTransaction(single, async (client) => {
        await client.query('SELECT pg_terminate_backend(pg_backend_pid())');
        return { commit: true, value: undefined };
      }),
    ).rejects.toThrow();
    expect((await connection()).pid).not.toBe(before.pid);
    expect(
      await inTransaction(single, async (client) => {
        await client.query(`INSERT INTO ${table} (value) VALUES ($1)`, ['after']);
        return { commit: true, value: 'ran' };
      }),
    ).toBe('ran');
    expect(await rowsOf(table)).toEqual(['after']);
  });
});

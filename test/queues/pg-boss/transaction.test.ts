/**
 * inTransaction on a real pg Pool of one connection: what commits, what
 * rolls back, and what becomes of the client: given back after a failed
 * work, destroyed after its connection broke or its deadline passed.
 */
import type pg from 'pg';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { inTransaction, type PgPool, type PgPoolClient } from '../../../src/queues/pg-boss/transaction.js';
import { pgPool } from '../../helpers/postgres-clients.js';
import { postgresSuite } from '../../helpers/postgres-suite.js';

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

/** `pool`, with what is sent on each client it gives and what each is released with written down. */
function watched(pool: pg.Pool): { pool: PgPool; sent: string[]; releases: unknown[] } {
  const sent: string[] = [];
  const releases: unknown[] = [];
  return {
    sent,
    releases,
    pool: {
      async connect() {
        const client = await pool.connect();
        return Object.assign(Object.create(client) as PgPoolClient, {
          query: (text: string, values?: unknown[]) => {
            sent.push(text.split(' ')[0]!);
            return client.query(text, values);
          },
          release: (error?: Error | boolean) => {
            releases.push(error);
            client.release(error);
          },
        });
      },
    },
  };
}

describe('inTransaction', () => {
  it("commits the work when it says so, rolls it back when it says not, and resolves to the work's value either way", async () => {
    const table = await newTable();
    const write = (value: string, commit: boolean) =>
      inTransaction(single, async (client) => {
        await client.query(`INSERT INTO ${table} (value) VALUES ($1)`, [value]);
        return { commit, value };
      }, 5_000);
    expect(await write('kept', true)).toBe('kept');
    expect(await write('dropped', false)).toBe('dropped');
    // Rolled back on the connection: the next transaction on it does not commit what was dropped.
    expect((await connection()).inTransaction).toBe(false);
    expect(await write('kept again', true)).toBe('kept again');
    expect(await rowsOf(table)).toEqual(['kept', 'kept again']);
  });

  it('rolls back and rethrows what the work threw, and gives the client back with no transaction open', async () => {
    const table = await newTable();
    const before = await connection();
    const failure = new Error('the work failed');
    await expect(
      inTransaction(single, async (client) => {
        await client.query(`INSERT INTO ${table} (value) VALUES ($1)`, ['written']);
        throw failure;
      }, 5_000),
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
      }, 5_000),
    ).rejects.toThrow();
    expect((await connection()).pid).not.toBe(before.pid);
    expect(
      await inTransaction(single, async (client) => {
        await client.query(`INSERT INTO ${table} (value) VALUES ($1)`, ['after']);
        return { commit: true, value: 'ran' };
      }, 5_000),
    ).toBe('ran');
    expect(await rowsOf(table)).toEqual(['after']);
  });

  it('after its deadline sends no COMMIT and destroys the client at once: work that ends late is never committed', async () => {
    const table = await newTable();
    const before = await connection();
    // The pool's one client, with what is sent on it and how it is released written down.
    const { pool, sent, releases } = watched(single);
    let finish!: () => void;
    let workDone!: Promise<unknown>;
    const late = inTransaction(
      pool,
      (client) =>
        (workDone = (async () => {
          await client.query(`INSERT INTO ${table} (value) VALUES ($1)`, ['late']);
          await new Promise<void>((resolve) => (finish = resolve));
          return { commit: true, value: 'late' };
        })()),
      300,
    );
    await expect(late).rejects.toThrow(
      new Error('svc-webhooks: the transaction did not end within 300 ms; it was not committed, and its connection was closed'),
    );
    expect(releases).toEqual([new Error('svc-webhooks: the transaction passed its deadline')]);
    finish();
    await workDone;
    // A COMMIT, had it been sent, would have been by now: it follows the work's end without waiting for anything.
    await nextTurn();
    expect(sent).toEqual(['BEGIN', 'INSERT']);
    expect(releases).toHaveLength(1);
    expect(await rowsOf(table)).toEqual([]);
    expect((await connection()).pid).not.toBe(before.pid);
  });

  it('gives a client that comes after the deadline back to the pool untouched, and runs no work on it', async () => {
    const held = await single.connect();
    const { rows } = await held.query('SELECT pg_backend_pid() AS pid');
    let ran = false;
    const waiting = inTransaction(
      single,
      async () => {
        ran = true;
        return { commit: true, value: undefined };
      },
      200,
    );
    await expect(waiting).rejects.toThrow(new Error('svc-webhooks: the pool gave no client within 200 ms'));
    held.release();
    // The pool serves its waiters in turn: the late one has had the client and given it back by then.
    expect(await connection()).toEqual({ pid: rows[0].pid, inTransaction: false });
    expect(ran).toBe(false);
  });

  it('destroys a client whose connection broke between statements with the failure the connection gave, sending no ROLLBACK on it', async () => {
    const table = await newTable();
    const { pool, sent, releases } = watched(single);
    const emitted: Error[] = [];
    await expect(
      inTransaction(pool, async (client) => {
        await client.query(`INSERT INTO ${table} (value) VALUES ($1)`, ['lost']);
        const { rows } = await client.query('SELECT pg_backend_pid() AS pid');
        client.on('error', (error) => void emitted.push(error));
        const ended = new Promise((resolve) => (client as unknown as pg.PoolClient).once('end', resolve));
        // Another session ends this one while the work is between statements.
        await suite.pool.query('SELECT pg_terminate_backend($1)', [(rows[0] as { pid: number }).pid]);
        await ended;
        return { commit: true, value: 'lost' };
      }, 5_000),
    ).rejects.toThrow('Client has encountered a connection error and is not queryable');
    expect(sent).toEqual(['BEGIN', 'INSERT', 'SELECT', 'COMMIT']);
    expect(emitted.length).toBeGreaterThan(0);
    expect(releases).toHaveLength(1);
    expect(releases[0]).toBe(emitted.at(-1));
    expect(await rowsOf(table)).toEqual([]);
  });

  it('destroys a client whose ROLLBACK failed on a live connection, so the next transaction on the pool cannot commit what the failed one wrote', async () => {
    const table = await newTable();
    // pg gives up on a statement after query_timeout and leaves the connection up, the statement still running on it.
    const impatient = pgPool(suite.url, { max: 1, query_timeout: 200 });
    try {
      const { rows } = await impatient.query('SELECT pg_backend_pid() AS pid');
      await expect(
        inTransaction(impatient, async (client) => {
          await client.query(`INSERT INTO ${table} (value) VALUES ($1)`, ['abandoned']);
          await client.query('SELECT pg_sleep(2)');
          return { commit: true, value: undefined };
        }, 5_000),
      ).rejects.toThrow('Query read timeout');
      expect(
        await inTransaction(impatient, async (client) => {
          await client.query(`INSERT INTO ${table} (value) VALUES ($1)`, ['next']);
          return { commit: true, value: 'ran' };
        }, 5_000),
      ).toBe('ran');
      expect(await rowsOf(table)).toEqual(['next']);
      expect((await impatient.query('SELECT pg_backend_pid() AS pid')).rows[0].pid).not.toBe(rows[0].pid);
    } finally {
      await impatient.end();
    }
  });

  it('says a COMMIT not answered by the deadline may have committed, and closes its connection; the commit may then land', async () => {
    const table = await newTable();
    const schema = await suite.schema();
    // A deferred trigger runs inside COMMIT: this one holds every COMMIT on the table for a second.
    await suite.pool.query(`CREATE FUNCTION ${schema}.slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(1); RETURN NULL; END $$`);
    await suite.pool.query(`CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON ${table} DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${schema}.slow_commit()`);
    const before = await connection();
    const { pool, sent, releases } = watched(single);
    await expect(
      inTransaction(pool, async (client) => {
        await client.query(`INSERT INTO ${table} (value) VALUES ($1)`, ['slow']);
        return { commit: true, value: 'slow' };
      }, 300),
    ).rejects.toThrow(
      new Error('svc-webhooks: COMMIT was not answered within 300 ms; the transaction may have committed (a retry then finds its record), and its connection was closed'),
    );
    expect(sent).toEqual(['BEGIN', 'INSERT', 'COMMIT']);
    expect(releases).toEqual([new Error('svc-webhooks: the transaction passed its deadline')]);
    // The server finishes the COMMIT it was sent: a retry would find the row.
    await vi.waitFor(async () => expect(await rowsOf(table)).toEqual(['slow']), { timeout: 5_000, interval: 100 });
    expect((await connection()).pid).not.toBe(before.pid);
  });

  it('says a ROLLBACK not answered by the deadline left nothing committed', async () => {
    const table = await newTable();
    await expect(
      inTransaction(single, async (client) => {
        await client.query(`INSERT INTO ${table} (value) VALUES ($1)`, ['dropped']);
        // A statement the work started and left running: the ROLLBACK waits behind it.
        void client.query('SELECT pg_sleep(1)').catch(() => {});
        return { commit: false, value: 'dropped' };
      }, 300),
    ).rejects.toThrow(new Error('svc-webhooks: the transaction did not end within 300 ms; it was not committed, and its connection was closed'));
    expect(await rowsOf(table)).toEqual([]);
  });

  it('stops listening to a client before giving it back: the pool\'s client serves transaction after transaction without gathering listeners', async () => {
    const client = await single.connect();
    const listening = client.listenerCount('error');
    client.release();
    await inTransaction(single, async () => ({ commit: true, value: undefined }), 5_000);
    await inTransaction(single, async () => ({ commit: false, value: undefined }), 5_000);
    await expect(inTransaction(single, async () => Promise.reject(new Error('the work failed')), 5_000)).rejects.toThrow('the work failed');
    const again = await single.connect();
    try {
      expect(again).toBe(client);
      expect(again.listenerCount('error')).toBe(listening);
    } finally {
      again.release();
    }
  });
});

import pg from 'pg';
import type postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import type { PostgresConnection } from '../../../src/stores/postgres/connection.js';
import { markProcessed } from '../../../src/stores/postgres/mark-processed.js';
import { migrateProcessedEvents } from '../../../src/stores/postgres/migrate.js';
import { PostgresDedupStore } from '../../../src/stores/postgres/postgres-dedup-store.js';
import { purgeProcessed } from '../../../src/stores/postgres/purge-processed.js';
import { postgresJs } from '../../helpers/postgres-clients.js';
import { postgresSuite } from '../../helpers/postgres-suite.js';
import { until } from '../../helpers/until.js';
import { WebhookOptionsError } from '../../../src/base/options-error.js';

const suite = postgresSuite();

/** A fresh processed-events table with a side-effect table beside it. */
async function tablesFor(): Promise<{ table: string; effects: string }> {
  const table = suite.table('processed');
  const effects = suite.table('effects');
  await migrateProcessedEvents(suite.pool, { table });
  await suite.pool.query(`CREATE TABLE ${effects} (event_id text NOT NULL)`);
  return { table, effects };
}

/** Runs `work` in a transaction on a client of its own; commits unless told to roll back. */
async function inPgTransaction<T>(work: (client: pg.PoolClient) => Promise<T>, end: 'COMMIT' | 'ROLLBACK' = 'COMMIT'): Promise<T> {
  const client = await suite.pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query(end);
    return result;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

/** Two clients of their own for `work`, released after it. */
async function withTwoClients(work: (first: pg.PoolClient, second: pg.PoolClient) => Promise<void>): Promise<void> {
  const first = await suite.pool.connect();
  const second = await suite.pool.connect();
  try {
    await work(first, second);
  } finally {
    first.release();
    second.release();
  }
}

async function effectCount(effects: string, id: string): Promise<number> {
  return (await suite.pool.query(`SELECT count(*)::int AS n FROM ${effects} WHERE event_id = $1`, [id])).rows[0].n;
}

describe('markProcessed in a pg transaction', () => {
  it('answers true the first time and false once that transaction committed', async () => {
    const { table, effects } = await tablesFor();
    const deliver = (id: string) =>
      inPgTransaction(async (client) => {
        const first = await markProcessed(client, id, { table });
        if (first) await client.query(`INSERT INTO ${effects} (event_id) VALUES ($1)`, [id]);
        return first;
      });
    expect(await deliver('evt_1')).toBe(true);
    expect(await deliver('evt_1')).toBe(false);
    expect(await deliver('evt_2')).toBe(true);
    expect(await effectCount(effects, 'evt_1')).toBe(1);
  });

  it('rolls the record back with the transaction, so the retry processes the event', async () => {
    const { table, effects } = await tablesFor();
    const work = async (client: pg.PoolClient) => {
      const first = await markProcessed(client, 'evt_1', { table });
      if (first) await client.query(`INSERT INTO ${effects} (event_id) VALUES ($1)`, ['evt_1']);
      return first;
    };
    expect(await inPgTransaction(work, 'ROLLBACK')).toBe(true);
    await expect(
      inPgTransaction(async (client) => {
        await work(client);
        throw new Error('the handler failed before commit');
      }),
    ).rejects.toThrow('the handler failed');
    expect(await effectCount(effects, 'evt_1')).toBe(0);
    expect(await inPgTransaction(work)).toBe(true);
    expect(await effectCount(effects, 'evt_1')).toBe(1);
  });

  for (const end of ['COMMIT', 'ROLLBACK'] as const) {
    it(`makes a concurrent transaction wait on the same id, then answer ${end === 'COMMIT' ? 'false after the first commits' : 'true after the first rolls back'}`, async () => {
      const { table } = await tablesFor();
      await withTwoClients(async (first, second) => {
        await first.query('BEGIN');
        await second.query('BEGIN');
        expect(await markProcessed(first, 'evt_1', { table })).toBe(true);
        const secondPid = (await second.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
        const answer = markProcessed(second, 'evt_1', { table });
        await waitUntilBlocked(secondPid);
        await first.query(end);
        expect(await answer).toBe(end === 'ROLLBACK');
        await second.query('COMMIT');
      });
    });
  }

  it('fails the second of two REPEATABLE READ transactions with a serialization error, as documented', async () => {
    const { table } = await tablesFor();
    await withTwoClients(async (first, second) => {
      await first.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await second.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await second.query('SELECT 1'); // takes the snapshot before the first commits
      expect(await markProcessed(first, 'evt_1', { table })).toBe(true);
      await first.query('COMMIT');
      await expect(markProcessed(second, 'evt_1', { table })).rejects.toMatchObject({ code: '40001' });
      await second.query('ROLLBACK');
    });
    expect(await inPgTransaction((client) => markProcessed(client, 'evt_1', { table }))).toBe(false);
  });
});

describe('markProcessed in a postgres.js transaction', () => {
  it('answers true, then false after commit; a rolled-back record leaves the event to the retry', async () => {
    const { table, effects } = await tablesFor();
    const deliver = (id: string, fail = false) =>
      suite.sql.begin(async (tx) => {
        const first = await markProcessed(tx, id, { table });
        if (first) await tx.unsafe(`INSERT INTO ${effects} (event_id) VALUES ($1)`, [id]);
        if (fail) throw new Error('the handler failed before commit');
        return first;
      });
    await expect(deliver('evt_1', true)).rejects.toThrow('the handler failed');
    expect(await deliver('evt_1')).toBe(true);
    expect(await deliver('evt_1')).toBe(false);
    expect(await effectCount(effects, 'evt_1')).toBe(1);
  });

  it('prepares its statement, as postgres.js does its own, unless the client was made with prepare: false', async () => {
    const { table } = await tablesFor();
    const unprepared = postgresJs(suite.url, { max: 1, prepare: false });
    try {
      const preparedCount = (client: postgres.Sql) =>
        client.begin(async (tx) => {
          await markProcessed(tx, `evt_${Math.random()}`, { table });
          const counted = await tx`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE strpos(statement, ${table}) > 0`;
          return counted[0]!.n as number;
        });
      expect(await preparedCount(suite.sql)).toBeGreaterThan(0);
      expect(await preparedCount(unprepared)).toBe(0);
    } finally {
      await unprepared.end();
    }
  });

  it('makes a concurrent transaction wait, then answer false once the first committed', async () => {
    const { table } = await tablesFor();
    let releaseFirst!: () => void;
    const firstHolds = new Promise<void>((resolve) => (releaseFirst = resolve));
    let firstMarked!: () => void;
    const marked = new Promise<void>((resolve) => (firstMarked = resolve));
    const first = suite.sql.begin(async (tx) => {
      const answer = await markProcessed(tx, 'evt_1', { table });
      firstMarked();
      await firstHolds;
      return answer;
    });
    await marked;
    let secondPid = 0;
    const second = suite.sql.begin(async (tx) => {
      secondPid = (await tx`SELECT pg_backend_pid() AS pid`)[0]!.pid as number;
      return markProcessed(tx, 'evt_1', { table });
    });
    await until(() => secondPid !== 0);
    await waitUntilBlocked(secondPid);
    releaseFirst();
    expect(await first).toBe(true);
    expect(await second).toBe(false);
  });
});

describe('markProcessed through a query function', () => {
  it('takes { rows } or the rows themselves', async () => {
    const { table } = await tablesFor();
    const asPg = await inPgTransaction((client) => markProcessed((text, params) => client.query(text, params), 'evt_1', { table }));
    const asRows = await inPgTransaction((client) =>
      markProcessed(async (text, params) => (await client.query(text, params)).rows, 'evt_1', { table }),
    );
    expect([asPg, asRows]).toEqual([true, false]);
  });

  it('sends statements whose placeholders each appear once, in order, so a tagged-template client can take them', async () => {
    const statements: Array<{ text: string; params: string[] }> = [];
    const record: PostgresConnection = async (text, params) => {
      statements.push({ text, params });
      return [{ inserted: true, token: null, count: 0, event_live: true, event_token: null }];
    };
    await markProcessed(record, 'evt_1');
    // Two DELETEs: the ids, then the versions.
    await purgeProcessed(record);
    const store = new PostgresDedupStore(record);
    await store.begin('evt_1', 1000);
    await store.complete('evt_1', 'token', 1000);
    await store.release('evt_1', 'token');
    await store.renew('evt_1', 'token', 1000);
    const order = { key: 'scopescopescope1:msg_1', version: 1 };
    await store.beginInOrder('evt_1', order, 1000);
    await store.completeInOrder('evt_1', order, 'token', 1000);
    await store.releaseInOrder('evt_1', order, 'token');
    await store.renewInOrder('evt_1', order, 'token', 1000);
    // Two DELETEs: the ids, then the objects.
    await store.deleteExpired();
    for (const { text, params } of statements) {
      const placeholders = [...text.matchAll(/\$(\d+)/g)].map((match) => Number(match[1]));
      expect(placeholders, text).toEqual(params.map((_, i) => i + 1));
    }
    // markProcessed sends two: the lock that fails outside a transaction, then the INSERT.
    expect(statements).toHaveLength(14);
  });
});

describe('markProcessed: arguments', () => {
  it('refuses a pool or a postgres.js top-level sql, whose statements would run outside the transaction', () => {
    const pool = /^svc-webhooks: markProcessed runs in the caller's transaction: pass the transaction's client \(pg: .*\), not a pool$/;
    expect(() => markProcessed(suite.pool, 'evt_1')).toThrow(pool);
    expect(() => markProcessed(suite.sql, 'evt_1')).toThrow(pool);
  });

  it('refuses an empty or non-string id, a bad table, and anything that is no client', async () => {
    const client = await suite.pool.connect();
    try {
      for (const key of ['', 5, null, undefined]) expect(() => markProcessed(client, key as string)).toThrow(new WebhookOptionsError('svc-webhooks: the key to mark must be a non-empty string'));
      for (const table of ['', 'Processed', 'a b', 'a.b.c', 7]) expect(() => markProcessed(client, 'evt_1', { table: table as string })).toThrow(/^svc-webhooks: table must be a table name/);
      expect(() => markProcessed(client, 'evt_1', null as unknown as object)).toThrow(new WebhookOptionsError('svc-webhooks: options must be an object'));
      for (const bad of [null, {}, 'postgres://x']) expect(() => markProcessed(bad as unknown as PostgresConnection, 'evt_1')).toThrow(/^svc-webhooks: markProcessed needs a pg client or pool/);
    } finally {
      client.release();
    }
  });

  it('uses svc_webhooks_processed_events by default and leaves the options untouched', async () => {
    const texts: string[] = [];
    await markProcessed(
      async (text) => {
        texts.push(text);
        return { rows: [] };
      },
      'evt_1',
      Object.freeze({}),
    );
    expect(texts[0]).toContain('"svc_webhooks_processed_events"');
  });

  it('refuses an answer that is neither { rows } nor rows', async () => {
    await expect(markProcessed(async () => ({ rowCount: 1 }) as never, 'evt_1')).rejects.toThrow(TypeError);
  });
});

/** Waits until the backend `pid` waits on a lock: the unique index's, held by the other transaction. */
async function waitUntilBlocked(pid: number): Promise<void> {
  await until(async () => {
    const { rows } = await suite.pool.query('SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1', [pid]);
    return rows[0]?.wait_event_type === 'Lock';
  });
}

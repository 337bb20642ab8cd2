import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { OrderingOptions } from '../../../src/core/event-order.js';
import type { WebhookEvent } from '../../../src/core/event.js';
import type { PostgresConnection } from '../../../src/stores/postgres/connection.js';
import { markProcessedInOrder, type MarkInOrderResult } from '../../../src/stores/postgres/mark-processed-in-order.js';
import { migrateProcessedEvents } from '../../../src/stores/postgres/migrate.js';
import { postgresSuite } from '../../helpers/postgres-suite.js';
import { until } from '../../helpers/until.js';
import { WebhookOptionsError } from '../../../src/base/options-error.js';

const suite = postgresSuite();
const SCOPE = 'scopescopescope1:';

/** The event `id` about `object` at `version`, delivered under the scope of one secret. */
function delivery(id: string, version: number | string | undefined, object = 'msg_1'): { event: WebhookEvent; dedupKey: string } {
  return { event: { id, type: 'message.status', version, data: { object: { id: object } } }, dedupKey: SCOPE + id };
}

const ORDERING: OrderingOptions = { version: (event) => event.version as number | string | undefined };

/** Fresh tables for one spec. */
async function tablesFor(): Promise<{ table: string; versionsTable: string }> {
  const tables = { table: suite.table('processed'), versionsTable: suite.table('versions') };
  await migrateProcessedEvents(suite.pool, tables);
  return tables;
}

/** Marks `marked` in a transaction of its own on pg, committed unless told to roll back. */
async function markInPg(tables: object, marked: ReturnType<typeof delivery>, end: 'COMMIT' | 'ROLLBACK' = 'COMMIT'): Promise<MarkInOrderResult> {
  const client = await suite.pool.connect();
  try {
    await client.query('BEGIN');
    const result = await markProcessedInOrder(client, marked, ORDERING, tables);
    await client.query(end);
    return result;
  } finally {
    client.release();
  }
}

/** The version recorded for `object`, or undefined. */
async function versionOf(versionsTable: string, object = 'msg_1'): Promise<number | undefined> {
  const { rows } = await suite.pool.query(`SELECT version FROM ${versionsTable} WHERE key = $1`, [SCOPE + object]);
  return rows[0]?.version;
}

async function idsOf(table: string): Promise<string[]> {
  return (await suite.pool.query(`SELECT id FROM ${table} ORDER BY id`)).rows.map((row: { id: string }) => row.id.slice(SCOPE.length));
}

describe('markProcessedInOrder: in order', () => {
  it('applies each newer event and raises the version, an equal one included', async () => {
    const tables = await tablesFor();
    for (const [id, version] of [['evt_1', 1], ['evt_2', 2], ['evt_2b', 2], ['evt_3', 3]] as const) {
      expect(await markInPg(tables, delivery(id, version)), id).toBe('apply');
      expect(await versionOf(tables.versionsTable)).toBe(version);
    }
  });

  it('works on postgres.js, in the sql of sql.begin()', async () => {
    const tables = await tablesFor();
    const mark = (marked: ReturnType<typeof delivery>) => suite.sql.begin((tx) => markProcessedInOrder(tx, marked, ORDERING, tables));
    expect(await mark(delivery('evt_1', 1))).toBe('apply');
    expect(await mark(delivery('evt_2', 2))).toBe('apply');
    expect(await mark(delivery('evt_0', 0))).toBe('stale');
    expect(await mark(delivery('evt_2', 2))).toBe('duplicate');
    expect(await versionOf(tables.versionsTable)).toBe(2);
  });

  it('keeps objects apart: a version of one says nothing of another', async () => {
    const tables = await tablesFor();
    expect(await markInPg(tables, delivery('evt_9', 9, 'msg_a'))).toBe('apply');
    expect(await markInPg(tables, delivery('evt_1', 1, 'msg_b'))).toBe('apply');
  });
});

describe('markProcessedInOrder: reversed', () => {
  it('answers stale for older events, records their ids, and never lowers the version', async () => {
    const tables = await tablesFor();
    expect(await markInPg(tables, delivery('evt_3', 3))).toBe('apply');
    expect(await markInPg(tables, delivery('evt_2', 2))).toBe('stale');
    expect(await markInPg(tables, delivery('evt_1', 1))).toBe('stale');
    expect(await versionOf(tables.versionsTable)).toBe(3);
    expect(await idsOf(tables.table)).toEqual(['evt_1', 'evt_2', 'evt_3']);
    // A stale event's retry is a duplicate.
    expect(await markInPg(tables, delivery('evt_2', 2))).toBe('duplicate');
  });

  it('compares RFC 3339 times by the instant they name, to the microsecond', async () => {
    const tables = await tablesFor();
    expect(await markInPg(tables, delivery('evt_b', '2026-11-29T12:00:00.000002+01:00'))).toBe('apply');
    expect(await markInPg(tables, delivery('evt_a', '2026-11-29T11:00:00.000001Z'))).toBe('stale');
    expect(await markInPg(tables, delivery('evt_c', '2026-11-29T11:00:00.000003Z'))).toBe('apply');
  });
});

describe('markProcessedInOrder: duplicates', () => {
  it('answers duplicate for an id recorded before, and records nothing else', async () => {
    const tables = await tablesFor();
    expect(await markInPg(tables, delivery('evt_5', 5))).toBe('apply');
    // The same id cannot raise the version, whatever its event says now.
    expect(await markInPg(tables, delivery('evt_5', 9))).toBe('duplicate');
    expect(await versionOf(tables.versionsTable)).toBe(5);
    expect(await markInPg(tables, delivery('evt_6', 6))).toBe('apply');
  });
});

describe('markProcessedInOrder: a rolled back transaction', () => {
  it('records neither the id nor the version', async () => {
    const tables = await tablesFor();
    expect(await markInPg(tables, delivery('evt_1', 1))).toBe('apply');
    expect(await markInPg(tables, delivery('evt_5', 5), 'ROLLBACK')).toBe('apply');
    expect(await versionOf(tables.versionsTable)).toBe(1);
    expect(await idsOf(tables.table)).toEqual(['evt_1']);
    expect(await markInPg(tables, delivery('evt_3', 3))).toBe('apply');
    expect(await markInPg(tables, delivery('evt_5', 5))).toBe('apply');
  });
});

describe('markProcessedInOrder: two transactions for one object', () => {
  /** Runs `second` while the transaction of `first` is open, and ends that after the second waits on it. */
  async function meeting(
    tables: object,
    first: ReturnType<typeof delivery>,
    second: ReturnType<typeof delivery>,
    end: 'COMMIT' | 'ROLLBACK',
  ): Promise<[MarkInOrderResult, MarkInOrderResult]> {
    const [a, b] = [await suite.pool.connect(), await suite.pool.connect()];
    try {
      await a.query('BEGIN');
      await b.query('BEGIN');
      const firstResult = await markProcessedInOrder(a, first, ORDERING, tables);
      const pid: number = (await b.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      const secondResult = markProcessedInOrder(b, second, ORDERING, tables);
      await until(async () => {
        const { rows } = await suite.pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'", [pid]);
        return rows[0].n === 1;
      });
      await a.query(end);
      const result = await secondResult;
      await b.query('COMMIT');
      return [firstResult, result];
    } finally {
      await rollBack(a);
      await rollBack(b);
    }
  }

  it('makes the second wait for the first, then decide on the version it committed', async () => {
    const tables = await tablesFor();
    expect(await meeting(tables, delivery('evt_5', 5), delivery('evt_3', 3), 'COMMIT')).toEqual(['apply', 'stale']);
    expect(await versionOf(tables.versionsTable)).toBe(5);
    // On an object that already has a row: the first raises it, the second waits on that row.
    expect(await meeting(tables, delivery('evt_7', 7), delivery('evt_6', 6), 'COMMIT')).toEqual(['apply', 'stale']);
    expect(await meeting(tables, delivery('evt_8', 8), delivery('evt_9', 9), 'COMMIT')).toEqual(['apply', 'apply']);
    expect(await versionOf(tables.versionsTable)).toBe(9);
  });

  it('decides on the version before the first when the first rolls back', async () => {
    const tables = await tablesFor();
    expect(await meeting(tables, delivery('evt_5', 5), delivery('evt_3', 3), 'ROLLBACK')).toEqual(['apply', 'apply']);
    expect(await versionOf(tables.versionsTable)).toBe(3);
  });
});

describe('markProcessedInOrder: an event without an order', () => {
  it('answers apply or duplicate as markProcessed, recording the id alone', async () => {
    const tables = await tablesFor();
    expect(await markInPg(tables, delivery('evt_1', undefined))).toBe('apply');
    expect(await markInPg(tables, delivery('evt_1', undefined))).toBe('duplicate');
    const noKey: OrderingOptions = { key: () => undefined, version: () => 5 };
    const client = await suite.pool.connect();
    try {
      await client.query('BEGIN');
      expect(await markProcessedInOrder(client, delivery('evt_2', 5), noKey, tables)).toBe('apply');
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    expect(await idsOf(tables.table)).toEqual(['evt_1', 'evt_2']);
    expect((await suite.pool.query(`SELECT count(*)::int AS n FROM ${tables.versionsTable}`)).rows[0].n).toBe(0);
  });
});

describe('markProcessedInOrder: where it runs', () => {
  it('refuses a pool or a postgres.js top-level sql, whose statements would run outside the transaction', () => {
    const pool = /^svc-webhooks: markProcessedInOrder runs in the caller's transaction: pass the transaction's client \(pg: .*\), not a pool$/;
    expect(() => markProcessedInOrder(suite.pool, delivery('evt_1', 1), ORDERING)).toThrow(pool);
    expect(() => markProcessedInOrder(suite.sql, delivery('evt_1', 1), ORDERING)).toThrow(pool);
  });

  it('rejects outside a transaction, ordered or not, and records nothing', async () => {
    const tables = await tablesFor();
    const client = await suite.pool.connect();
    try {
      for (const version of [1, undefined]) {
        await expect(markProcessedInOrder(client, delivery('evt_1', version), ORDERING, tables)).rejects.toThrow(
          /^svc-webhooks: markProcessedInOrder ran outside a transaction \(its connection had no BEGIN\)/,
        );
      }
    } finally {
      client.release();
    }
    expect(await idsOf(tables.table)).toEqual([]);
    expect(await versionOf(tables.versionsTable)).toBeUndefined();
  });
});

describe('markProcessedInOrder: arguments', () => {
  it('throws a WebhookOptionsError for no ordering or a bad one, an empty key, or bad tables', async () => {
    const client = await suite.pool.connect();
    try {
      expect(() => markProcessedInOrder(client, delivery('evt_1', 1), undefined as unknown as OrderingOptions)).toThrow(
        new WebhookOptionsError('svc-webhooks: markProcessedInOrder needs ordering, with at least its version function'),
      );
      expect(() => markProcessedInOrder(client, delivery('evt_1', 1), {} as OrderingOptions)).toThrow(/^svc-webhooks: ordering.version is required/);
      for (const dedupKey of ['', undefined]) {
        expect(() => markProcessedInOrder(client, { ...delivery('evt_1', 1), dedupKey: dedupKey as string }, ORDERING)).toThrow(
          new WebhookOptionsError('svc-webhooks: the key to mark must be a non-empty string'),
        );
      }
      expect(() => markProcessedInOrder(client, delivery('evt_1', 1), ORDERING, { versionsTable: 'Versions' })).toThrow(/^svc-webhooks: versionsTable must be a table name/);
      expect(() => markProcessedInOrder(client, delivery('evt_1', 1), ORDERING, { table: 'a', versionsTable: 'a' })).toThrow(
        new WebhookOptionsError('svc-webhooks: versionsTable must be another table than table'),
      );
    } finally {
      client.release();
    }
  });

  it('rejects with invalid_event_order when the version cannot be read, recording nothing', async () => {
    const tables = await tablesFor();
    const statements: string[] = [];
    const failing: OrderingOptions = {
      version: () => {
        throw new Error('no version');
      },
    };
    const record: PostgresConnection = async (text) => {
      statements.push(text);
      return [];
    };
    await expect(markProcessedInOrder(record, delivery('evt_1', 1), failing, tables)).rejects.toMatchObject({ code: 'invalid_event_order' });
    await expect(markProcessedInOrder(record, delivery('evt_1', 'yesterday'), ORDERING, tables)).rejects.toMatchObject({ code: 'invalid_event_order' });
    expect(statements).toEqual([]);
  });

  it('uses svc_webhooks_processed_events and svc_webhooks_processed_versions by default, each placeholder once and in order', async () => {
    const statements: Array<{ text: string; params: string[] }> = [];
    const record: PostgresConnection = async (text, params) => {
      statements.push({ text, params });
      return [{ raised: true }];
    };
    expect(await markProcessedInOrder(record, delivery('evt_1', 1.5), ORDERING, Object.freeze({}))).toBe('apply');
    expect(statements[0]!.text).toBe('LOCK TABLE ONLY "svc_webhooks_processed_events", "svc_webhooks_processed_versions" IN ROW EXCLUSIVE MODE');
    expect(statements[1]!.params).toEqual([`${SCOPE}evt_1`, `${SCOPE}msg_1`, '1.5']);
    for (const { text, params } of statements) {
      expect([...text.matchAll(/\$(\d+)/g)].map((match) => Number(match[1])), text).toEqual(params.map((_, i) => i + 1));
    }
  });
});

async function rollBack(client: pg.PoolClient): Promise<void> {
  await client.query('ROLLBACK').catch(() => {});
  client.release();
}

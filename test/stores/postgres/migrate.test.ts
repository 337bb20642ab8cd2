import { readFileSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { markProcessed } from '../../../src/stores/postgres/mark-processed.js';
import { markProcessedInOrder } from '../../../src/stores/postgres/mark-processed-in-order.js';
import { migrateProcessedEvents } from '../../../src/stores/postgres/migrate.js';
import { PostgresDedupStore } from '../../../src/stores/postgres/postgres-dedup-store.js';
import { purgeProcessed } from '../../../src/stores/postgres/purge-processed.js';
import { renderSchemaFile, SCHEMA_FILE } from '../../../sql/schema-file.js';
import { claim } from '../../helpers/dedup-store-contract.js';
import { claimInOrder } from '../../helpers/ordering-store-contract.js';
import { postgresSuite } from '../../helpers/postgres-suite.js';
import { until } from '../../helpers/until.js';
import { WebhookOptionsError } from '../../../src/base/options-error.js';

const DAY_MS = 24 * 3600_000;
const suite = postgresSuite();

async function indexesOf(table: string, schema = 'public'): Promise<string[]> {
  const { rows } = await suite.pool.query('SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 ORDER BY indexname', [schema, table]);
  return rows.map((row: { indexname: string }) => row.indexname);
}

describe('migrateProcessedEvents', () => {
  it('creates the table with its primary key and processed_at index, and changes nothing the second time', async () => {
    const table = suite.table('processed');
    await migrateProcessedEvents(suite.pool, { table });
    await suite.pool.query(`INSERT INTO ${table} (id) VALUES ('evt_kept')`);
    await migrateProcessedEvents(suite.sql, { table });
    expect(await indexesOf(table)).toEqual([`${table}_pkey`, `${table}_processed_at_idx`]);
    expect((await suite.pool.query(`SELECT id FROM ${table}`)).rows).toEqual([{ id: 'evt_kept' }]);
  });

  it('succeeds from many connections at once on a table nobody created yet', async () => {
    const table = suite.table('processed');
    await Promise.all(Array.from({ length: 8 }, (_, i) => migrateProcessedEvents(i % 2 === 0 ? suite.pool : suite.sql, { table })));
    expect(await indexesOf(table)).toEqual([`${table}_pkey`, `${table}_processed_at_idx`]);
  });

  it('sends no "already exists" notices to the client', async () => {
    const table = suite.table('processed');
    const notices: unknown[] = [];
    const client = new pg.Client({ connectionString: suite.url });
    client.on('notice', (notice) => notices.push(notice));
    await client.connect();
    try {
      await migrateProcessedEvents(client, { table });
      await migrateProcessedEvents(client, { table });
    } finally {
      await client.end();
    }
    expect(notices).toEqual([]);
  });

  it('waits for the lock every migration of this package takes, so two never create the same table at once', async () => {
    const table = suite.table('processed');
    const holder = new pg.Client({ connectionString: suite.url });
    const migrator = new pg.Client({ connectionString: suite.url });
    await holder.connect();
    await migrator.connect();
    try {
      // 'svc-webh' in ASCII: the key must stay the same across versions, or two of them could migrate at once.
      await holder.query('SELECT pg_advisory_lock(8319108479513978472)');
      // The migration's own connection, so that a migration of another test file waiting on the same lock is not counted.
      const pid: number = (await migrator.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      const migrated = migrateProcessedEvents(migrator, { table });
      await until(async () => {
        const { rows } = await suite.pool.query(
          "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND pid = $1 AND (classid::bigint << 32 | objid::bigint) = 8319108479513978472",
          [pid],
        );
        return rows[0].n === 1;
      }, 10_000);
      expect(await indexesOf(table)).toEqual([]);
      await holder.query('SELECT pg_advisory_unlock(8319108479513978472)');
      await migrated;
      expect(await indexesOf(table)).toEqual([`${table}_pkey`, `${table}_processed_at_idx`]);
    } finally {
      await holder.end();
      await migrator.end();
    }
  });

  it('leaves the session as it found it: the quieter client_min_messages and the lock end with the migration', async () => {
    const table = suite.table('processed');
    const client = new pg.Client({ connectionString: suite.url });
    await client.connect();
    try {
      const before = (await client.query('SHOW client_min_messages')).rows[0].client_min_messages;
      await migrateProcessedEvents(client, { table });
      expect((await client.query('SHOW client_min_messages')).rows[0].client_min_messages).toBe(before);
      const { rows } = await client.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()");
      expect(rows[0].n).toBe(0);
    } finally {
      await client.end();
    }
  });

  it('creates the versions table of markProcessedInOrder beside it, each in its schema, and changes nothing the second time', async () => {
    const schema = await suite.schema();
    const tables = { table: `${schema}.processed`, versionsTable: `${schema}.versions` };
    await migrateProcessedEvents(suite.pool, tables);
    await suite.pool.query(`INSERT INTO ${schema}.versions (key, version) VALUES ('kept', 1.5)`);
    await migrateProcessedEvents(suite.sql, tables);
    expect(await indexesOf('versions', schema)).toEqual(['versions_pkey']);
    expect((await suite.pool.query(`SELECT key, version FROM ${schema}.versions`)).rows).toEqual([{ key: 'kept', version: 1.5 }]);
    expect(() => migrateProcessedEvents(suite.pool, { versionsTable: 'Versions' })).toThrow(WebhookOptionsError);
  });

  it('creates a schema-qualified table in that schema', async () => {
    const schema = await suite.schema();
    await migrateProcessedEvents(suite.pool, { table: `${schema}.processed`, versionsTable: `${schema}.versions` });
    expect(await indexesOf('processed', schema)).toEqual(['processed_pkey', 'processed_processed_at_idx']);
    const store = new PostgresDedupStore(suite.pool, { table: `${schema}.dedup` });
    await store.migrate();
    expect(await indexesOf('dedup', schema)).toEqual(['dedup_expires_at_idx', 'dedup_pkey']);
  });

  it('throws a WebhookOptionsError for bad options', () => {
    for (const table of ['', 'UPPER', '9lives', 'a-b', 'a.b.c', '"quoted"', 'a'.repeat(47), 3]) {
      expect(() => migrateProcessedEvents(suite.pool, { table: table as string })).toThrow(WebhookOptionsError);
    }
    expect(() => migrateProcessedEvents(suite.pool, 'svc' as unknown as object)).toThrow(WebhookOptionsError);
  });

  it('names migrateProcessedEvents in the WebhookOptionsError for what is no client, or for an answer that has no rows', async () => {
    expect(() => migrateProcessedEvents({} as never)).toThrow(
      new WebhookOptionsError('svc-webhooks: migrateProcessedEvents needs a pg client or pool, a postgres.js sql, or a (text, params) => Promise<{ rows }> function'),
    );
    await expect(migrateProcessedEvents(async () => ({ rowCount: 0 }) as never)).rejects.toThrow(
      new WebhookOptionsError('svc-webhooks: migrateProcessedEvents: the connection answered neither { rows } nor an array of rows'),
    );
  });
});

describe('the shipped SQL file', () => {
  it('is what sql/schema-file.ts produces (npm run sql:postgres)', () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(renderSchemaFile());
  });

  it('creates tables that markProcessed and PostgresDedupStore work on, with their default names', async () => {
    const schema = await suite.schema();
    const client = new pg.Client({ connectionString: suite.url });
    await client.connect();
    try {
      await client.query(`SET search_path TO ${schema}`);
      await client.query(readFileSync(SCHEMA_FILE, 'utf8'));
      await client.query('BEGIN');
      expect(await markProcessed(client, 'evt_1')).toBe(true);
      await client.query('COMMIT');
      await client.query('BEGIN');
      const ordered = { event: { id: 'evt_2', type: 'message.status', data: { object: { id: 'msg_1' } } }, dedupKey: 'scopescopescope1:evt_2' };
      expect(await markProcessedInOrder(client, ordered, { version: () => 2 })).toBe('apply');
      await client.query('COMMIT');
      const store = new PostgresDedupStore(client);
      await store.complete('evt_1', await claim(store, 'evt_1'), 60_000);
      expect(await store.begin('evt_1', 60_000)).toEqual({ state: 'done' });
      const order = { key: 'scopescopescope1:msg_1', version: 2 };
      const { token } = await claimInOrder(store, 'evt_2', order);
      expect(await store.completeInOrder('evt_2', order, token, 60_000)).toBe(true);
      expect(await store.deleteExpired()).toBe(0);
    } finally {
      await client.end();
    }
    expect(await indexesOf('svc_webhooks_processed_events', schema)).toHaveLength(2);
    expect(await indexesOf('svc_webhooks_processed_versions', schema)).toEqual(['svc_webhooks_processed_versions_pkey']);
    expect(await indexesOf('svc_webhooks_dedup', schema)).toHaveLength(2);
    expect(await indexesOf('svc_webhooks_dedup_order', schema)).toEqual(['svc_webhooks_dedup_order_pkey']);
  });
});

describe('purgeProcessed', () => {
  it('deletes the ids older than the age, four days by default, and answers how many', async () => {
    const table = suite.table('processed');
    await migrateProcessedEvents(suite.pool, { table });
    const ageDays = { evt_new: 0, evt_3d: 3.5, evt_5d: 5, evt_9d: 9 };
    for (const [id, days] of Object.entries(ageDays)) {
      await suite.pool.query(`INSERT INTO ${table} (id, processed_at) VALUES ($1, now() - $2::float8 * interval '1 day')`, [id, days]);
    }
    expect(await purgeProcessed(suite.sql, { table, olderThanMs: 6 * DAY_MS })).toBe(1);
    expect(await purgeProcessed(suite.pool, { table })).toBe(1);
    expect(await purgeProcessed(suite.pool, { table, olderThanMs: 259_200_000 })).toBe(1);
    const { rows } = await suite.pool.query(`SELECT id FROM ${table}`);
    expect(rows).toEqual([{ id: 'evt_new' }]);
  });

  it("deletes the versions of markProcessedInOrder's objects last raised before the age too, and skips a versions table never created", async () => {
    const table = suite.table('processed');
    const versionsTable = suite.table('versions');
    await migrateProcessedEvents(suite.pool, { table, versionsTable });
    for (const [key, days] of Object.entries({ obj_new: 1, obj_old: 5 })) {
      await suite.pool.query(`INSERT INTO ${versionsTable} (key, version, processed_at) VALUES ($1, 1, now() - $2::float8 * interval '1 day')`, [key, days]);
    }
    await suite.pool.query(`INSERT INTO ${table} (id, processed_at) VALUES ('evt_old', now() - interval '5 days')`);
    expect(await purgeProcessed(suite.pool, { table, versionsTable })).toBe(2);
    expect((await suite.pool.query(`SELECT key FROM ${versionsTable}`)).rows).toEqual([{ key: 'obj_new' }]);
    expect(await purgeProcessed(suite.pool, { table, versionsTable: suite.table('never_created') })).toBe(0);
  });

  it('refuses an age shorter than the three-day retry window, or no duration, with a WebhookOptionsError', () => {
    for (const olderThanMs of [259_199_999, DAY_MS, 0, -1, 1.5, Number.NaN]) {
      expect(() => purgeProcessed(suite.pool, { olderThanMs })).toThrow(WebhookOptionsError);
    }
    expect(() => purgeProcessed(suite.pool, { table: 'No' })).toThrow(WebhookOptionsError);
  });

  it('says in its WebhookOptionsError what is wrong: the three-day minimum, the duration, or the connection', () => {
    expect(() => purgeProcessed(suite.pool, { olderThanMs: 259_199_999 })).toThrow(
      new WebhookOptionsError('svc-webhooks: olderThanMs must be at least 259200000 (three days, the retry window)'),
    );
    expect(() => purgeProcessed(suite.pool, { olderThanMs: 1.5 })).toThrow(
      new WebhookOptionsError(`svc-webhooks: olderThanMs must be a whole number of milliseconds from 1 to ${Number.MAX_SAFE_INTEGER}`),
    );
    expect(() => purgeProcessed({} as never)).toThrow(
      new WebhookOptionsError('svc-webhooks: purgeProcessed needs a pg client or pool, a postgres.js sql, or a (text, params) => Promise<{ rows }> function'),
    );
  });

  it('rejects with a WebhookOptionsError, rather than answering NaN, when the connection answers no count', async () => {
    for (const answer of [[], [null], [{}], [{ count: 'many' }], [{ count: -1 }]]) {
      await expect(purgeProcessed(async () => answer as never)).rejects.toThrow(
        new WebhookOptionsError('svc-webhooks: the connection answered the DELETE with no count of the rows deleted'),
      );
    }
    // A count the client gives as text, as some drivers do for integers, is a count: the ids' and the versions'.
    expect(await purgeProcessed(async () => [{ count: '3' }])).toBe(6);
  });

  it('deletes from svc_webhooks_processed_events what is older than four days when given no options', async () => {
    const schema = await suite.schema();
    const client = new pg.Client({ connectionString: suite.url });
    await client.connect();
    try {
      await client.query(`SET search_path TO ${schema}`);
      await migrateProcessedEvents(client);
      const ageHours = { evt_new: 0, evt_95h: 95, evt_97h: 97 };
      for (const [id, hours] of Object.entries(ageHours)) {
        await client.query(`INSERT INTO svc_webhooks_processed_events (id, processed_at) VALUES ($1, now() - $2::float8 * interval '1 hour')`, [id, hours]);
      }
      expect(await purgeProcessed(client)).toBe(1);
      expect((await client.query('SELECT id FROM svc_webhooks_processed_events ORDER BY id')).rows).toEqual([{ id: 'evt_95h' }, { id: 'evt_new' }]);
      expect(await purgeProcessed(client)).toBe(0);
    } finally {
      await client.end();
    }
  });
});

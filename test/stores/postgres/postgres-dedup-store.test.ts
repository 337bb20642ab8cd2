import { verifyAndClaim } from '../../helpers/receiver-steps.js';
import { describe, expect, it } from 'vitest';
import { createReceiver } from '../../../src/receive/receiver.js';
import type { BeginResult } from '../../../src/stores/dedup-store.js';
import type { PostgresConnection } from '../../../src/stores/postgres/connection.js';
import { PostgresDedupStore } from '../../../src/stores/postgres/postgres-dedup-store.js';
import { freePort } from '../../helpers/free-port.js';
import { now, SECRET, signedRequest } from '../../helpers/signed-request.js';
import { pgPool } from '../../helpers/postgres-clients.js';
import { postgresSuite } from '../../helpers/postgres-suite.js';
import { claim, describeDedupContract, type DedupHarness } from '../../helpers/dedup-store-contract.js';
import { claimInOrder, describeOrderingContract } from '../../helpers/ordering-store-contract.js';
import { until } from '../../helpers/until.js';
import type { EventOrder } from '../../../src/core/event-order.js';
import { WebhookOptionsError } from '../../../src/base/options-error.js';

const LONG = 60_000;
const suite = postgresSuite();

/** A store on tables of its own, created by the store. */
async function migratedStore(connection: PostgresConnection, table = suite.table('dedup'), orderTable = suite.table('order')): Promise<PostgresDedupStore> {
  const store = new PostgresDedupStore(connection, { table, orderTable });
  await store.migrate();
  return store;
}

/** Time passes for real: expiry follows the database's clock. */
function harness(connection: () => PostgresConnection): () => Promise<DedupHarness> {
  return async () => ({ store: await migratedStore(connection()), advance: sleep });
}

// Each step a round trip to the server: a short lease of 500 ms, so that a loaded machine's steps fit in it.
const TIMING = { shortMs: 500, pastShortMs: 800 };
describeDedupContract('PostgresDedupStore via pg', harness(() => suite.pool), TIMING);
describeDedupContract('PostgresDedupStore via postgres.js', harness(() => suite.sql), TIMING);
describeDedupContract('PostgresDedupStore via a query function', harness(() => (text, params) => suite.pool.query(text, params)), TIMING);
describeOrderingContract('PostgresDedupStore via pg', harness(() => suite.pool), TIMING);
describeOrderingContract('PostgresDedupStore via postgres.js', harness(() => suite.sql), TIMING);

describe('PostgresDedupStore: renew', () => {
  it('extends a live lease, so it outlives its first expiry and still completes', async () => {
    const store = await migratedStore(suite.pool);
    const token = await claim(store, 'evt_1', 300);
    expect(await store.renew('evt_1', token, LONG)).toBe(true);
    await sleep(500);
    expect(await store.begin('evt_1', LONG)).toEqual({ state: 'in_progress' });
    expect(await store.complete('evt_1', token, LONG)).toBe(true);
  });

  it('can shorten a lease too: the lease ends leaseMs from the renewal', async () => {
    const store = await migratedStore(suite.sql);
    const token = await claim(store, 'evt_1', LONG);
    expect(await store.renew('evt_1', token, 100)).toBe(true);
    await sleep(250);
    expect((await store.begin('evt_1', LONG)).state).toBe('claimed');
  });

  it('refuses a lease that expired, was taken over, completed or released, and a wrong or unknown token', async () => {
    const store = await migratedStore(suite.sql);
    const expired = await claim(store, 'evt_expired', 100);
    await sleep(250);
    expect(await store.renew('evt_expired', expired, LONG)).toBe(false);
    const current = await claim(store, 'evt_expired');
    expect(await store.renew('evt_expired', expired, LONG)).toBe(false);
    expect(await store.renew('evt_expired', current, LONG)).toBe(true);

    const done = await claim(store, 'evt_done');
    await store.complete('evt_done', done, LONG);
    expect(await store.renew('evt_done', done, LONG)).toBe(false);
    expect(await store.begin('evt_done', LONG)).toEqual({ state: 'done' });

    const released = await claim(store, 'evt_released');
    await store.release('evt_released', released);
    expect(await store.renew('evt_released', released, LONG)).toBe(false);

    expect(await store.renew('evt_expired', 'another-token', LONG)).toBe(false);
    expect(await store.renew('evt_unknown', 'some-token', LONG)).toBe(false);
    expect((await store.begin('evt_unknown', LONG)).state).toBe('claimed');
  });

  it('rejects durations that are not positive integers with a WebhookOptionsError and leaves the lease alone', async () => {
    const store = await migratedStore(suite.pool);
    const token = await claim(store, 'evt_1', 300);
    const leaseMs = new WebhookOptionsError(`svc-webhooks: leaseMs must be a whole number of milliseconds from 1 to ${Number.MAX_SAFE_INTEGER}`);
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      await expect(store.renew('evt_1', token, bad)).rejects.toThrow(leaseMs);
      await expect(store.begin('evt_other', bad)).rejects.toThrow(leaseMs);
      await expect(store.complete('evt_1', token, bad)).rejects.toThrow(
        new WebhookOptionsError(`svc-webhooks: retentionMs must be a whole number of milliseconds from 1 to ${Number.MAX_SAFE_INTEGER}`),
      );
    }
    await sleep(500);
    expect((await store.begin('evt_1', LONG)).state).toBe('claimed');
  });
});

describe('PostgresDedupStore: the table', () => {
  it('holds the token with the lease end while leased, then NULL with the retention end once done', async () => {
    const table = suite.table('dedup');
    const store = await migratedStore(suite.pool, table);
    const token = await claim(store, 'evt_1', 30_000);
    const row = async () =>
      (await suite.pool.query(`SELECT token, extract(epoch FROM expires_at - now()) * 1000 AS ms FROM ${table} WHERE id = 'evt_1'`)).rows[0];
    expect(await row()).toMatchObject({ token });
    expect(Number((await row()).ms)).toBeGreaterThan(20_000);
    await store.complete('evt_1', token, 4 * 24 * 3600_000);
    expect(await row()).toMatchObject({ token: null });
    expect(Number((await row()).ms)).toBeGreaterThan(3 * 24 * 3600_000);
  });

  it('deleteExpired removes expired leases and forgotten done ids, nothing live', async () => {
    const table = suite.table('dedup');
    const store = await migratedStore(suite.sql, table);
    await claim(store, 'evt_lease_expired', 50);
    await store.complete('evt_done_expired', await claim(store, 'evt_done_expired'), 50);
    await claim(store, 'evt_lease_live');
    await store.complete('evt_done_live', await claim(store, 'evt_done_live'), LONG);
    await sleep(200);
    expect(await store.deleteExpired()).toBe(2);
    const ids = (await suite.pool.query(`SELECT id FROM ${table} ORDER BY id`)).rows.map((r: { id: string }) => r.id);
    expect(ids).toEqual(['evt_done_live', 'evt_lease_live']);
    expect(await store.deleteExpired()).toBe(0);
  });

  it('uses svc_webhooks_dedup by default', async () => {
    const statements: string[] = [];
    const store = new PostgresDedupStore(async (text) => {
      statements.push(text);
      return [];
    });
    await store.release('evt_1', 'token');
    expect(statements[0]).toContain('"svc_webhooks_dedup"');
  });

  it('migrates idempotently, also from several connections at once', async () => {
    const table = suite.table('dedup');
    const stores = Array.from({ length: 6 }, (_, i) => new PostgresDedupStore(i % 2 === 0 ? suite.pool : suite.sql, { table }));
    await Promise.all(stores.map((store) => store.migrate()));
    await stores[0]!.migrate();
    const indexes = (await suite.pool.query('SELECT indexname FROM pg_indexes WHERE tablename = $1 ORDER BY indexname', [table])).rows;
    expect(indexes.map((r: { indexname: string }) => r.indexname)).toEqual([`${table}_expires_at_idx`, `${table}_pkey`]);
  });
});

describe('PostgresDedupStore: concurrency', () => {
  it('gives exactly one claim to concurrent begins from many connections of both clients', async () => {
    const table = suite.table('dedup');
    const stores = [await migratedStore(suite.pool, table), new PostgresDedupStore(suite.sql, { table })];
    for (let round = 0; round < 20; round++) {
      const id = `evt_${round}`;
      const results: BeginResult[] = await Promise.all(stores.flatMap((store) => Array.from({ length: 8 }, () => store.begin(id, LONG))));
      expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1);
      expect(results.filter((r) => r.state === 'in_progress')).toHaveLength(15);
    }
  });

  it('gives exactly one claim when many begins meet an expired lease', async () => {
    const table = suite.table('dedup');
    const stores = [await migratedStore(suite.pool, table), new PostgresDedupStore(suite.sql, { table })];
    for (let round = 0; round < 5; round++) {
      const id = `evt_${round}`;
      await claim(stores[0]!, id, 50);
      await sleep(150);
      const results: BeginResult[] = await Promise.all(stores.flatMap((store) => Array.from({ length: 8 }, () => store.begin(id, LONG))));
      expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1);
    }
  });
});

describe('PostgresDedupStore: ordering', () => {
  const order = (version: number, object = 'msg_1'): EventOrder => ({ key: `scopescopescope1:${object}`, version });
  const objectRow = async (orderTable: string, object = 'msg_1') =>
    (await suite.pool.query(`SELECT version, token, version_expires_at > now() AS version_live FROM ${orderTable} WHERE key = $1`, [order(0, object).key])).rows[0];

  it('names the objects table after the store table, _order appended, in its schema, unless orderTable is given', async () => {
    const statements: string[] = [];
    const record = async (text: string) => {
      statements.push(text);
      return [];
    };
    await new PostgresDedupStore(record).releaseInOrder('evt_1', order(1), 'token');
    await new PostgresDedupStore(record, { table: 'hooks.dedup' }).releaseInOrder('evt_1', order(1), 'token');
    await new PostgresDedupStore(record, { table: 'a'.repeat(46) }).releaseInOrder('evt_1', order(1), 'token');
    await new PostgresDedupStore(record, { orderTable: 'hooks.objects' }).releaseInOrder('evt_1', order(1), 'token');
    expect(statements[0]).toContain('UPDATE "svc_webhooks_dedup_order" AS o');
    expect(statements[1]).toContain('UPDATE "hooks"."dedup_order" AS o');
    expect(statements[2]).toContain(`UPDATE "${'a'.repeat(46)}_order" AS o`);
    expect(statements[3]).toContain('UPDATE "hooks"."objects" AS o');
    expect(statements[3]).toContain('DELETE FROM "svc_webhooks_dedup" AS d');
  });

  it('migrates the objects table beside the store table, both in a schema', async () => {
    const schema = await suite.schema();
    const store = new PostgresDedupStore(suite.sql, { table: `${schema}.dedup` });
    await store.migrate();
    const { rows } = await suite.pool.query(
      'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position',
      [schema, 'dedup_order'],
    );
    expect(rows.map((row: { column_name: string; data_type: string }) => `${row.column_name} ${row.data_type}`)).toEqual([
      'key text',
      'version double precision',
      'version_expires_at timestamp with time zone',
      'token text',
      'lease_expires_at timestamp with time zone',
    ]);
    const { token } = await claimInOrder(store, 'evt_1', order(1));
    expect(await store.completeInOrder('evt_1', order(1), token, LONG)).toBe(true);
    expect((await claimInOrder(store, 'evt_0', order(0))).stale).toBe(true);
  });

  it('refuses an orderTable that is the store table, or no table name, with a WebhookOptionsError', () => {
    expect(() => new PostgresDedupStore(suite.pool, { table: 'hooks.dedup', orderTable: 'hooks.dedup' })).toThrow(
      new WebhookOptionsError('svc-webhooks: orderTable must be another table than table'),
    );
    for (const orderTable of ['', 'Objects', 'a.b.c', 5]) {
      expect(() => new PostgresDedupStore(suite.pool, { orderTable: orderTable as string })).toThrow(/^svc-webhooks: orderTable must be a table name/);
    }
  });

  it('records the version for the retention and clears the lease on completion, and never lowers it', async () => {
    const orderTable = suite.table('order');
    const store = await migratedStore(suite.pool, suite.table('dedup'), orderTable);
    const { token } = await claimInOrder(store, 'evt_5', order(5));
    expect(await objectRow(orderTable)).toEqual({ version: null, token, version_live: null });
    expect(await store.completeInOrder('evt_5', order(5), token, LONG)).toBe(true);
    expect(await objectRow(orderTable)).toEqual({ version: 5, token: null, version_live: true });
    const old = await claimInOrder(store, 'evt_4', order(4));
    expect(await store.completeInOrder('evt_4', order(4), old.token, LONG)).toBe(true);
    expect(await objectRow(orderTable)).toEqual({ version: 5, token: null, version_live: true });
  });

  it('records the version of an event completed after its object lease ran out, and leaves the lease another took', async () => {
    const orderTable = suite.table('order');
    const store = await migratedStore(suite.pool, suite.table('dedup'), orderTable);
    const first = await claimInOrder(store, 'evt_3', order(3), LONG);
    // The object's lease alone ran out: another event of the object claims it.
    await suite.pool.query(`UPDATE ${orderTable} SET lease_expires_at = now() - interval '1 second'`);
    const second = await claimInOrder(store, 'evt_4', order(4));
    expect(await store.completeInOrder('evt_3', order(3), first.token, LONG)).toBe(true);
    expect(await objectRow(orderTable)).toEqual({ version: 3, token: second.token, version_live: true });
    expect(await store.beginInOrder('evt_5', order(5), LONG)).toEqual({ state: 'in_progress' });
  });

  it('treats a recorded version past its retention as none', async () => {
    const store = await migratedStore(suite.sql);
    const { token } = await claimInOrder(store, 'evt_9', order(9));
    await store.completeInOrder('evt_9', order(9), token, 100);
    await sleep(250);
    const next = await claimInOrder(store, 'evt_1', order(1));
    expect(next.stale).toBe(false);
    await store.completeInOrder('evt_1', order(1), next.token, LONG);
    expect((await claimInOrder(store, 'evt_2', order(2))).stale).toBe(false);
  });

  it("drops the object's lease when another delivery of the same event claimed it between the statement's snapshot and its upsert", async () => {
    for (const [end, answer] of [['live', 'in_progress'], ['done', 'done']] as const) {
      const table = suite.table('dedup');
      const orderTable = suite.table('order');
      const store = await migratedStore(suite.pool, table, orderTable);
      const rival = await suite.pool.connect();
      try {
        await rival.query('BEGIN');
        await rival.query(`INSERT INTO ${table} (id, token, expires_at) VALUES ('evt_1', $1, now() + interval '1 minute')`, [end === 'live' ? 'rival' : null]);
        const begun = store.beginInOrder('evt_1', order(1), LONG);
        await until(async () => {
          const { rows } = await suite.pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1", [`%${orderTable}%`]);
          return rows[0].n === 1;
        });
        await rival.query('COMMIT');
        expect(await begun).toEqual({ state: answer });
      } finally {
        rival.release();
      }
      expect(await objectRow(orderTable)).toEqual({ version: null, token: null, version_live: null });
      expect((await claimInOrder(store, 'evt_2', order(2))).stale).toBe(false);
    }
  });

  it('deleteExpired deletes the objects with neither a live lease nor a live version, and counts them', async () => {
    const orderTable = suite.table('order');
    const store = await migratedStore(suite.pool, suite.table('dedup'), orderTable);
    const complete = async (id: string, at: EventOrder, retentionMs: number) => store.completeInOrder(id, at, (await claimInOrder(store, id, at)).token, retentionMs);
    await complete('evt_a', order(1, 'version_expired'), 50);
    await claimInOrder(store, 'evt_b', order(1, 'lease_expired'), 50);
    await store.releaseInOrder('evt_c', order(1, 'released'), (await claimInOrder(store, 'evt_c', order(1, 'released'))).token);
    await complete('evt_d', order(1, 'version_live'), LONG);
    await claimInOrder(store, 'evt_e', order(1, 'lease_live'));
    await sleep(200);
    // evt_a's done id and evt_b's lease expired too.
    expect(await store.deleteExpired()).toBe(5);
    const { rows } = await suite.pool.query(`SELECT key FROM ${orderTable} ORDER BY key`);
    expect(rows.map((row: { key: string }) => row.key)).toEqual([order(0, 'lease_live').key, order(0, 'version_live').key]);
    expect(await store.deleteExpired()).toBe(0);
  });

  it('deleteExpired still deletes the ids of a store whose objects table was never created, and passes on other errors', async () => {
    const table = suite.table('dedup');
    await suite.pool.query(`CREATE TABLE ${table} (id text PRIMARY KEY, token text, expires_at timestamptz NOT NULL)`);
    const store = new PostgresDedupStore(suite.pool, { table, orderTable: suite.table('order') });
    await store.complete('evt_1', await claim(store, 'evt_1'), 50);
    await sleep(200);
    expect(await store.deleteExpired()).toBe(1);
    const failing = new PostgresDedupStore(async (text) => {
      if (text.includes('_order')) throw Object.assign(new Error('permission denied'), { code: '42501' });
      return [{ count: 0 }];
    });
    await expect(failing.deleteExpired()).rejects.toMatchObject({ code: '42501' });
  });

  it('rejects an answer to beginInOrder it does not expect rather than reading it as a claim', async () => {
    for (const answer of [[], [{}], [{ event_live: true, event_token: 5 }], [{ object_token: null, stale: false }], [{ object_token: undefined }]]) {
      const store = new PostgresDedupStore(async () => answer as never);
      await expect(store.beginInOrder('evt_1', order(1), 1000)).rejects.toMatchObject({ code: 'dedup_unavailable' });
    }
  });

  it('rejects durations that are not positive integers with a WebhookOptionsError, sending nothing', async () => {
    const statements: string[] = [];
    const store = new PostgresDedupStore(async (text) => {
      statements.push(text);
      return [];
    });
    for (const bad of [0, -1, 1.5]) {
      await expect(store.beginInOrder('evt_1', order(1), bad)).rejects.toThrow(WebhookOptionsError);
      await expect(store.completeInOrder('evt_1', order(1), 'token', bad)).rejects.toThrow(WebhookOptionsError);
      await expect(store.renewInOrder('evt_1', order(1), 'token', bad)).rejects.toThrow(WebhookOptionsError);
    }
    expect(statements).toEqual([]);
  });
});

describe('PostgresDedupStore: ordering, concurrency', () => {
  it('gives exactly one claim to concurrent begins of one object, the same event and others, from both clients, its lease free or run out', async () => {
    const [table, orderTable] = [suite.table('dedup'), suite.table('order')];
    const stores = [await migratedStore(suite.pool, table, orderTable), new PostgresDedupStore(suite.sql, { table, orderTable })];
    for (let round = 0; round < 6; round++) {
      const at = { key: `scopescopescope1:msg_${round}`, version: round };
      if (round % 2 === 1) await claimInOrder(stores[0]!, `evt_${round}_expired`, at, 50);
      await sleep(round % 2 === 1 ? 150 : 0);
      const ids = Array.from({ length: 8 }, (_, i) => `evt_${round}_${i % 3}`);
      const results = await Promise.all(stores.flatMap((store) => ids.map((id) => store.beginInOrder(id, at, LONG))));
      expect(results.filter((r) => r.state === 'claimed'), `round ${round}`).toHaveLength(1);
      expect(results.filter((r) => r.state === 'in_progress')).toHaveLength(15);
      const { rows } = await suite.pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE id LIKE $1 AND token IS NOT NULL AND expires_at > now()`, [`evt_${round}_%`]);
      expect(rows[0].n).toBe(1);
    }
  });
});

describe('PostgresDedupStore: connections and options', () => {
  it('throws a WebhookOptionsError naming what is wrong for anything that is no client, or for bad options', () => {
    for (const bad of [null, undefined, {}, 'postgres://127.0.0.1/test', 5]) {
      expect(() => new PostgresDedupStore(bad as unknown as PostgresConnection)).toThrow(/^svc-webhooks: PostgresDedupStore needs a pg client or pool/);
    }
    const tableMessage = new WebhookOptionsError(
      'svc-webhooks: table must be a table name, optionally schema-qualified (schema.table), each part of lower-case letters, digits and underscores, at most 46 characters',
    );
    for (const table of ['', 'Dedup', '1dedup', 'a-b', 'a.b.c', 'public.Dedup', 'Public.dedup', 'a'.repeat(47), 'x; DROP TABLE y', 5, null]) {
      expect(() => new PostgresDedupStore(suite.pool, { table: table as string })).toThrow(tableMessage);
    }
    expect(() => new PostgresDedupStore(suite.pool, null as unknown as object)).toThrow(new WebhookOptionsError('svc-webhooks: PostgresDedupStore options must be an object'));
    expect(() => new PostgresDedupStore(suite.pool, { table: 'a'.repeat(46) })).not.toThrow();
    expect(() => new PostgresDedupStore(suite.pool, Object.freeze({ table: 'webhooks.dedup' }))).not.toThrow();
  });

  it('rejects an answer it does not expect rather than reading it as a claim', async () => {
    for (const answer of [[], [{}], [{ token: 5 }], { rows: [{ token: undefined }] }]) {
      const store = new PostgresDedupStore(async () => answer as never);
      await expect(store.begin('evt_1', 1000)).rejects.toMatchObject({ code: 'dedup_unavailable' });
    }
    const noRows = new PostgresDedupStore(async () => ({ answer: 'no rows' }) as never);
    await expect(noRows.begin('evt_1', 1000)).rejects.toThrow(WebhookOptionsError);
  });

  it('makes the receiver answer 503 when Postgres does not answer', async () => {
    const down = pgPool(`postgres://postgres@127.0.0.1:${await freePort()}/test`, { connectionTimeoutMillis: 2_000 });
    try {
      const receiver = createReceiver({ secret: SECRET, now, dedup: { store: new PostgresDedupStore(down) } });
      const { body, headers } = signedRequest({ id: 'evt_down' });
      const reception = await verifyAndClaim(receiver, body, headers);
      expect(reception.action === 'respond' && reception.response.status).toBe(503);
    } finally {
      await down.end();
    }
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

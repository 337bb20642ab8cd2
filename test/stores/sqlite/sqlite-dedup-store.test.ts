import { describe, expect, it } from 'vitest';
import { WebhookOptionsError } from '../../../src/base/options-error.js';
import type { EventOrder } from '../../../src/core/event-order.js';
import { answersAtOnce } from '../../../src/stores/dedup-store.js';
import type { SqliteDatabase } from '../../../src/stores/sqlite/database.js';
import { SqliteDedupStore, type SqliteDedupStoreOptions } from '../../../src/stores/sqlite/sqlite-dedup-store.js';
import { claim, describeDedupContract, manualClock, type DedupHarness } from '../../helpers/dedup-store-contract.js';
import { claimedAtOnce } from '../../helpers/claimed-at-once.js';
import { claimInOrder, describeOrderingContract, objectsToPurge } from '../../helpers/ordering-store-contract.js';
import { sqliteSuite } from '../../helpers/sqlite-suite.js';

const LONG = 60_000;
const suite = sqliteSuite();
const db = suite.open();
let tables = 0;

/** A migrated store on a table of its own, on a clock the test moves by hand. */
function manualStore(options: SqliteDedupStoreOptions = {}): DedupHarness & { store: SqliteDedupStore; table: string } {
  const { now, advance } = manualClock();
  const table = `dedup_${++tables}`;
  const store = new SqliteDedupStore(db, { table, now, ...options });
  store.migrate();
  return { store, table, advance };
}

describeDedupContract('SqliteDedupStore via better-sqlite3', async () => manualStore());
describeOrderingContract('SqliteDedupStore via better-sqlite3', async () => manualStore());

describe('SqliteDedupStore: the table', () => {
  it('holds the token with the lease end while leased, then NULL with the retention end once done', async () => {
    const { store, table } = manualStore();
    const token = await claim(store, 'evt_1', 30_000);
    const row = () => db.prepare(`SELECT token, expires_at FROM ${table} WHERE id = 'evt_1'`).get();
    expect(row()).toEqual({ token, expires_at: 1_700_000_030_000 });
    await store.complete('evt_1', token, 4 * 24 * 3600_000);
    expect(row()).toEqual({ token: null, expires_at: 1_700_000_000_000 + 4 * 24 * 3600_000 });
  });

  it('keeps leases and done ids in the file: a store on a new connection, as after a restart, finds them', async () => {
    const file = suite.file();
    const before = new SqliteDedupStore(suite.open(file));
    before.migrate();
    await before.complete('evt_done', await claim(before, 'evt_done'), LONG);
    await claim(before, 'evt_leased');
    const after = new SqliteDedupStore(suite.open(file));
    expect(await after.begin('evt_done', LONG)).toEqual({ state: 'done' });
    expect(await after.begin('evt_leased', LONG)).toEqual({ state: 'in_progress' });
    expect((await after.begin('evt_new', LONG)).state).toBe('claimed');
  });

  it('deleteExpired removes expired leases and forgotten done ids, nothing live', async () => {
    const { store, table, advance } = manualStore();
    await claim(store, 'evt_lease_expired', 50);
    await store.complete('evt_done_expired', await claim(store, 'evt_done_expired'), 50);
    await claim(store, 'evt_lease_live');
    await store.complete('evt_done_live', await claim(store, 'evt_done_live'), LONG);
    await advance(50);
    expect(store.deleteExpired()).toBe(2);
    const ids = db.prepare(`SELECT id FROM ${table} ORDER BY id`).all();
    expect(ids).toEqual([{ id: 'evt_done_live' }, { id: 'evt_lease_live' }]);
    expect(store.deleteExpired()).toBe(0);
  });

  it('uses svc_webhooks_dedup by default, and migrates idempotently, from several stores at once', () => {
    const database = suite.open();
    const stores = Array.from({ length: 3 }, () => new SqliteDedupStore(database));
    for (const store of stores) store.migrate();
    const schema = database.prepare("SELECT type, name FROM sqlite_schema WHERE tbl_name = 'svc_webhooks_dedup' ORDER BY name").all();
    expect(schema).toEqual([
      { type: 'table', name: 'svc_webhooks_dedup' },
      { type: 'index', name: 'svc_webhooks_dedup_expires_at_idx' },
    ]);
  });

  it('fails a claim on a table nobody created, and claims once it is migrated', async () => {
    const store = new SqliteDedupStore(db, { table: `dedup_${++tables}` });
    await expect(store.begin('evt_1', LONG)).rejects.toThrow(/no such table/);
    store.migrate();
    expect((await store.begin('evt_1', LONG)).state).toBe('claimed');
  });
});

describe('SqliteDedupStore: ordering', () => {
  const order = (version: number, object = 'msg_1'): EventOrder => ({ key: `scopescopescope1:${object}`, version });
  const objectRow = (table: string, object = 'msg_1') =>
    db.prepare(`SELECT version, version_expires_at, token, lease_expires_at FROM ${table}_order WHERE key = ?`).get(order(0, object).key);
  const rowCount = (table: string): number => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

  it('creates the objects table, the store table with _order appended, unless orderTable names another', () => {
    const database = suite.open();
    new SqliteDedupStore(database).migrate();
    new SqliteDedupStore(database, { table: 'a'.repeat(63) }).migrate();
    new SqliteDedupStore(database, { table: 'hooks', orderTable: 'objects' }).migrate();
    const tables = database.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").all();
    expect(tables).toEqual([{ name: 'a'.repeat(63) }, { name: `${'a'.repeat(63)}_order` }, { name: 'hooks' }, { name: 'objects' }, { name: 'svc_webhooks_dedup' }, { name: 'svc_webhooks_dedup_order' }]);
    const columns = database.prepare("SELECT name, type, pk FROM pragma_table_info('objects') ORDER BY cid").all();
    expect(columns).toEqual([
      { name: 'key', type: 'TEXT', pk: 1 },
      { name: 'version', type: 'REAL', pk: 0 },
      { name: 'version_expires_at', type: 'INTEGER', pk: 0 },
      { name: 'token', type: 'TEXT', pk: 0 },
      { name: 'lease_expires_at', type: 'INTEGER', pk: 0 },
    ]);
  });

  it('refuses an orderTable that is the store table, or no table name, with a WebhookOptionsError', () => {
    expect(() => new SqliteDedupStore(db, { table: 'hooks', orderTable: 'hooks' })).toThrow(new WebhookOptionsError('svc-webhooks: orderTable must be another table than table'));
    expect(() => new SqliteDedupStore(db, { orderTable: 'svc_webhooks_dedup' })).toThrow(/^svc-webhooks: orderTable must be another table than table$/);
    for (const orderTable of ['', 'Objects', 'main.objects', 'sqlite_order', 5]) {
      expect(() => new SqliteDedupStore(db, { orderTable: orderTable as string })).toThrow(/^svc-webhooks: orderTable must be a table name/);
    }
  });

  it("holds the object's lease while its event runs, then the version, kept when a stale event completes", async () => {
    const { store, table } = manualStore();
    const { token } = await claimInOrder(store, 'evt_5', order(5), 30_000);
    expect(objectRow(table)).toEqual({ version: null, version_expires_at: null, token, lease_expires_at: 1_700_000_030_000 });
    expect(await store.completeInOrder('evt_5', order(5), token, LONG)).toBe(true);
    const recorded = { version: 5, version_expires_at: 1_700_000_000_000 + LONG, token: null, lease_expires_at: null };
    expect(objectRow(table)).toEqual(recorded);
    const old = await claimInOrder(store, 'evt_4', order(4));
    expect(await store.completeInOrder('evt_4', order(4), old.token, 2 * LONG)).toBe(true);
    expect(objectRow(table)).toEqual(recorded);
  });

  it('raises an expired version even when lower, and renews the object only under its own token', async () => {
    const { store, table, advance } = manualStore();
    const first = await claimInOrder(store, 'evt_9', order(9));
    expect(await store.completeInOrder('evt_9', order(9), first.token, 100)).toBe(true);
    await advance(100);
    const next = await claimInOrder(store, 'evt_2', order(2), 1_000);
    expect(next.stale).toBe(false);
    expect(await store.renewInOrder('evt_2', order(2), next.token, 5_000)).toBe(true);
    expect(objectRow(table)).toMatchObject({ token: next.token, lease_expires_at: 1_700_000_005_100 });
    expect(await store.completeInOrder('evt_2', order(2), next.token, LONG)).toBe(true);
    expect(objectRow(table)).toMatchObject({ version: 2, token: null });
  });

  it('deleteExpired deletes the objects with neither a live lease nor a live version, with the ids', async () => {
    const harness = manualStore();
    const kept = await objectsToPurge(harness);
    expect(harness.store.deleteExpired()).toBe(4);
    expect(db.prepare(`SELECT key FROM ${harness.table}_order ORDER BY key`).all()).toEqual(kept);
    expect(harness.store.deleteExpired()).toBe(0);
  });

  it('deleteExpired deletes the ids alone where the objects table was never created, as by a migrate() of 1.0', async () => {
    const { now, advance } = manualClock();
    const table = `dedup_${++tables}`;
    db.exec(`CREATE TABLE ${table} (id TEXT PRIMARY KEY NOT NULL, token TEXT, expires_at INTEGER NOT NULL) WITHOUT ROWID`);
    const store = new SqliteDedupStore(db, { table, now });
    await claim(store, 'evt_1', 50);
    await advance(50);
    expect(store.deleteExpired()).toBe(1);
    await expect(store.beginInOrder('evt_2', order(1), LONG)).rejects.toThrow(/no such table/);
    expect(rowCount(table)).toBe(0);
  });

  it("holds the file's write lock through each ordered operation, from before its first read", async () => {
    const file = suite.file();
    const other = suite.open(file);
    other.pragma('busy_timeout = 0');
    const refusedOther: boolean[] = [];
    const store = new SqliteDedupStore(suite.open(file), {
      // Read once within each operation.
      now: () => {
        try {
          other.exec('CREATE TABLE IF NOT EXISTS other_write (v INTEGER); INSERT INTO other_write (v) VALUES (1)');
          refusedOther.push(false);
        } catch (error) {
          refusedOther.push(/database is locked/.test(String(error)));
        }
        return 1_700_000_000_000;
      },
    });
    store.migrate();
    const first = await claimInOrder(store, 'evt_1', order(1));
    expect(await store.renewInOrder('evt_1', order(1), first.token, LONG)).toBe(true);
    expect(await store.completeInOrder('evt_1', order(1), first.token, LONG)).toBe(true);
    const second = await claimInOrder(store, 'evt_2', order(2));
    expect(await store.releaseInOrder('evt_2', order(2), second.token)).toBe(true);
    expect(refusedOther).toEqual([true, true, true, true, true]);
  });

  it('reads whether a claim is stale from a driver that answers integers as BigInt', async () => {
    const database = suite.open();
    database.defaultSafeIntegers(true);
    const store = new SqliteDedupStore(database);
    store.migrate();
    const { token } = await claimInOrder(store, 'evt_5', order(5));
    expect(await store.completeInOrder('evt_5', order(5), token, LONG)).toBe(true);
    expect((await claimInOrder(store, 'evt_4', order(4))).stale).toBe(true);
  });

  it('writes nothing when a step fails midway: the claim of the event is rolled back with its object', async () => {
    const { store, table } = manualStore();
    db.exec(`CREATE TRIGGER ${table}_refuse BEFORE INSERT ON ${table}_order BEGIN SELECT RAISE(ABORT, 'the objects table refused'); END`);
    await expect(store.beginInOrder('evt_1', order(1), LONG)).rejects.toThrow('the objects table refused');
    expect(rowCount(table)).toBe(0);
    expect(db.inTransaction).toBe(false);
    db.exec(`DROP TRIGGER ${table}_refuse`);
    expect((await claimInOrder(store, 'evt_1', order(1))).stale).toBe(false);
  });

  it("runs inside a transaction the application opened on the connection, committing or rolling back with it", async () => {
    const { store, table } = manualStore();
    db.exec('BEGIN');
    const { token } = await claimInOrder(store, 'evt_1', order(1));
    db.exec('ROLLBACK');
    expect(rowCount(table)).toBe(0);
    expect(rowCount(`${table}_order`)).toBe(0);
    // The step runs when called, its promise only carrying the answer out of better-sqlite3's transaction.
    let answer: Promise<unknown> | undefined;
    db.transaction(() => {
      answer = store.beginInOrder('evt_1', order(1), LONG);
    }).immediate();
    const claimed = await answer;
    expect(claimed).toMatchObject({ state: 'claimed' });
    expect(claimed).not.toMatchObject({ token });
    expect(await store.beginInOrder('evt_2', order(2), LONG)).toEqual({ state: 'in_progress' });
  });

  it("undoes its own step alone when it fails inside the application's transaction, which stays open", async () => {
    const { store, table } = manualStore();
    db.exec(`CREATE TRIGGER ${table}_refuse BEFORE INSERT ON ${table}_order BEGIN SELECT RAISE(ABORT, 'the objects table refused'); END`);
    db.exec('BEGIN');
    try {
      db.prepare(`INSERT INTO ${table} (id, token, expires_at) VALUES ('evt_app', NULL, 1)`).run();
      await expect(store.beginInOrder('evt_1', order(1), LONG)).rejects.toThrow('the objects table refused');
      expect(db.inTransaction).toBe(true);
      expect(db.prepare(`SELECT id FROM ${table}`).all()).toEqual([{ id: 'evt_app' }]);
    } finally {
      db.exec('ROLLBACK');
      db.exec(`DROP TRIGGER ${table}_refuse`);
    }
  });
});

describe('SqliteDedupStore: answering at once', () => {
  it('registers its operations, so a claim and its settlement cost the delivery no turn of the event loop', async () => {
    const { store } = manualStore({ now: Date.now });
    expect(answersAtOnce(store)).toBeDefined();
    const delivery = await claimedAtOnce(store);
    expect(await store.begin(delivery.dedupKey, LONG)).toEqual({ state: 'done' });
  });

  it('registers its ordered operations too: an ordered claim and its settlement answer at once, and record the version', async () => {
    const { store, table } = manualStore({ now: Date.now });
    const delivery = await claimedAtOnce(store, { version: () => 7 });
    expect(await store.begin(delivery.dedupKey, LONG)).toEqual({ state: 'done' });
    expect(db.prepare(`SELECT version, token FROM ${table}_order`).all()).toEqual([{ version: 7, token: null }]);
  });

  it('rejects, never throws, from its methods when the database fails', async () => {
    const { store } = manualStore({
      now: () => {
        throw new Error('the clock failed');
      },
    });
    const at: EventOrder = { key: 'scopescopescope1:msg_1', version: 1 };
    const answers = [
      store.begin('evt_1', LONG),
      store.complete('evt_1', 'token', LONG),
      store.release('evt_1', 'token'),
      store.renew('evt_1', 'token', LONG),
      store.beginInOrder('evt_1', at, LONG),
      store.completeInOrder('evt_1', at, 'token', LONG),
      store.releaseInOrder('evt_1', at, 'token'),
      store.renewInOrder('evt_1', at, 'token', LONG),
    ];
    for (const answer of answers) await expect(answer).rejects.toThrow('the clock failed');
  });

  it('rejects an ordered answer it does not expect rather than reading it as a claim', async () => {
    const at: EventOrder = { key: 'scopescopescope1:msg_1', version: 1 };
    for (const [claimed, leased] of [[0, { stale: 0 }], [2, { stale: 0 }], [1, { stale: 'no' }], [1, undefined]] as const) {
      const odd: SqliteDatabase = {
        exec: () => undefined,
        inTransaction: false,
        prepare: (sql) => ({
          // The claim changes `claimed` rows; the event's and the object's holders are free.
          run: () => ({ changes: sql.includes('ON CONFLICT (id)') ? claimed : 0 }),
          get: () => (sql.includes('AS stale') ? leased : undefined),
        }),
      };
      await expect(new SqliteDedupStore(odd).beginInOrder('evt_1', at, LONG)).rejects.toMatchObject({ code: 'dedup_unavailable' });
    }
  });

  it('rejects an answer it does not expect rather than reading it as a claim', async () => {
    for (const changes of [2, -1, Number.NaN]) {
      const odd: SqliteDatabase = { exec: () => undefined, prepare: () => ({ run: () => ({ changes }), get: () => undefined }) };
      await expect(new SqliteDedupStore(odd).begin('evt_1', LONG)).rejects.toMatchObject({ code: 'dedup_unavailable' });
    }
  });
});

describe('SqliteDedupStore: options', () => {
  it('throws a WebhookOptionsError for a database that is neither driver, naming what it takes', () => {
    // The sqlite3 package's database: prepare and exec, but run() with a callback, answering later.
    const callbackDriver = { prepare: () => undefined, exec: () => undefined, run: () => undefined };
    for (const bad of [null, undefined, {}, 'webhooks.db', 5, { prepare: () => undefined }, callbackDriver]) {
      expect(() => new SqliteDedupStore(bad as unknown as SqliteDatabase)).toThrow(
        new WebhookOptionsError('svc-webhooks: SqliteDedupStore needs a node:sqlite DatabaseSync or a better-sqlite3 Database'),
      );
    }
  });

  it('throws a WebhookOptionsError for a bad table name, options that are no object, or a clock that is no function', () => {
    const tableMessage = new WebhookOptionsError(
      'svc-webhooks: table must be a table name of lower-case letters, digits and underscores, not starting with a digit or sqlite_, at most 63 characters',
    );
    for (const table of ['', 'Dedup', '1dedup', 'a-b', 'main.dedup', 'sqlite_dedup', 'a'.repeat(64), 'x; DROP TABLE y', 5, null]) {
      expect(() => new SqliteDedupStore(db, { table: table as string })).toThrow(tableMessage);
    }
    expect(() => new SqliteDedupStore(db, null as unknown as object)).toThrow(new WebhookOptionsError('svc-webhooks: SqliteDedupStore options must be an object'));
    expect(() => new SqliteDedupStore(db, { now: 5 as unknown as () => number })).toThrow(new WebhookOptionsError('svc-webhooks: now must be a function'));
    expect(() => new SqliteDedupStore(db, Object.freeze({ table: `_${'a'.repeat(62)}` }))).not.toThrow();
  });

  it('rejects durations that are not positive integers with a WebhookOptionsError naming them, and leaves the lease alone', async () => {
    const { store } = manualStore();
    const token = await claim(store, 'evt_1');
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      await expect(store.begin('evt_other', bad)).rejects.toThrow(
        new WebhookOptionsError(`svc-webhooks: leaseMs must be a whole number of milliseconds from 1 to ${Number.MAX_SAFE_INTEGER}`),
      );
      await expect(store.renew('evt_1', token, bad)).rejects.toThrow(/^svc-webhooks: leaseMs must/);
      await expect(store.complete('evt_1', token, bad)).rejects.toThrow(/^svc-webhooks: retentionMs must/);
    }
    expect(await store.begin('evt_other', LONG)).toMatchObject({ state: 'claimed' });
    expect(await store.complete('evt_1', token, LONG)).toBe(true);
  });
});

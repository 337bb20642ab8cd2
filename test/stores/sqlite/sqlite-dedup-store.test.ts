import { describe, expect, it } from 'vitest';
import { WebhookOptionsError } from '../../../src/base/options-error.js';
import { answersAtOnce } from '../../../src/stores/dedup-store.js';
import type { SqliteDatabase } from '../../../src/stores/sqlite/database.js';
import { SqliteDedupStore, type SqliteDedupStoreOptions } from '../../../src/stores/sqlite/sqlite-dedup-store.js';
import { claim, describeDedupContract, manualClock, type DedupHarness } from '../../helpers/dedup-store-contract.js';
import { claimedAtOnce } from '../../helpers/claimed-at-once.js';
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

describe('SqliteDedupStore: answering at once', () => {
  it('registers its operations, so a claim and its settlement cost the delivery no turn of the event loop', async () => {
    const { store } = manualStore({ now: Date.now });
    expect(answersAtOnce(store)).toBeDefined();
    const delivery = await claimedAtOnce(store);
    expect(await store.begin(delivery.dedupKey, LONG)).toEqual({ state: 'done' });
  });

  it('rejects, never throws, from its methods when the database fails', async () => {
    const { store } = manualStore({
      now: () => {
        throw new Error('the clock failed');
      },
    });
    const answers = [store.begin('evt_1', LONG), store.complete('evt_1', 'token', LONG), store.release('evt_1', 'token'), store.renew('evt_1', 'token', LONG)];
    for (const answer of answers) await expect(answer).rejects.toThrow('the clock failed');
  });

  it('rejects an answer it does not expect rather than reading it as a claim', async () => {
    for (const row of [{ token: 'another-token' }, { token: null }, {}]) {
      const odd: SqliteDatabase = { exec: () => undefined, prepare: () => ({ run: () => ({ changes: 0 }), get: () => row }) };
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

import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { D1_QUEUE_DEDUP_TABLE, D1_SCHEMA_FILE, renderD1SchemaFile } from '../../../sql/d1-schema-file.js';
import { WebhookOptionsError } from '../../../src/base/options-error.js';
import { WebhookDedupError } from '../../../src/core/errors.js';
import type { EventOrder } from '../../../src/core/event-order.js';
import type { D1Database } from '../../../src/stores/d1/d1-database.js';
import { D1DedupStore, type D1DedupStoreOptions } from '../../../src/stores/d1/d1-dedup-store.js';
import { answersAtOnce } from '../../../src/stores/dedup-store.js';
import { claim, describeDedupContract, manualClock, type DedupHarness } from '../../helpers/dedup-store-contract.js';
import { miniflareD1 } from '../../helpers/miniflare-d1.js';
import { claimInOrder, describeOrderingContract, objectsToPurge } from '../../helpers/ordering-store-contract.js';

const LONG = 60_000;
// Each statement is a round trip from this process to workerd through miniflare's proxy: the contract's 50
// concurrent claims take seconds on a loaded machine.
vi.setConfig({ testTimeout: 30_000 });
const d1 = await miniflareD1();
const { db } = d1;
afterAll(() => d1.close());
let tables = 0;

/** A migrated store on a table of its own, on a clock the test moves by hand. */
async function manualStore(options: D1DedupStoreOptions = {}): Promise<DedupHarness & { store: D1DedupStore; table: string }> {
  const { now, advance } = manualClock();
  const table = `dedup_${++tables}`;
  const store = new D1DedupStore(db, { table, now, ...options });
  await store.migrate();
  return { store, table, advance };
}

const rows = async (sql: string): Promise<unknown[]> => ((await (db as unknown as { prepare(sql: string): { all(): Promise<{ results: unknown[] }> } }).prepare(sql).all()).results);

describeDedupContract('D1DedupStore on miniflare D1', () => manualStore());
describeOrderingContract('D1DedupStore on miniflare D1', () => manualStore());

describe('D1DedupStore: the table', () => {
  it('holds the token with the lease end while leased, then NULL with the retention end once done', async () => {
    const { store, table } = await manualStore();
    const token = await claim(store, 'evt_1', 30_000);
    expect(await rows(`SELECT token, expires_at FROM ${table}`)).toEqual([{ token, expires_at: 1_700_000_030_000 }]);
    await store.complete('evt_1', token, 4 * 24 * 3600_000);
    expect(await rows(`SELECT token, expires_at FROM ${table}`)).toEqual([{ token: null, expires_at: 1_700_000_000_000 + 4 * 24 * 3600_000 }]);
  });

  it('claims each of many concurrent begins on one event exactly once', async () => {
    const { store } = await manualStore();
    for (let event = 0; event < 4; event++) {
      const answers = await Promise.all(Array.from({ length: 6 }, () => store.begin(`evt_${event}`, LONG)));
      expect(answers.filter((answer) => answer.state === 'claimed')).toHaveLength(1);
      expect(answers.filter((answer) => answer.state === 'in_progress')).toHaveLength(5);
    }
  });

  it('deleteExpired removes expired leases and forgotten done ids, nothing live', async () => {
    const { store, table, advance } = await manualStore();
    await claim(store, 'evt_lease_expired', 50);
    await store.complete('evt_done_expired', await claim(store, 'evt_done_expired'), 50);
    await claim(store, 'evt_lease_live');
    await store.complete('evt_done_live', await claim(store, 'evt_done_live'), LONG);
    await advance(50);
    expect(await store.deleteExpired()).toBe(2);
    expect(await rows(`SELECT id FROM ${table} ORDER BY id`)).toEqual([{ id: 'evt_done_live' }, { id: 'evt_lease_live' }]);
    expect(await store.deleteExpired()).toBe(0);
  });

  it('migrate is idempotent, and creates what the shipped migration does, for either of its stores, with its objects table', async () => {
    const shipped = readFileSync(D1_SCHEMA_FILE, 'utf8');
    for (const table of [undefined, D1_QUEUE_DEDUP_TABLE]) {
      const store = new D1DedupStore(db, { table });
      await store.migrate();
      await store.migrate();
      const name = table ?? 'svc_webhooks_dedup';
      const created = (await rows(`SELECT sql FROM sqlite_master WHERE tbl_name IN ('${name}', '${name}_order') ORDER BY name`)) as Array<{ sql: string }>;
      expect(created).toHaveLength(3);
      for (const { sql } of created) expect(shipped).toContain(`${sql.replace(/^CREATE (TABLE|INDEX) /, 'CREATE $1 IF NOT EXISTS ')};`);
      expect((await store.begin('evt_default', LONG)).state).toBe('claimed');
      expect((await claimInOrder(store, 'evt_ordered', { key: 'scopescopescope1:msg_1', version: 1 })).stale).toBe(false);
    }
  });

  it('sql/svc-webhooks-d1.sql is what sql/d1-schema-file.ts produces (npm run sql:d1)', () => {
    expect(readFileSync(D1_SCHEMA_FILE, 'utf8')).toBe(renderD1SchemaFile());
  });

  it('registers no operations that answer at once: D1 answers over the network', async () => {
    const { store } = await manualStore();
    expect(answersAtOnce(store)).toBeUndefined();
  });

  it('refuses an answer to a claim that is not its token', async () => {
    const lying = { ...db, prepare: () => ({ bind: () => ({ first: async () => ({ token: 'not-mine' }), run: async () => ({ meta: { changes: 1 } }) }) }), batch: db.batch } as unknown as D1Database;
    await expect(new D1DedupStore(lying).begin('evt_1', LONG)).rejects.toBeInstanceOf(WebhookDedupError);
  });
});

describe('D1DedupStore: ordering', () => {
  const order = (version: number, object = 'msg_1'): EventOrder => ({ key: `scopescopescope1:${object}`, version });
  const objectRow = async (table: string, object = 'msg_1') =>
    (await rows(`SELECT version, version_expires_at, token, lease_expires_at FROM ${table}_order WHERE key = '${order(0, object).key}'`))[0];
  const count = async (table: string): Promise<unknown> => ((await rows(`SELECT count(*) AS n FROM ${table}`))[0] as { n: number }).n;

  it("holds the object's lease while its event runs, then the version, kept when a stale event completes", async () => {
    const { store, table } = await manualStore();
    const { token } = await claimInOrder(store, 'evt_5', order(5), 30_000);
    expect(await objectRow(table)).toEqual({ version: null, version_expires_at: null, token, lease_expires_at: 1_700_000_030_000 });
    expect(await store.completeInOrder('evt_5', order(5), token, LONG)).toBe(true);
    const recorded = { version: 5, version_expires_at: 1_700_000_000_000 + LONG, token: null, lease_expires_at: null };
    expect(await objectRow(table)).toEqual(recorded);
    const old = await claimInOrder(store, 'evt_4', order(4));
    expect(await store.completeInOrder('evt_4', order(4), old.token, 2 * LONG)).toBe(true);
    expect(await objectRow(table)).toEqual(recorded);
  });

  it('leaves no lease on the object when a begin finds its event live, and takes over an expired lease', async () => {
    const { store, table, advance } = await manualStore();
    const done = await claimInOrder(store, 'evt_1', order(1, 'msg_2'));
    expect(await store.completeInOrder('evt_1', order(1, 'msg_2'), done.token, LONG)).toBe(true);
    expect(await store.beginInOrder('evt_1', order(1), LONG)).toEqual({ state: 'done' });
    expect(await count(`${table}_order`)).toBe(1);
    await claimInOrder(store, 'evt_2', order(2), 50);
    await advance(50);
    const next = await claimInOrder(store, 'evt_3', order(3), 1_000);
    expect(await objectRow(table)).toMatchObject({ token: next.token, lease_expires_at: 1_700_000_001_050 });
  });

  it('renews the object only with the event, under its own token', async () => {
    const { store, table, advance } = await manualStore();
    const held = await claimInOrder(store, 'evt_2', order(2), 1_000);
    expect(await store.renewInOrder('evt_2', order(2), held.token, 5_000)).toBe(true);
    expect(await objectRow(table)).toMatchObject({ token: held.token, lease_expires_at: 1_700_000_005_000 });
    await advance(5_000);
    // The event's lease ran out: renewing it moves neither lease.
    expect(await store.renewInOrder('evt_2', order(2), held.token, 5_000)).toBe(false);
    expect(await objectRow(table)).toMatchObject({ token: held.token, lease_expires_at: 1_700_000_005_000 });
  });

  it('writes nothing of a step whose last statement fails: the batch is one transaction', async () => {
    const { store, table } = await manualStore();
    const { token } = await claimInOrder(store, 'evt_1', order(1));
    await (db as unknown as { exec(sql: string): Promise<unknown> }).exec(
      `CREATE TRIGGER ${table}_refuse BEFORE UPDATE ON ${table} BEGIN SELECT RAISE(ABORT, 'the ids table refused'); END`,
    );
    await expect(store.completeInOrder('evt_1', order(1), token, LONG)).rejects.toThrow('the ids table refused');
    expect(await objectRow(table)).toMatchObject({ version: null, token });
  });

  it('gives one claim to events of one object begun at once from several stores, as from several isolates', async () => {
    const { table } = await manualStore();
    const stores = Array.from({ length: 4 }, () => new D1DedupStore(db, { table }));
    const results = await Promise.all(stores.flatMap((store, i) => [store.beginInOrder(`evt_${i}`, order(i), LONG), store.beginInOrder('evt_copy', order(9), LONG)]));
    expect(results.filter((result) => result.state === 'claimed')).toHaveLength(1);
    expect(await rows(`SELECT count(*) AS n FROM ${table} WHERE expires_at > 0`)).toEqual([{ n: 1 }]);
  });

  it('deleteExpired deletes the objects with neither a live lease nor a live version, with the ids', async () => {
    const harness = await manualStore();
    const kept = await objectsToPurge(harness);
    expect(await harness.store.deleteExpired()).toBe(4);
    expect(await rows(`SELECT key FROM ${harness.table}_order ORDER BY key`)).toEqual(kept);
    expect(await harness.store.deleteExpired()).toBe(0);
  });

  it('deleteExpired deletes the ids alone where the objects table was never created, as by the migration of 1.0', async () => {
    const { now, advance } = manualClock();
    const table = `dedup_${++tables}`;
    await db.prepare(`CREATE TABLE ${table} (id TEXT PRIMARY KEY NOT NULL, token TEXT, expires_at INTEGER NOT NULL) WITHOUT ROWID`).run();
    const store = new D1DedupStore(db, { table, now });
    await claim(store, 'evt_1', 50);
    await advance(50);
    expect(await store.deleteExpired()).toBe(1);
    await expect(store.beginInOrder('evt_2', order(1), LONG)).rejects.toThrow(/no such table/);
    expect(await count(table)).toBe(0);
  });

  it('creates the objects table the store table with _order appended names, unless orderTable names another', async () => {
    const table = `dedup_${++tables}`;
    await new D1DedupStore(db, { table, orderTable: `${table}_objects` }).migrate();
    expect(await rows(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '${table}%' ORDER BY name`)).toEqual([{ name: table }, { name: `${table}_objects` }]);
  });

  it('rejects an ordered claim D1 answers unexpectedly rather than reading it as one', async () => {
    const answers: unknown[][] = [
      // The object leased, but the event claimed under another token, or not at all.
      [{ results: [{ stale: 0 }] }, { results: [{ token: 'not-mine' }] }, { results: [] }],
      [{ results: [{ stale: 0 }] }, { results: [] }, { results: [] }],
      [{ results: [{ stale: 'no' }] }, { results: ['own'] }, { results: [] }],
      [{ results: [{ stale: 0 }] }, {}, { results: [] }],
      [],
    ];
    for (const answer of answers) {
      const odd = {
        prepare: () => ({ bind: (...params: unknown[]) => ({ params }) }),
        // The claim's own token where the answer says 'own': the second parameter of the statement that claims.
        batch: async (statements: Array<{ params: unknown[] }>) =>
          answer.map((result, index) => ((result as { results?: unknown[] }).results?.[0] === 'own' ? { results: [{ token: statements[index]!.params[1] }] } : result)),
      } as unknown as D1Database;
      await expect(new D1DedupStore(odd).beginInOrder('evt_1', order(1), LONG)).rejects.toMatchObject({ code: 'dedup_unavailable' });
    }
  });

  it('rejects an ordered completion, release or renewal whose answer counts no rows, rather than reading it as a lost lease', async () => {
    const odd = {
      prepare: () => ({ bind: () => ({}) }),
      batch: async (statements: unknown[]) => statements.map(() => ({ meta: {} })),
    } as unknown as D1Database;
    const store = new D1DedupStore(odd);
    await expect(store.completeInOrder('evt_1', order(1), 'token', LONG)).rejects.toMatchObject({ code: 'dedup_unavailable' });
    await expect(store.releaseInOrder('evt_1', order(1), 'token')).rejects.toMatchObject({ code: 'dedup_unavailable' });
    await expect(store.renewInOrder('evt_1', order(1), 'token', LONG)).rejects.toMatchObject({ code: 'dedup_unavailable' });
  });
});

describe('D1DedupStore: options', () => {
  it.each([
    ['no database', undefined],
    ['a database without batch', { prepare: () => undefined }],
    ['a string', 'DB'],
  ])('refuses %s', (_what, given) => {
    expect(() => new D1DedupStore(given as unknown as D1Database)).toThrow(WebhookOptionsError);
  });

  it.each([['Bad'], ['sqlite_x'], ['1st'], ['a'.repeat(64)], [42]])('refuses the table name %s', (table) => {
    expect(() => new D1DedupStore(db, { table: table as string })).toThrow(WebhookOptionsError);
  });

  it('refuses an orderTable that is the store table, or no table name', () => {
    expect(() => new D1DedupStore(db, { table: 'hooks', orderTable: 'hooks' })).toThrow(new WebhookOptionsError('svc-webhooks: orderTable must be another table than table'));
    for (const orderTable of ['', 'Objects', 'sqlite_order', 5]) {
      expect(() => new D1DedupStore(db, { orderTable: orderTable as string })).toThrow(/^svc-webhooks: orderTable must be a table name/);
    }
  });

  it('refuses a clock that is no function, and options that are no object', () => {
    expect(() => new D1DedupStore(db, { now: 5 as unknown as () => number })).toThrow(WebhookOptionsError);
    expect(() => new D1DedupStore(db, 'x' as unknown as D1DedupStoreOptions)).toThrow(WebhookOptionsError);
  });
});

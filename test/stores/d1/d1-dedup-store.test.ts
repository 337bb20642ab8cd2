import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { D1_QUEUE_DEDUP_TABLE, D1_SCHEMA_FILE, renderD1SchemaFile } from '../../../sql/d1-schema-file.js';
import { WebhookOptionsError } from '../../../src/base/options-error.js';
import { WebhookDedupError } from '../../../src/core/errors.js';
import type { D1Database } from '../../../src/stores/d1/d1-database.js';
import { D1DedupStore, type D1DedupStoreOptions } from '../../../src/stores/d1/d1-dedup-store.js';
import { answersAtOnce } from '../../../src/stores/dedup-store.js';
import { claim, describeDedupContract, manualClock, type DedupHarness } from '../../helpers/dedup-store-contract.js';
import { miniflareD1 } from '../../helpers/miniflare-d1.js';

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

  it('migrate is idempotent, and creates what the shipped migration does, for either of its tables', async () => {
    const shipped = readFileSync(D1_SCHEMA_FILE, 'utf8');
    for (const table of [undefined, D1_QUEUE_DEDUP_TABLE]) {
      const store = new D1DedupStore(db, { table });
      await store.migrate();
      await store.migrate();
      const name = table ?? 'svc_webhooks_dedup';
      const created = (await rows(`SELECT sql FROM sqlite_master WHERE tbl_name = '${name}' ORDER BY name`)) as Array<{ sql: string }>;
      expect(created).toHaveLength(2);
      for (const { sql } of created) expect(shipped).toContain(`${sql.replace(/^CREATE (TABLE|INDEX) /, 'CREATE $1 IF NOT EXISTS ')};`);
      expect((await store.begin('evt_default', LONG)).state).toBe('claimed');
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

  it('refuses a clock that is no function, and options that are no object', () => {
    expect(() => new D1DedupStore(db, { now: 5 as unknown as () => number })).toThrow(WebhookOptionsError);
    expect(() => new D1DedupStore(db, 'x' as unknown as D1DedupStoreOptions)).toThrow(WebhookOptionsError);
  });
});

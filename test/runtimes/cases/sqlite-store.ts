/**
 * svc-webhooks/sqlite on node:sqlite, where the runtime has it (Node 22.5 and
 * later, Bun, Deno): the store's leases, retention and purge, the Fetch entry
 * deduplicating through it, and markProcessed in a transaction. Where it is
 * missing (Node 20, workerd) each case checks only that the runtime is one
 * known to lack it, so that a runtime losing it fails rather than skips.
 */
import { sign, WebhookOptionsError } from 'svc-webhooks';
import { verifyWebhook } from 'svc-webhooks/fetch';
import { markProcessed, migrateProcessedEvents, purgeProcessed, SqliteDedupStore, type SqliteDatabase } from 'svc-webhooks/sqlite';
import { assert, assertEqual, thrown, type ConformanceCase } from '../harness.js';
import { runtimeName } from '../runtime-name.js';

const SECRET = 'whsec_c3FsaXRlLXN0b3JlLWNvbmZvcm1hbmNlLXNlY3JldA==';

interface NodeSqlite {
  readonly DatabaseSync: new (path: string) => SqliteDatabase & { close(): void };
}

/** node:sqlite, or undefined after checking that this runtime is known to lack it. */
function nodeSqlite(): NodeSqlite | undefined {
  // Loaded by getBuiltinModule, not import(): workerd's bundle takes no import of a module it lacks.
  const runtime = (globalThis as { process?: { getBuiltinModule?(id: string): unknown } }).process;
  let sqlite: unknown;
  try {
    sqlite = runtime?.getBuiltinModule?.('node:sqlite');
  } catch {
    sqlite = undefined;
  }
  if (sqlite !== undefined) return sqlite as NodeSqlite;
  const { name, version } = runtimeName();
  const [major = 0, minor = 0] = version.split('.').map(Number);
  assert(name === 'workerd' || (name === 'node' && (major < 22 || (major === 22 && minor < 5))), `${name} ${version} has no node:sqlite`);
  return undefined;
}

/** Runs `check` on a fresh in-memory node:sqlite database, closed after, where the runtime has node:sqlite. */
async function onNodeSqlite(check: (db: SqliteDatabase) => Promise<void>): Promise<void> {
  const sqlite = nodeSqlite();
  if (sqlite === undefined) return;
  const db = new sqlite.DatabaseSync(':memory:');
  try {
    await check(db);
  } finally {
    db.close();
  }
}

export const cases: readonly ConformanceCase[] = [
  {
    name: 'sqlite: SqliteDedupStore on node:sqlite claims, renews, completes, lets a lease run out and purges',
    run: () =>
      onNodeSqlite(async (db) => {
        let now = 1_700_000_000_000;
        const store = new SqliteDedupStore(db, { now: () => now });
        store.migrate();
        const first = await store.begin('evt_1', 1_000);
        assert(first.state === 'claimed', 'a first claim');
        assertEqual(await store.begin('evt_1', 1_000), { state: 'in_progress' }, 'a second begin');
        assertEqual(await store.renew('evt_1', first.token, 5_000), true, 'renew');
        now += 2_000;
        assertEqual(await store.begin('evt_1', 1_000), { state: 'in_progress' }, 'a begin past the first lease');
        assertEqual(await store.complete('evt_1', first.token, 10_000), true, 'complete');
        assertEqual(await store.begin('evt_1', 1_000), { state: 'done' }, 'a begin once done');
        const lost = await store.begin('evt_2', 1_000);
        assert(lost.state === 'claimed', 'a claim that will run out');
        now += 1_000;
        assertEqual(await store.complete('evt_2', lost.token, 10_000), false, 'a complete after the lease ran out');
        const retry = await store.begin('evt_2', 1_000);
        assert(retry.state === 'claimed' && retry.token !== lost.token, 'the retry claims');
        assertEqual(await store.release('evt_2', retry.token), true, 'release');
        now += 10_000;
        assertEqual(store.deleteExpired(), 1, 'expired rows deleted');
      }),
  },
  {
    name: 'sqlite: the Fetch entry on a node:sqlite store processes a delivery once and answers its duplicate',
    run: () =>
      onNodeSqlite(async (db) => {
        const store = new SqliteDedupStore(db);
        store.migrate();
        let handled = 0;
        const handler = verifyWebhook({ secret: SECRET, dedup: { store } }, () => void handled++);
        const body = JSON.stringify({ id: 'msg_sqlite_1', type: 'webhook.test', data: { object: { id: 'we_1' } } });
        const deliver = () => handler(new Request('http://receiver.test/webhooks', { method: 'POST', body, headers: sign(body, { id: 'msg_sqlite_1', timestamp: new Date(), secret: SECRET }) }));
        const answers = [await deliver(), await deliver()];
        assertEqual([answers.map(({ status }) => status), handled], [[204, 200], 1], 'answers and handler calls');
      }),
  },
  {
    name: 'sqlite: markProcessed on node:sqlite records in the transaction, rolls back with it, and is refused outside one',
    run: () =>
      onNodeSqlite(async (db) => {
        migrateProcessedEvents(db);
        db.exec('BEGIN IMMEDIATE');
        assertEqual(markProcessed(db, 'key_1'), true, 'a first mark');
        db.exec('ROLLBACK');
        db.exec('BEGIN IMMEDIATE');
        assertEqual([markProcessed(db, 'key_1'), markProcessed(db, 'key_1')], [true, false], 'marks after the rollback');
        db.exec('COMMIT');
        assert(thrown(() => markProcessed(db, 'key_2'), 'outside a transaction') instanceof WebhookOptionsError, 'a WebhookOptionsError outside a transaction');
        assertEqual(purgeProcessed(db), 0, 'nothing old to purge');
      }),
  },
];

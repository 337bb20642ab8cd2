/**
 * Two OS processes on one SQLite file in WAL mode, as two receivers on one
 * machine: claiming the same events at once, each is claimed exactly once;
 * and a process killed while its handler runs leaves a lease that runs out,
 * after which a retry claims the event once; racing the events of one object,
 * one runs at a time, each once, and told stale exactly when a higher version
 * completed before its claim.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { SqliteDedupStore } from '../../../src/stores/sqlite/sqlite-dedup-store.js';
import { keyOf } from '../../helpers/signed-request.js';
import { sqliteSuite } from '../../helpers/sqlite-suite.js';
import { until } from '../../helpers/until.js';

const suite = sqliteSuite();
const EVENTS = 500;
const ORDERED_EVENTS = 60;
const LEASE_MS = 1_000;

function claimer(file: string, table: string, ...command: string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'test/helpers/sqlite-claimer-process.ts', file, table, ...command], { stdio: ['pipe', 'pipe', 'inherit'] });
}

/** The lines `child` prints, one at a time. */
function linesOf(child: ChildProcess): () => Promise<string> {
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return async () => {
    const { value, done } = await lines.next();
    if (done === true) throw new Error('the process ended without a line');
    return value;
  };
}

/**
 * Two claimers on `file` running `command` over `count` events, started together once both are
 * loaded, so that their claims overlap; answers the JSON line each printed at its end.
 */
async function raced(file: string, command: string, count: number): Promise<string[][]> {
  const children = [claimer(file, 'dedup', command, String(count)), claimer(file, 'dedup', command, String(count))];
  try {
    const lines = children.map(linesOf);
    expect(await Promise.all(lines.map((next) => next()))).toEqual(['ready', 'ready']);
    for (const child of children) child.stdin!.write('go\n');
    const answers = (await Promise.all(lines.map((next) => next()))).map((line) => JSON.parse(line) as string[]);
    // Each took part: the claims met on the file rather than one process finishing first.
    for (const own of answers) expect(own.length).toBeGreaterThan(0);
    return answers;
  } finally {
    for (const child of children) child.kill('SIGKILL');
  }
}

describe('two processes on one WAL file', () => {
  it(`claim each of ${EVENTS} events exactly once between them`, async () => {
    const file = suite.file();
    const store = new SqliteDedupStore(suite.open(file), { table: 'dedup' });
    store.migrate();
    const all = (await raced(file, 'claim', EVENTS)).flat();
    expect(all).toHaveLength(EVENTS);
    expect(new Set(all).size).toBe(EVENTS);
    for (let i = 0; i < EVENTS; i++) expect(await store.begin(`evt_${i}`, LEASE_MS)).toEqual({ state: 'done' });
  }, 60_000);

  it(`run ${ORDERED_EVENTS} events of one object one at a time, each once, stale exactly after a higher version`, async () => {
    const file = suite.file();
    const db = suite.open(file);
    new SqliteDedupStore(db, { table: 'dedup' }).migrate();
    db.exec("CREATE TABLE dedup_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, step TEXT NOT NULL, stale INTEGER NOT NULL)");
    const ran = (await raced(file, 'order', ORDERED_EVENTS)).flat();
    expect(ran.sort()).toEqual(Array.from({ length: ORDERED_EVENTS }, (_, i) => `evt_${i}`).sort());
    const log = db.prepare('SELECT id, step, stale FROM dedup_log ORDER BY seq').all() as Array<{ id: string; step: string; stale: number }>;
    expect(log).toHaveLength(2 * ORDERED_EVENTS);
    let highest = -1;
    for (let i = 0; i < log.length; i += 2) {
      const [start, end] = [log[i]!, log[i + 1]!];
      // Nothing of another event between an event's start and its end.
      expect([start.step, end.step, end.id]).toEqual(['start', 'end', start.id]);
      const version = Number(start.id.slice('evt_'.length));
      expect(start.stale, start.id).toBe(highest > version ? 1 : 0);
      highest = Math.max(highest, version);
    }
  }, 60_000);

  it('leave a lease of a process killed mid-handler to run out, then a retry claims the event once', async () => {
    const file = suite.file();
    const store = new SqliteDedupStore(suite.open(file), { table: 'dedup' });
    store.migrate();
    const holder = claimer(file, 'dedup', 'hold', String(LEASE_MS));
    try {
      expect(await linesOf(holder)()).toBe('claimed');
      // Renewed by the living process past several of its leases.
      const renewedPast = Date.now() + 3 * LEASE_MS;
      await until(async () => {
        expect(await store.begin(keyOf('evt_1'), LEASE_MS)).toEqual({ state: 'in_progress' });
        return Date.now() > renewedPast;
      });
    } finally {
      holder.kill('SIGKILL');
      await once(holder, 'exit');
    }
    const claims: string[] = [];
    await until(async () => {
      const result = await store.begin(keyOf('evt_1'), 60_000);
      if (result.state === 'claimed') claims.push(result.token);
      else expect(result).toEqual({ state: 'in_progress' });
      return claims.length > 0;
    });
    const retries = await Promise.all([store.begin(keyOf('evt_1'), 60_000), new SqliteDedupStore(suite.open(file), { table: 'dedup' }).begin(keyOf('evt_1'), 60_000)]);
    expect(retries).toEqual([{ state: 'in_progress' }, { state: 'in_progress' }]);
    expect(await store.complete(keyOf('evt_1'), claims[0]!, 60_000)).toBe(true);
    expect(await store.begin(keyOf('evt_1'), 60_000)).toEqual({ state: 'done' });
  }, 30_000);
});

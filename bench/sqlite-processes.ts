/**
 * `npm run bench:sqlite`: claims per second of SqliteDedupStore (as built,
 * on better-sqlite3) on one WAL file, by one process and by two at once.
 * Each claimer is a process of its own, as a receiver is, claiming and then
 * completing one event after another, as a receiver whose handler takes no
 * time: `one` is a process alone with `BENCH_EVENTS` events, `two apart` two
 * processes with as many each, all different, `two racing` two processes on
 * the same `BENCH_EVENTS` events, each in its own shuffled order, so that
 * every event is claimed by one and refused to the other. The file holds
 * `BENCH_STORED` done events first, with `synchronous = BENCH_SYNCHRONOUS`
 * (`NORMAL` by default, or `FULL`). Each round runs every layout on a new
 * file; prints the median and quartiles of the rounds' events claimed per
 * second and the writes that waited out the busy timeout (each tried
 * again), and checks that every event was claimed exactly once.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { built } from './built.js';
import { quartilesOf } from './cpu-rounds.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 5_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const STORED = Number(process.env.BENCH_STORED ?? 10_000);
const LEASE_MS = 60_000;
const RETENTION_MS = 3 * 24 * 3_600_000;
const TABLE = 'svc_webhooks_dedup';
const SYNCHRONOUS = process.env.BENCH_SYNCHRONOUS ?? 'NORMAL';
if (SYNCHRONOUS !== 'NORMAL' && SYNCHRONOUS !== 'FULL') throw new Error('BENCH_SYNCHRONOUS is NORMAL or FULL');

/**
 * What a claimer prints at its end: the events it claimed, its time from `go` to its last completion, and
 * how many of its writes waited out the busy timeout.
 */
interface Claimed {
  readonly ids: string[];
  readonly ms: number;
  readonly busy: number;
}

/** One round of a layout: events claimed per second, and writes that waited out the busy timeout. */
interface Round {
  readonly perSecond: number;
  readonly busy: number;
}

/** The layouts: the event ids each process claims, in order. */
const LAYOUTS: Record<string, () => string[][]> = {
  one: () => [ids('a', EVENTS)],
  'two apart': () => [ids('a', EVENTS), ids('b', EVENTS)],
  'two racing': () => [shuffled(ids('a', EVENTS)), shuffled(ids('a', EVENTS))],
};

function ids(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `scopescopescope1:evt_${prefix}${String(i).padStart(23, '0')}`);
}

function shuffled(items: string[]): string[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** A WAL file at `file`, its table migrated and holding `STORED` done events. */
async function filledFile(file: string): Promise<void> {
  const { SqliteDedupStore } = await built<typeof import('../src/stores/sqlite/index.js')>('src/stores/sqlite/index.js');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  new SqliteDedupStore(db).migrate();
  const insert = db.prepare(`INSERT INTO ${TABLE} (id, token, expires_at) VALUES (?, NULL, ?)`);
  db.transaction(() => {
    for (let i = 0; i < STORED; i++) insert.run(`stored:evt_stored_${i}`, Date.now() + RETENTION_MS);
  })();
  db.close();
}

/** The next line each of `readers` reads; rejects when one's process ends first. */
function nextLines(readers: readonly Interface[]): Promise<string[]> {
  const next = async (reader: Interface): Promise<string> => {
    const ended = once(reader, 'close').then(() => Promise.reject(new Error('a claimer ended without a line')));
    const [line] = (await Promise.race([once(reader, 'line'), ended])) as [string];
    return line;
  };
  return Promise.all(readers.map(next));
}

/** Runs one claimer per list of `plan` on `file`, started together once all are loaded. */
async function claimsPerSecond(file: string, plan: string[][]): Promise<Round> {
  const self = fileURLToPath(import.meta.url);
  const children = plan.map((own) => {
    const child = spawn(process.execPath, [...process.execArgv, self, 'claimer', file], { stdio: ['pipe', 'pipe', 'inherit'] });
    child.stdin.write(`${JSON.stringify(own)}\n`);
    return child;
  });
  try {
    const readers = children.map((child) => createInterface({ input: child.stdout! }));
    if ((await nextLines(readers)).some((line) => line !== 'ready')) throw new Error('a claimer did not start');
    for (const child of children) child.stdin!.write('go\n');
    const answers = (await nextLines(readers)).map((line) => JSON.parse(line) as Claimed);
    const claimed = answers.flatMap((answer) => answer.ids);
    const offered = new Set(plan.flat());
    if (claimed.length !== offered.size || new Set(claimed).size !== offered.size) {
      throw new Error(`${claimed.length} claims of ${offered.size} events: each must be claimed exactly once`);
    }
    const busy = answers.reduce((sum, answer) => sum + answer.busy, 0);
    return { perSecond: (claimed.length * 1000) / Math.max(...answers.map((answer) => answer.ms)), busy };
  } finally {
    await Promise.all(children.map((child) => (child.exitCode === null ? once(child, 'exit') : undefined)));
  }
}

/**
 * A claimer: reads its ids, prints `ready`, waits for `go`, then claims and completes each it can, with
 * better-sqlite3's busy timeout (5 s); prints what it claimed.
 */
async function claimer(file: string): Promise<void> {
  const { SqliteDedupStore } = await built<typeof import('../src/stores/sqlite/index.js')>('src/stores/sqlite/index.js');
  const db = new Database(file);
  db.pragma(`synchronous = ${SYNCHRONOUS}`);
  const store = new SqliteDedupStore(db);
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  const own = JSON.parse((await lines.next()).value as string) as string[];
  console.log('ready');
  await lines.next();
  const started = performance.now();
  const claimed: string[] = [];
  let busy = 0;
  /** `write`, again each time it waited out the busy timeout, as a sender retries a claim refused with a 503. */
  const retried = async <T>(write: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await write();
      } catch (error) {
        if ((error as { code?: unknown }).code !== 'SQLITE_BUSY') throw error;
        busy++;
      }
    }
  };
  for (const id of own) {
    const begun = await retried(() => store.begin(id, LEASE_MS));
    if (begun.state !== 'claimed') continue;
    if (!(await retried(() => store.complete(id, begun.token, RETENTION_MS)))) throw new Error(`lost the lease on ${id}`);
    claimed.push(id);
  }
  const ms = performance.now() - started;
  db.close();
  // Exits once the line is written: stdin's reader would keep the process alive, and an exit before would cut the line.
  process.stdout.write(`${JSON.stringify({ ids: claimed, ms, busy } satisfies Claimed)}\n`, () => process.exit(0));
}

if (process.argv[2] === 'claimer') {
  await claimer(process.argv[3]!);
} else {
  const dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-bench-sqlite-'));
  try {
    const rounds = new Map<string, Round[]>(Object.keys(LAYOUTS).map((layout) => [layout, []]));
    let files = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const [layout, plan] of Object.entries(LAYOUTS)) {
        const file = join(dir, `dedup-${++files}.db`);
        await filledFile(file);
        rounds.get(layout)!.push(await claimsPerSecond(file, plan()));
      }
    }
    const count = (n: number): string => Math.round(n).toLocaleString('en-US');
    console.log(
      `Node ${process.version}, better-sqlite3, one WAL file with synchronous = ${SYNCHRONOUS} holding ${count(STORED)} done events; ` +
        `${ROUNDS} rounds of ${count(EVENTS)} events a process\n`,
    );
    console.log("| processes | events claimed and completed per second (median) | rounds' quartiles | writes that waited out the busy timeout |\n|---|---:|---:|---:|");
    for (const [layout, results] of rounds) {
      const [p25, median, p75] = quartilesOf(results.map((result) => result.perSecond));
      const busy = results.reduce((sum, result) => sum + result.busy, 0);
      console.log(`| ${layout} | ${count(median)} | ${count(p25)}–${count(p75)} | ${busy} |`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

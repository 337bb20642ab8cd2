/**
 * pg-boss 10 (`pg-boss`), 11 (`pg-boss11`) and 12 (`pg-boss12`, the npm
 * aliases), for specs that run on each: what differs between them for the
 * tests (how the class is exported, how one worker is stopped, where
 * finished jobs are kept, how a job's expiry reads back), behind one
 * interface. Each major is loaded only when a spec asks for it: 11 and 12
 * need Node 22, which the run may not have.
 *
 * The majors under test are those the running Node can load, or those
 * `PG_BOSS_MAJORS` names (`PG_BOSS_MAJORS=11,12`), which must all be
 * loadable here.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { PgBossInstance } from '../../src/queues/pg-boss/index.js';

/** The part of a pg-boss instance the specs use, the same in the three majors. */
export interface TestPgBoss extends PgBossInstance {
  send(name: string, data: object): Promise<string | null>;
  start(): Promise<unknown>;
  stop(options?: { graceful?: boolean; timeout?: number; wait?: boolean }): Promise<void>;
  on(event: 'error', listener: (error: unknown) => void): unknown;
  createQueue(name: string, options?: { name?: string; retryLimit?: number; retryDelay?: number; expireInSeconds?: number }): Promise<void>;
  retry(name: string, id: string): Promise<unknown>;
  getJobById(name: string, id: string): Promise<Record<string, unknown> | null>;
  getDb(): { executeSql(text: string, values?: unknown[]): Promise<{ rows: any[] }> };
}

/** What the specs read of a job's options, as each major stores them. */
export interface StoredJobOptions {
  readonly retryLimit: number;
  readonly priority: number;
  readonly expireInSeconds: number;
}

export interface PgBossMajor {
  /** `'10'`, `'11'` or `'12'`. */
  readonly major: string;
  /** `pg-boss 10`, … */
  readonly name: string;
  /** A new instance, not started; `options` go to its constructor. */
  create(options: Record<string, unknown>): Promise<TestPgBoss>;
  /** Stops the worker `id` of `queue` (10 and 11 take `{ id }`, 12 takes the queue's name and `{ id }`). */
  offWork(boss: TestPgBoss, queue: string, id: string): Promise<void>;
  /** The tables of pg-boss's schema that hold a queue's jobs: 10 moves finished jobs to `archive`, 11 has no archive. */
  readonly jobTables: readonly string[];
  /** The options the job `id` of `queue` was stored with. */
  jobOptions(boss: TestPgBoss, queue: string, id: string): Promise<StoredJobOptions>;
  /** Constructor options that make an instance fail expired active jobs every second (10 does it in its maintenance, 11 and 12 in their supervision). */
  readonly expiryEverySecond: Readonly<Record<string, number>>;
}

type Constructor = new (options: Record<string, unknown>) => TestPgBoss;

const seconds = (interval: { hours?: number; minutes?: number; seconds?: number }): number =>
  (interval.hours ?? 0) * 3600 + (interval.minutes ?? 0) * 60 + (interval.seconds ?? 0);

const define = (
  major: string,
  load: () => Promise<Constructor>,
  options: Pick<PgBossMajor, 'offWork' | 'jobTables' | 'expiryEverySecond'> & { expireInSeconds(row: Record<string, unknown>): number },
): PgBossMajor => ({
  major,
  name: `pg-boss ${major}`,
  async create(constructorOptions) {
    return new (await load())(constructorOptions);
  },
  offWork: options.offWork,
  jobTables: options.jobTables,
  expiryEverySecond: options.expiryEverySecond,
  async jobOptions(boss, queue, id) {
    const row = await boss.getJobById(queue, id);
    if (row === null) throw new Error(`no job ${id} in ${queue}`);
    return { retryLimit: row.retryLimit as number, priority: row.priority as number, expireInSeconds: options.expireInSeconds(row) };
  },
});

// Through unknown: each major declares its class its own way, none of them as the specs' interface.
const ALL: readonly PgBossMajor[] = [
  define('10', async () => (await import('pg-boss')).default as unknown as Constructor, {
    offWork: (boss, _queue, id) => (boss as unknown as { offWork(options: { id: string }): Promise<void> }).offWork({ id }),
    jobTables: ['job', 'archive'],
    expiryEverySecond: { maintenanceIntervalSeconds: 1 },
    expireInSeconds: (row) => seconds(row.expireIn as { minutes?: number; seconds?: number }),
  }),
  define('11', async () => (await import('pg-boss11')).default as unknown as Constructor, {
    offWork: (boss, _queue, id) => (boss as unknown as { offWork(options: { id: string }): Promise<void> }).offWork({ id }),
    jobTables: ['job'],
    expiryEverySecond: { superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 },
    expireInSeconds: (row) => row.expireInSeconds as number,
  }),
  define('12', async () => (await import('pg-boss12')).PgBoss as unknown as Constructor, {
    offWork: (boss, queue, id) => (boss as unknown as { offWork(name: string, options: { id: string }): Promise<void> }).offWork(queue, { id }),
    jobTables: ['job'],
    expiryEverySecond: { superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 },
    expireInSeconds: (row) => row.expireInSeconds as number,
  }),
];

const PACKAGES: Readonly<Record<string, string>> = { '10': 'pg-boss', '11': 'pg-boss11', '12': 'pg-boss12' };

/** Whether `version` (`22.12.0`) satisfies an engines range of the form `>=22.12.0`, the form pg-boss uses. */
export function satisfiesMinimum(version: string, range: string): boolean {
  const minimum = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range.trim());
  if (minimum === null) throw new Error(`unexpected engines range ${JSON.stringify(range)}`);
  const have = version.split('.').map(Number);
  for (let index = 0; index < 3; index++) {
    const want = Number(minimum[index + 1] ?? 0);
    const part = have[index] ?? 0;
    if (part !== want) return part > want;
  }
  return true;
}

/** Whether this Node meets the engines field of the installed major. */
function loadableHere(major: string): boolean {
  const require = createRequire(import.meta.url);
  const manifest = JSON.parse(readFileSync(require.resolve(`${PACKAGES[major]}/package.json`), 'utf8')) as { engines: { node: string } };
  return satisfiesMinimum(process.versions.node, manifest.engines.node);
}

/** Every major the entry supports: its peer range. */
export const ALL_PG_BOSS_MAJORS: readonly string[] = ALL.map(({ major }) => major);

/** The majors this Node cannot load: the other-Node run covers them. */
export const PG_BOSS_MAJORS_ELSEWHERE: readonly string[] = ALL_PG_BOSS_MAJORS.filter((major) => !loadableHere(major));

/** The majors named by `selection` (`PG_BOSS_MAJORS`), or, without one, every major this Node can load. */
export function selectMajors(selection: string | undefined): readonly PgBossMajor[] {
  if (selection === undefined || selection.trim() === '') return ALL.filter(({ major }) => loadableHere(major));
  return selection.split(',').map((wanted) => {
    const found = ALL.find(({ major }) => major === wanted.trim());
    if (found === undefined) throw new Error(`PG_BOSS_MAJORS names ${JSON.stringify(wanted)}; the majors are ${ALL_PG_BOSS_MAJORS.join(', ')}`);
    if (!loadableHere(found.major)) throw new Error(`${found.name} needs a newer Node than ${process.versions.node}`);
    return found;
  });
}

/** The majors the specs of this run cover. */
export const PG_BOSS_MAJORS: readonly PgBossMajor[] = selectMajors(process.env.PG_BOSS_MAJORS);

/** The major `major`, for a process the test started (a worker). */
export function pgBossMajor(major: string): PgBossMajor {
  const [found] = selectMajors(major);
  return found!;
}

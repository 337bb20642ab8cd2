/**
 * What the handlers of the ordering runs did, in Postgres, so that worker
 * and receiver processes killed mid-run leave it behind: every apply as
 * (object, version, event, seq, pid), `seq` the order the applies were
 * written in, and each object's state row, which a handler writes
 * whatever it holds, as a handler trusting the order would. Stale and
 * duplicate decisions a handler sees are rows of their own. The verdict
 * reads them back against the run's events.
 */
import type pg from 'pg';
import { uniqueTable } from '../postgres-clients.js';
import type { OrderedEvent, OrderedRun } from './ordered-events.js';

export interface LedgerTables {
  readonly applies: string;
  readonly state: string;
  /** Events a handler saw answered 'stale' or 'duplicate' by markProcessedInOrder. */
  readonly skips: string;
}

/** A connection or transaction that runs one statement. */
export interface Queryable {
  query(text: string, params: unknown[]): Promise<unknown>;
}

export async function createLedger(admin: pg.Pool): Promise<LedgerTables> {
  const prefix = uniqueTable('ordering');
  const tables = { applies: `${prefix}_applies`, state: `${prefix}_state`, skips: `${prefix}_skips` };
  await admin.query(
    `CREATE TABLE ${tables.applies} (event_id text NOT NULL, object text NOT NULL, version int NOT NULL, seq bigserial, pid int NOT NULL);` +
      `CREATE TABLE ${tables.state} (object text PRIMARY KEY, version int NOT NULL);` +
      `CREATE TABLE ${tables.skips} (event_id text NOT NULL, outcome text NOT NULL)`,
  );
  return tables;
}

export function dropLedger(admin: pg.Pool, tables: LedgerTables): Promise<unknown> {
  return admin.query(`DROP TABLE IF EXISTS ${Object.values(tables).join(', ')}`);
}

/** The handler's side effect: the apply recorded, and the object's state written to the event's version. */
export function recordApply(db: Queryable, tables: LedgerTables, eventId: string, object: string, version: number): Promise<unknown> {
  return db.query(
    `WITH a AS (INSERT INTO ${tables.applies} (event_id, object, version, pid) VALUES ($1, $2, $3, $4)) ` +
      `INSERT INTO ${tables.state} (object, version) VALUES ($2, $3) ON CONFLICT (object) DO UPDATE SET version = excluded.version`,
    [eventId, object, version, process.pid],
  );
}

export function recordSkip(db: Queryable, tables: LedgerTables, eventId: string, outcome: 'stale' | 'duplicate'): Promise<unknown> {
  return db.query(`INSERT INTO ${tables.skips} (event_id, outcome) VALUES ($1, $2)`, [eventId, outcome]);
}

/** What the run left, against what it sent. */
export interface OrderingVerdict {
  /** Applies written, one per handler run that applied. */
  readonly applies: number;
  /** Events applied more than once, with the pid of their first apply. */
  readonly doubled: ReadonlyArray<{ readonly id: string; readonly firstPid: number }>;
  /** Applies written after an apply of a higher version of their object, each with its object's applies (`version@pid`) in order. */
  readonly afterHigher: readonly string[];
  /** Objects whose state row is missing or below their highest version. */
  readonly notAtHighest: readonly string[];
  /** Events neither applied nor skipped as stale or duplicate. */
  readonly lost: readonly string[];
  /** Events skipped as stale (not applied). */
  readonly staleEvents: number;
  /** The skips handlers recorded, by outcome. */
  readonly skips: Readonly<Record<string, number>>;
}

/**
 * Reads the ledger back; `skipped` holds the events known stale or duplicate
 * elsewhere (the answers, the jobs' results). An apply by `killedPid` that
 * its event applied again later is one the store never recorded: the process
 * died between the write and the store's complete, and the store's view, so
 * the order, goes on without it. It still counts in `doubled`.
 */
export async function orderingVerdict(
  admin: pg.Pool,
  tables: LedgerTables,
  run: OrderedRun,
  skipped: ReadonlySet<string>,
  killedPid?: number,
): Promise<OrderingVerdict> {
  const applies = (await admin.query(`SELECT event_id, object, version, pid FROM ${tables.applies} ORDER BY seq`)).rows as Array<{
    event_id: string;
    object: string;
    version: number;
    pid: number;
  }>;
  const state = new Map((await admin.query(`SELECT object, version FROM ${tables.state}`)).rows.map(({ object, version }) => [object as string, version as number]));
  const skipRows = (await admin.query(`SELECT event_id, outcome FROM ${tables.skips}`)).rows as Array<{ event_id: string; outcome: string }>;

  const firstPid = new Map<string, number>();
  const doubled: Array<{ id: string; firstPid: number }> = [];
  const highest = new Map<string, number>();
  const late: Array<{ id: string; object: string }> = [];
  const history = new Map<string, string[]>();
  const lastSeq = new Map(applies.map(({ event_id }, seq) => [event_id, seq]));
  for (const [seq, { event_id: id, object, version, pid }] of applies.entries()) {
    if (firstPid.has(id)) doubled.push({ id, firstPid: firstPid.get(id)! });
    else firstPid.set(id, pid);
    history.set(object, [...(history.get(object) ?? []), `${version}@${pid}`]);
    if (pid === killedPid && lastSeq.get(id)! > seq) continue;
    if (version < (highest.get(object) ?? 0)) late.push({ id, object });
    highest.set(object, Math.max(version, highest.get(object) ?? 0));
  }
  const afterHigher = late.map(({ id, object }) => `${id}: ${object} applied ${history.get(object)!.join(', ')}`);
  const objects = [...new Set(run.events.map(({ object }) => object))];
  const skippedHere = new Set([...skipped, ...skipRows.map(({ event_id }) => event_id)]);
  const applied = (event: OrderedEvent): boolean => firstPid.has(event.id);
  const skips: Record<string, number> = {};
  for (const { outcome } of skipRows) skips[outcome] = (skips[outcome] ?? 0) + 1;
  return {
    applies: applies.length,
    doubled,
    afterHigher,
    notAtHighest: objects.filter((object) => state.get(object) !== run.versions),
    lost: run.events.filter((event) => !applied(event) && !skippedHere.has(event.id)).map(({ id }) => id),
    staleEvents: run.events.filter((event) => !applied(event)).length,
    skips,
  };
}

/** The verdict in one line, for the run's report. */
export function describeVerdict(verdict: OrderingVerdict, run: OrderedRun): string {
  return (
    `applies ${verdict.applies} (${verdict.doubled.length} events applied twice, ${verdict.afterHigher.length} after a higher version), ` +
    `${verdict.staleEvents} events never applied; objects at version ${run.versions}: ${run.objects - verdict.notAtHighest.length}/${run.objects}; ` +
    `lost ${verdict.lost.length}`
  );
}

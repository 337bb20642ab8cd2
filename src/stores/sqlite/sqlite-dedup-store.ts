/**
 * A `DedupStore` in a SQLite file, shared by the processes of one machine,
 * on node:sqlite or better-sqlite3. Each claim is one statement, atomic as
 * every SQLite write is: two processes on one file take their writes in
 * turn, so never both claim an event. An ordered operation reads and
 * writes the event's row and its object's in one transaction. Both drivers
 * answer at once, so a claim costs the delivery no turn of the event loop.
 */
import { randomUUID } from 'node:crypto';
import { checkCallback, checkDuration, checkOptionsObject } from '../../base/option-checks.js';
import { WebhookDedupError } from '../../core/errors.js';
import type { EventOrder } from '../../core/event-order.js';
import { answerAtOnce, type BeginResult, type OrderedBeginResult, type OrderingDedupStore } from '../dedup-store.js';
import { atomicStep } from './atomic-step.js';
import { sqliteDatabase, type SqliteDatabase, type SqliteStatement } from './database.js';
import { dedupStatements, type DedupOperation } from './dedup-statements.js';
import { dedupOrderSchema, isMissingTable, orderedStatementsOn, orderTableOption } from './ordered-statements.js';
import { applySchema, DEDUP_TABLE, dedupSchema } from './schema.js';
import { sqliteTableName, type SqliteTableName } from './table-name.js';

/** Options of `new SqliteDedupStore()`. */
export interface SqliteDedupStoreOptions {
  /**
   * The table of leases and done ids: lower-case letters, digits and
   * underscores. Create it with `store.migrate()`.
   * @default 'svc_webhooks_dedup'
   */
  readonly table?: string;
  /**
   * The table of the objects of ordered events (the `ordering` option): each
   * one's highest version processed and the lease of its event that runs.
   * Lower-case letters, digits and underscores; created by `store.migrate()`.
   * @default the store's `table` followed by `_order`: 'svc_webhooks_dedup_order'
   */
  readonly orderTable?: string;
  /**
   * The clock, in milliseconds since the Unix epoch. Every process on the
   * file must read the same time: the machine's clock, as by default.
   * @default Date.now
   */
  readonly now?: () => number;
}

const IN_PROGRESS = Object.freeze({ state: 'in_progress' } as const);
const DONE = Object.freeze({ state: 'done' } as const);

type Operation = DedupOperation | keyof ReturnType<typeof orderedStatementsOn>;

/**
 * A `DedupStore` in a table of a SQLite file, on a node:sqlite `DatabaseSync`
 * (Node 22.5 and later) or a better-sqlite3 `Database`: leases and done ids
 * survive a restart, and every process that opens the file shares them. Create
 * the table with `store.migrate()`. It orders events too
 * (`OrderingDedupStore`), in a second table, `orderTable`.
 *
 * @example
 * ```ts
 * import Database from 'better-sqlite3';
 * import { verifyWebhook } from 'svc-webhooks/fetch';
 * import { SqliteDedupStore } from 'svc-webhooks/sqlite';
 *
 * const db = new Database('webhooks.db');
 * db.pragma('journal_mode = WAL');
 * const store = new SqliteDedupStore(db);
 * store.migrate();
 * export const POST = verifyWebhook({ secret: process.env.WEBHOOK_SECRET!, dedup: { store } }, async (event) => {
 *   console.log(event.type);
 * });
 * ```
 */
export class SqliteDedupStore implements OrderingDedupStore {
  readonly #db: SqliteDatabase;
  readonly #table: SqliteTableName;
  readonly #orderTable: SqliteTableName;
  readonly #now: () => number;
  readonly #sql: Readonly<Record<Operation, string>>;
  // Prepared when first used: the table may be created after the store, by migrate().
  readonly #prepared = new Map<Operation, SqliteStatement>();

  /**
   * `db` is a node:sqlite `DatabaseSync` or a better-sqlite3 `Database`.
   * Checks its arguments once; throws `WebhookOptionsError`.
   */
  constructor(db: SqliteDatabase, options: SqliteDedupStoreOptions = {}) {
    this.#db = sqliteDatabase(db, 'SqliteDedupStore');
    checkOptionsObject('SqliteDedupStore', options);
    const { table, orderTable, now = Date.now } = options;
    this.#table = sqliteTableName('table', table, DEDUP_TABLE);
    this.#orderTable = orderTableOption(table, orderTable, this.#table);
    checkCallback('now', now);
    this.#now = now;
    this.#sql = { ...dedupStatements(this.#table.sql), ...orderedStatementsOn(this.#table.sql, this.#orderTable.sql) };
    const ordered = { beginInOrder: this.#beginInOrder, completeInOrder: this.#completeInOrder, releaseInOrder: this.#releaseInOrder };
    answerAtOnce(this, SqliteDedupStore.prototype, { begin: this.#begin, complete: this.#complete, release: this.#release, ...ordered });
  }

  // Each method answers its operation (below); a claim calls the operations at once. An async method turns
  // a throw into a rejection for less than a SQLite write costs.

  /** Claims `key` for `leaseMs`, unless another delivery holds it or it is done; see `DedupStore.begin`. */
  async begin(key: string, leaseMs: number): Promise<BeginResult> {
    return this.#begin(key, leaseMs);
  }

  /** Marks `key` done for `retentionMs` if `token` still holds its lease; see `DedupStore.complete`. */
  async complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    return this.#complete(key, token, retentionMs);
  }

  /** Drops the lease on `key` if `token` still holds it; see `DedupStore.release`. */
  async release(key: string, token: string): Promise<boolean> {
    return this.#release(key, token);
  }

  /** Moves the end of the lease on `key` to `leaseMs` from now if `token` still holds it; see `DedupStore.renew`. */
  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    return this.#renew(key, token, leaseMs);
  }

  /** As `begin`, leasing the event's object too; see `OrderingDedupStore.beginInOrder`. */
  async beginInOrder(key: string, order: EventOrder, leaseMs: number): Promise<OrderedBeginResult> {
    return this.#beginInOrder(key, order, leaseMs);
  }

  /** As `complete`, recording the object's version; see `OrderingDedupStore.completeInOrder`. */
  async completeInOrder(key: string, order: EventOrder, token: string, retentionMs: number): Promise<boolean> {
    return this.#completeInOrder(key, order, token, retentionMs);
  }

  /** As `release`, dropping the object's lease; see `OrderingDedupStore.releaseInOrder`. */
  async releaseInOrder(key: string, order: EventOrder, token: string): Promise<boolean> {
    return this.#releaseInOrder(key, order, token);
  }

  /** As `renew`, with the object's lease; see `OrderingDedupStore.renewInOrder`. */
  async renewInOrder(key: string, order: EventOrder, token: string, leaseMs: number): Promise<boolean> {
    checkDuration('leaseMs', leaseMs);
    return atomicStep(this.#db, () => {
      const now = this.#now();
      if (!this.#changed('renew', now + leaseMs, key, token, now)) return false;
      this.#statement('renewObjectLease').run(now + leaseMs, order.key, token);
      return true;
    });
  }

  /**
   * Creates the tables (leases and done ids, and the objects of ordered events) and the index
   * unless they exist; safe from several processes at once.
   */
  migrate(): void {
    applySchema(this.#db, [...dedupSchema(this.#table), ...dedupOrderSchema(this.#orderTable)]);
  }

  /**
   * Deletes expired leases and forgotten done ids, which would otherwise stay until claimed again,
   * and the objects that hold neither a live lease nor a live version; answers how many rows. A
   * store migrated before it ordered may lack the objects' table: then only the ids are deleted.
   */
  deleteExpired(): number {
    const now = this.#now();
    const ids = Number(this.#statement('deleteExpired').run(now).changes);
    let objects: number;
    try {
      objects = Number(this.#statement('deleteExpiredObjects').run(now, now).changes);
    } catch (error) {
      if (isMissingTable(error)) return ids;
      throw error;
    }
    return ids + objects;
  }

  // The operations themselves, answering at once or throwing; the public methods answer them as promises.
  readonly #begin = (key: string, leaseMs: number): BeginResult => {
    checkDuration('leaseMs', leaseMs);
    const now = this.#now();
    const token = randomUUID();
    if (this.#claimed(key, token, now + leaseMs, now)) return { state: 'claimed', token };
    // The row was live at the claim: a token is another delivery's lease, NULL a done id. One released
    // since is no claim of this delivery's either: in progress, and the sender's retry claims it.
    const held = this.#statement('holder').get(key) as { token?: unknown } | undefined;
    return held?.token === null ? DONE : IN_PROGRESS;
  };

  readonly #beginInOrder = (key: string, order: EventOrder, leaseMs: number): OrderedBeginResult => {
    checkDuration('leaseMs', leaseMs);
    return atomicStep(this.#db, () => {
      const now = this.#now();
      // The event first: a done or running event is answered so whatever its object holds.
      const event = this.#statement('liveEvent').get(key, now) as { token?: unknown } | undefined;
      if (event !== undefined) return event.token === null ? DONE : IN_PROGRESS;
      if (this.#statement('objectHolder').get(order.key, now) !== undefined) return IN_PROGRESS;
      const token = randomUUID();
      // Both free, and the transaction holds the file's write lock: both claims take.
      if (!this.#claimed(key, token, now + leaseMs, now)) throw unexpectedAnswer();
      const leased = this.#statement('leaseObject').get(order.key, token, now + leaseMs, now, order.version) as { stale?: unknown } | undefined;
      // A driver told to read integers as BigInt (safeIntegers, readBigInts) answers 0n or 1n.
      const stale = typeof leased?.stale === 'bigint' ? Number(leased.stale) : leased?.stale;
      if (stale !== 0 && stale !== 1) throw unexpectedAnswer();
      return { state: 'claimed', token, stale: stale === 1 };
    });
  };

  readonly #completeInOrder = (key: string, order: EventOrder, token: string, retentionMs: number): boolean => {
    checkDuration('retentionMs', retentionMs);
    return atomicStep(this.#db, () => {
      const now = this.#now();
      if (!this.#changed('complete', now + retentionMs, key, token, now)) return false;
      this.#statement('recordVersion').run(order.key, order.version, now + retentionMs, now, now, token, token);
      return true;
    });
  };

  readonly #releaseInOrder = (key: string, order: EventOrder, token: string): boolean =>
    atomicStep(this.#db, () => {
      const released = this.#release(key, token);
      this.#statement('dropObjectLease').run(order.key, token);
      return released;
    });

  readonly #complete = (key: string, token: string, retentionMs: number): boolean => {
    checkDuration('retentionMs', retentionMs);
    const now = this.#now();
    return this.#changed('complete', now + retentionMs, key, token, now);
  };

  readonly #release = (key: string, token: string): boolean => this.#changed('release', key, token, this.#now());

  readonly #renew = (key: string, token: string, leaseMs: number): boolean => {
    checkDuration('leaseMs', leaseMs);
    const now = this.#now();
    return this.#changed('renew', now + leaseMs, key, token, now);
  };

  /** Whether the claim of `key` took its row: one row changed, or none; any other count must not read as a claim. */
  #claimed(key: string, token: string, leaseEnd: number, now: number): boolean {
    const changes = Number(this.#statement('claim').run(key, token, leaseEnd, now).changes);
    if (changes !== 0 && changes !== 1) throw unexpectedAnswer();
    return changes === 1;
  }

  #changed(operation: Operation, ...params: Array<string | number>): boolean {
    return Number(this.#statement(operation).run(...params).changes) === 1;
  }

  #statement(operation: Operation): SqliteStatement {
    let statement = this.#prepared.get(operation);
    if (statement === undefined) {
      statement = this.#db.prepare(this.#sql[operation]);
      this.#prepared.set(operation, statement);
    }
    return statement;
  }
}

/** What a begin throws for an answer it does not expect, which must not read as a claim. */
function unexpectedAnswer(): WebhookDedupError {
  return new WebhookDedupError('dedup_unavailable', 'SQLite answered the dedup claim unexpectedly');
}

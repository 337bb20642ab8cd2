/**
 * A `DedupStore` in a SQLite file, shared by the processes of one machine,
 * on node:sqlite or better-sqlite3. Each claim is one statement, atomic as
 * every SQLite write is: two processes on one file take their writes in
 * turn, so never both claim an event. Both drivers answer at once, so a
 * claim costs the delivery no turn of the event loop.
 */
import { randomUUID } from 'node:crypto';
import { checkCallback, checkDuration, checkOptionsObject } from '../../base/option-checks.js';
import { WebhookDedupError } from '../../core/errors.js';
import { answerAtOnce, type BeginResult, type DedupStore } from '../dedup-store.js';
import { sqliteDatabase, type SqliteDatabase, type SqliteStatement } from './database.js';
import { dedupStatements, type DedupOperation as Operation } from './dedup-statements.js';
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
   * The clock, in milliseconds since the Unix epoch. Every process on the
   * file must read the same time: the machine's clock, as by default.
   * @default Date.now
   */
  readonly now?: () => number;
}

const IN_PROGRESS: BeginResult = Object.freeze({ state: 'in_progress' });
const DONE: BeginResult = Object.freeze({ state: 'done' });


/**
 * A `DedupStore` in a table of a SQLite file, on a node:sqlite `DatabaseSync`
 * (Node 22.5 and later) or a better-sqlite3 `Database`: leases and done ids
 * survive a restart, and every process that opens the file shares them. Create
 * the table with `store.migrate()`.
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
export class SqliteDedupStore implements DedupStore {
  readonly #db: SqliteDatabase;
  readonly #table: SqliteTableName;
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
    const { table, now = Date.now } = options;
    this.#table = sqliteTableName('table', table, DEDUP_TABLE);
    checkCallback('now', now);
    this.#now = now;
    this.#sql = dedupStatements(this.#table.sql);
    answerAtOnce(this, SqliteDedupStore.prototype, { begin: this.#begin, complete: this.#complete, release: this.#release });
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

  /** Creates the table and its index unless they exist; safe from several processes at once. */
  migrate(): void {
    applySchema(this.#db, dedupSchema(this.#table));
  }

  /** Deletes expired leases and forgotten done ids, which would otherwise stay until claimed again; answers how many. */
  deleteExpired(): number {
    return Number(this.#statement('deleteExpired').run(this.#now()).changes);
  }

  // The operations themselves, answering at once or throwing; the public methods answer them as promises.
  readonly #begin = (key: string, leaseMs: number): BeginResult => {
    checkDuration('leaseMs', leaseMs);
    const now = this.#now();
    const token = randomUUID();
    const claimed = this.#statement('claim').get(key, token, now + leaseMs, now) as { token?: unknown } | undefined;
    if (claimed !== undefined) {
      if (claimed.token === token) return { state: 'claimed', token };
      // Anything else must not read as a claim.
      throw new WebhookDedupError('dedup_unavailable', 'SQLite answered the dedup claim unexpectedly');
    }
    // The row was live at the claim: a token is another delivery's lease, NULL a done id. One released
    // since is no claim of this delivery's either: in progress, and the sender's retry claims it.
    const held = this.#statement('holder').get(key) as { token?: unknown } | undefined;
    return held?.token === null ? DONE : IN_PROGRESS;
  };

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

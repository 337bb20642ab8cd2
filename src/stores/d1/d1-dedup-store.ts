/**
 * A `DedupStore` in a Cloudflare D1 database, shared by every isolate of
 * every Worker bound to it. D1 is SQLite: the store runs the SQLite store's
 * statements, each claim one statement, which D1 runs alone against the
 * database, so two isolates never both claim an event. D1 has no
 * transaction a Worker holds open, so an ordered operation is one batch,
 * which D1 runs as one transaction, each statement checking in SQL what the
 * one before it did. D1 answers over the network: every operation is a promise.
 */
import { checkCallback, checkDuration, checkOptionsObject } from '../../base/option-checks.js';
import { WebhookDedupError } from '../../core/errors.js';
import type { EventOrder } from '../../core/event-order.js';
import type { BeginResult, OrderedBeginResult, OrderingDedupStore } from '../dedup-store.js';
import { CLAIM_VALUES, claimFrom, dedupStatements, type DedupOperation } from '../sqlite/dedup-statements.js';
import { dedupOrderSchema, isMissingTable, orderedBatchStatementsOn, orderTableOption } from '../sqlite/ordered-statements.js';
import { DEDUP_TABLE, dedupSchema } from '../sqlite/schema.js';
import { sqliteTableName, type SqliteTableName } from '../sqlite/table-name.js';
import { d1Database, type D1Database, type D1RunResult, type D1Statement } from './d1-database.js';

/** Options of `new D1DedupStore()`. */
export interface D1DedupStoreOptions {
  /**
   * The table of leases and done ids: lower-case letters, digits and
   * underscores. Create it with the package's `sql/svc-webhooks-d1.sql`
   * (`wrangler d1 migrations`) or `store.migrate()`.
   * @default 'svc_webhooks_dedup'
   */
  readonly table?: string;
  /**
   * The table of the objects of ordered events (the `ordering` option): each
   * one's highest version processed and the lease of its event that runs.
   * Lower-case letters, digits and underscores; created by the shipped
   * migration for the two tables it names, or `store.migrate()`.
   * @default the store's `table` followed by `_order`: 'svc_webhooks_dedup_order'
   */
  readonly orderTable?: string;
  /**
   * The clock, in milliseconds since the Unix epoch. Every Worker on the
   * database must read the same time: the platform's clock, as by default.
   * @default Date.now
   */
  readonly now?: () => number;
}

const IN_PROGRESS = Object.freeze({ state: 'in_progress' } as const);
const DONE = Object.freeze({ state: 'done' } as const);

type Operation = DedupOperation | 'claimReturning' | keyof ReturnType<typeof orderedBatchStatementsOn>;

/**
 * A `DedupStore` in a table of a Cloudflare D1 database, from a Worker's
 * binding: leases and done ids are shared by every isolate, every Worker
 * bound to the database and every deploy. Create the tables with the
 * migration the package ships (`sql/svc-webhooks-d1.sql`, applied by
 * `wrangler d1 migrations apply`) or `await store.migrate()`. It orders
 * events too (`OrderingDedupStore`), in a second table, `orderTable`.
 *
 * @example
 * ```ts
 * import { D1DedupStore, type D1Database } from 'svc-webhooks/d1';
 * import { verifyWebhook } from 'svc-webhooks/fetch';
 *
 * interface Env { DB: D1Database; WEBHOOK_SECRET: string }
 *
 * export default {
 *   fetch(request: Request, env: Env, ctx: { waitUntil(promise: Promise<unknown>): void }) {
 *     const store = new D1DedupStore(env.DB);
 *     return verifyWebhook({ secret: env.WEBHOOK_SECRET, dedup: { store } }, async (event) => {
 *       console.log(event.type);
 *     })(request, env, ctx);
 *   },
 * };
 * ```
 */
export class D1DedupStore implements OrderingDedupStore {
  readonly #db: D1Database;
  readonly #table: SqliteTableName;
  readonly #orderTable: SqliteTableName;
  readonly #now: () => number;
  readonly #sql: Readonly<Record<Operation, string>>;

  /** `db` is a Worker's D1 binding. Checks its arguments once; throws `WebhookOptionsError`. */
  constructor(db: D1Database, options: D1DedupStoreOptions = {}) {
    this.#db = d1Database(db, 'D1DedupStore');
    checkOptionsObject('D1DedupStore', options);
    const { table, orderTable, now = Date.now } = options;
    this.#table = sqliteTableName('table', table, DEDUP_TABLE);
    this.#orderTable = orderTableOption(table, orderTable, this.#table);
    checkCallback('now', now);
    this.#now = now;
    this.#sql = {
      ...dedupStatements(this.#table.sql),
      // As the claim, answering the token when it took: read in the same round trip.
      claimReturning: claimFrom(this.#table.sql, CLAIM_VALUES),
      ...orderedBatchStatementsOn(this.#table.sql, this.#orderTable.sql),
    };
  }

  /** Claims `key` for `leaseMs`, unless another delivery holds it or it is done; see `DedupStore.begin`. */
  async begin(key: string, leaseMs: number): Promise<BeginResult> {
    checkDuration('leaseMs', leaseMs);
    const now = this.#now();
    const token = crypto.randomUUID();
    const claimed = await this.#statement('claimReturning', key, token, now + leaseMs, now).first<{ token?: unknown }>();
    if (claimed !== null) {
      if (claimed.token === token) return { state: 'claimed', token };
      // Anything else must not read as a claim.
      throw unexpectedAnswer();
    }
    // The row was live at the claim: a token is another delivery's lease, NULL a done id. One released or
    // expired since is no claim of this delivery's either: in progress, and the retry claims it.
    const held = await this.#statement('holder', key).first<{ token?: unknown }>();
    return held?.token === null ? DONE : IN_PROGRESS;
  }

  /** Marks `key` done for `retentionMs` if `token` still holds its lease; see `DedupStore.complete`. */
  async complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    checkDuration('retentionMs', retentionMs);
    const now = this.#now();
    return this.#changed('complete', now + retentionMs, key, token, now);
  }

  /** Drops the lease on `key` if `token` still holds it; see `DedupStore.release`. */
  async release(key: string, token: string): Promise<boolean> {
    return this.#changed('release', key, token, this.#now());
  }

  /** Moves the end of the lease on `key` to `leaseMs` from now if `token` still holds it; see `DedupStore.renew`. */
  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    checkDuration('leaseMs', leaseMs);
    const now = this.#now();
    return this.#changed('renew', now + leaseMs, key, token, now);
  }

  /**
   * As `begin`, leasing the event's object too; see `OrderingDedupStore.beginInOrder`. One batch: the
   * object is leased unless its event is live or another event's live lease holds it, the event is
   * claimed if the object was, and the event's row is read for the answer when neither was.
   */
  async beginInOrder(key: string, order: EventOrder, leaseMs: number): Promise<OrderedBeginResult> {
    checkDuration('leaseMs', leaseMs);
    const now = this.#now();
    const token = crypto.randomUUID();
    const [leased, claimed, event] = await this.#firstRows(
      this.#statement('leaseFreeObject', order.key, token, now + leaseMs, key, now, now, now, order.version),
      this.#statement('claimWithObject', key, token, now + leaseMs, order.key, token, now),
      this.#statement('liveEvent', key, now),
    );
    if (leased === undefined && claimed === undefined) {
      // The event was live (a token is another delivery's lease, NULL a done id), or else its object was held.
      return event?.token === null ? DONE : IN_PROGRESS;
    }
    const stale = leased?.stale;
    if (claimed?.token !== token || (stale !== 0 && stale !== 1)) throw unexpectedAnswer();
    return { state: 'claimed', token, stale: stale === 1 };
  }

  /** As `complete`, recording the object's version; see `OrderingDedupStore.completeInOrder`. */
  async completeInOrder(key: string, order: EventOrder, token: string, retentionMs: number): Promise<boolean> {
    checkDuration('retentionMs', retentionMs);
    const now = this.#now();
    // The version first, while the event's row still names its token.
    const [, completed] = await this.#changes(
      this.#statement('recordVersionHeld', order.key, order.version, now + retentionMs, key, token, now, now, now, token, token),
      this.#statement('complete', now + retentionMs, key, token, now),
    );
    return completed === 1;
  }

  /** As `release`, dropping the object's lease; see `OrderingDedupStore.releaseInOrder`. */
  async releaseInOrder(key: string, order: EventOrder, token: string): Promise<boolean> {
    const [released] = await this.#changes(this.#statement('release', key, token, this.#now()), this.#statement('dropObjectLease', order.key, token));
    return released === 1;
  }

  /** As `renew`, with the object's lease; see `OrderingDedupStore.renewInOrder`. */
  async renewInOrder(key: string, order: EventOrder, token: string, leaseMs: number): Promise<boolean> {
    checkDuration('leaseMs', leaseMs);
    const now = this.#now();
    const [, renewed] = await this.#changes(
      this.#statement('renewObjectLeaseHeld', now + leaseMs, order.key, token, key, token, now),
      this.#statement('renew', now + leaseMs, key, token, now),
    );
    return renewed === 1;
  }

  /**
   * Creates the tables (leases and done ids, and the objects of ordered events) and the index unless
   * they exist, in one batch; safe from several isolates at once. The shipped migration creates the same.
   */
  async migrate(): Promise<void> {
    await this.#db.batch([...dedupSchema(this.#table), ...dedupOrderSchema(this.#orderTable)].map((sql) => this.#db.prepare(sql)));
  }

  /**
   * Deletes expired leases and forgotten done ids, which would otherwise stay until claimed again, and
   * the objects that hold neither a live lease nor a live version; answers how many rows. A database
   * migrated before the store ordered may lack the objects' table: then only the ids are deleted.
   */
  async deleteExpired(): Promise<number> {
    const now = this.#now();
    const ids = (await this.#statement('deleteExpired', now).run()).meta.changes;
    try {
      return ids + (await this.#statement('deleteExpiredObjects', now, now).run()).meta.changes;
    } catch (error) {
      if (isMissingTable(error)) return ids;
      throw error;
    }
  }

  async #changed(operation: DedupOperation, ...params: Array<string | number>): Promise<boolean> {
    return (await this.#statement(operation, ...params).run()).meta.changes === 1;
  }

  /** Runs `statements` as one batch; answers the first row of each, if any. */
  async #firstRows(...statements: D1Statement[]): Promise<Array<Record<string, unknown> | undefined>> {
    const answers = await this.#db.batch(statements);
    return statements.map((_, index) => {
      // D1 answers each statement of a batch as a D1Result, its rows in `results`.
      const rows = (answers[index] as { results?: unknown } | undefined)?.results;
      if (!Array.isArray(rows)) throw unexpectedAnswer();
      return rows[0] as Record<string, unknown> | undefined;
    });
  }

  /** Runs `statements` as one batch; answers the rows each changed. */
  async #changes(...statements: D1Statement[]): Promise<number[]> {
    const answers = await this.#db.batch(statements);
    return statements.map((_, index) => {
      const changes = (answers[index] as Partial<D1RunResult> | undefined)?.meta?.changes;
      if (typeof changes !== 'number') throw unexpectedAnswer();
      return changes;
    });
  }

  #statement(operation: Operation, ...params: Array<string | number>): D1Statement {
    return this.#db.prepare(this.#sql[operation]).bind(...params);
  }
}

/** What a begin throws for an answer it does not expect, which must not read as a claim. */
function unexpectedAnswer(): WebhookDedupError {
  return new WebhookDedupError('dedup_unavailable', 'D1 answered the dedup claim unexpectedly');
}

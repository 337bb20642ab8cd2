/**
 * A `DedupStore` in a Cloudflare D1 database, shared by every isolate of
 * every Worker bound to it. D1 is SQLite: the store runs the SQLite store's
 * statements, each claim one statement, which D1 runs alone against the
 * database, so two isolates never both claim an event. D1 answers over the
 * network: every operation is a promise.
 */
import { checkCallback, checkDuration, checkOptionsObject } from '../../base/option-checks.js';
import { WebhookDedupError } from '../../core/errors.js';
import type { BeginResult, DedupStore } from '../dedup-store.js';
import { dedupStatements, type DedupOperation } from '../sqlite/dedup-statements.js';
import { DEDUP_TABLE, dedupSchema } from '../sqlite/schema.js';
import { sqliteTableName, type SqliteTableName } from '../sqlite/table-name.js';
import { d1Database, type D1Database } from './d1-database.js';

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
   * The clock, in milliseconds since the Unix epoch. Every Worker on the
   * database must read the same time: the platform's clock, as by default.
   * @default Date.now
   */
  readonly now?: () => number;
}

const IN_PROGRESS: BeginResult = Object.freeze({ state: 'in_progress' });
const DONE: BeginResult = Object.freeze({ state: 'done' });

/**
 * A `DedupStore` in a table of a Cloudflare D1 database, from a Worker's
 * binding: leases and done ids are shared by every isolate, every Worker
 * bound to the database and every deploy. Create the table with the
 * migration the package ships (`sql/svc-webhooks-d1.sql`, applied by
 * `wrangler d1 migrations apply`) or `await store.migrate()`.
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
export class D1DedupStore implements DedupStore {
  readonly #db: D1Database;
  readonly #table: SqliteTableName;
  readonly #now: () => number;
  readonly #sql: Readonly<Record<DedupOperation, string>>;

  /** `db` is a Worker's D1 binding. Checks its arguments once; throws `WebhookOptionsError`. */
  constructor(db: D1Database, options: D1DedupStoreOptions = {}) {
    this.#db = d1Database(db, 'D1DedupStore');
    checkOptionsObject('D1DedupStore', options);
    const { table, now = Date.now } = options;
    this.#table = sqliteTableName('table', table, DEDUP_TABLE);
    checkCallback('now', now);
    this.#now = now;
    this.#sql = dedupStatements(this.#table.sql);
  }

  /** Claims `key` for `leaseMs`, unless another delivery holds it or it is done; see `DedupStore.begin`. */
  async begin(key: string, leaseMs: number): Promise<BeginResult> {
    checkDuration('leaseMs', leaseMs);
    const now = this.#now();
    const token = crypto.randomUUID();
    const claimed = await this.#statement('claim', key, token, now + leaseMs, now).first<{ token?: unknown }>();
    if (claimed !== null) {
      if (claimed.token === token) return { state: 'claimed', token };
      // Anything else must not read as a claim.
      throw new WebhookDedupError('dedup_unavailable', 'D1 answered the dedup claim unexpectedly');
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
   * Creates the table and its index unless they exist, in one batch; safe
   * from several isolates at once. The shipped migration creates the same.
   */
  async migrate(): Promise<void> {
    await this.#db.batch(dedupSchema(this.#table).map((sql) => this.#db.prepare(sql)));
  }

  /** Deletes expired leases and forgotten done ids, which would otherwise stay until claimed again; answers how many. */
  async deleteExpired(): Promise<number> {
    return (await this.#statement('deleteExpired', this.#now()).run()).meta.changes;
  }

  async #changed(operation: DedupOperation, ...params: Array<string | number>): Promise<boolean> {
    return (await this.#statement(operation, ...params).run()).meta.changes === 1;
  }

  #statement(operation: DedupOperation, ...params: Array<string | number>) {
    return this.#db.prepare(this.#sql[operation]).bind(...params);
  }
}

/**
 * A `DedupStore` in Postgres, shared by every process that receives the
 * webhooks, on a pg `Pool` or a postgres.js `sql`. Each operation is one
 * statement on one row, atomic without explicit locks: the primary key
 * serialises concurrent claims. Expiry follows the database's clock, the
 * one clock every process shares.
 */
import { randomUUID } from 'node:crypto';
import { checkDuration, checkOptionsObject } from '../../base/option-checks.js';
import { WebhookDedupError } from '../../core/errors.js';
import type { BeginResult, DedupStore } from '../dedup-store.js';
import { statementRunner, type PostgresConnection, type RunStatement } from './connection.js';
import { deleteCounted } from './delete-counted.js';
import { applySchema } from './migrate.js';
import { DEDUP_TABLE, dedupSchema } from './schema.js';
import { tableName, type TableName } from './table-name.js';

/** Options of `new PostgresDedupStore()`. */
export interface PostgresDedupStoreOptions {
  /**
   * The table of leases and done ids: `table` or `schema.table`, lower case.
   * Create it with `store.migrate()` or the shipped SQL file.
   * @default 'svc_webhooks_dedup'
   */
  readonly table?: string;
}

const IN_PROGRESS: BeginResult = Object.freeze({ state: 'in_progress' });
const DONE: BeginResult = Object.freeze({ state: 'done' });
/** A duration in milliseconds, always the first parameter. */
const MS = "$1::bigint * interval '1 millisecond'";

/** The row of a live lease held by a token: id and token are parameters `first` and `first + 1`. */
function held(first: number): string {
  return `id = $${first} AND token = $${first + 1} AND expires_at > now()`;
}

/**
 * A `DedupStore` in a Postgres table, shared by every process that receives
 * the webhooks; create the table with `store.migrate()` or the shipped SQL file.
 */
export class PostgresDedupStore implements DedupStore {
  readonly #run: RunStatement;
  readonly #table: TableName;
  readonly #begin: string;
  readonly #complete: string;
  readonly #release: string;
  readonly #renew: string;

  /**
   * `connection` is a pg `Pool` (or client), a postgres.js `sql`, or a
   * function running one statement. Checks its arguments once; throws `WebhookOptionsError`.
   */
  constructor(connection: PostgresConnection, options: PostgresDedupStoreOptions = {}) {
    this.#run = statementRunner(connection, 'PostgresDedupStore');
    checkOptionsObject('PostgresDedupStore', options);
    const table = tableName('table', options.table, DEDUP_TABLE);
    this.#table = table;
    // A live row is written back unchanged, so that RETURNING reports the row as it is after
    // any concurrent claim committed (a WHERE on the conflict update would return nothing).
    this.#begin =
      `INSERT INTO ${table.sql} AS d (expires_at, id, token) VALUES (now() + ${MS}, $2, $3) ` +
      'ON CONFLICT (id) DO UPDATE SET ' +
      'token = CASE WHEN d.expires_at <= now() THEN excluded.token ELSE d.token END, ' +
      'expires_at = CASE WHEN d.expires_at <= now() THEN excluded.expires_at ELSE d.expires_at END ' +
      'RETURNING d.token';
    this.#complete = `UPDATE ${table.sql} SET token = NULL, expires_at = now() + ${MS} WHERE ${held(2)} RETURNING true AS changed`;
    this.#renew = `UPDATE ${table.sql} SET expires_at = now() + ${MS} WHERE ${held(2)} RETURNING true AS changed`;
    this.#release = `DELETE FROM ${table.sql} WHERE ${held(1)} RETURNING true AS changed`;
  }

  /** Claims `key` for `leaseMs`, unless another delivery holds it or it is done; see `DedupStore.begin`. */
  async begin(key: string, leaseMs: number): Promise<BeginResult> {
    checkDuration('leaseMs', leaseMs);
    const token = randomUUID();
    const [row] = await this.#run(this.#begin, [String(leaseMs), key, token]);
    const holder = row?.token;
    if (holder === token) return { state: 'claimed', token };
    if (holder === null) return DONE;
    if (typeof holder === 'string') return IN_PROGRESS;
    // Anything else must not read as a claim.
    throw new WebhookDedupError('dedup_unavailable', 'Postgres answered the dedup claim unexpectedly');
  }

  /** Marks `key` done for `retentionMs` if `token` still holds its lease; see `DedupStore.complete`. */
  async complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    checkDuration('retentionMs', retentionMs);
    return this.#changed(this.#complete, [String(retentionMs), key, token]);
  }

  /** Drops the lease on `key` if `token` still holds it; see `DedupStore.release`. */
  async release(key: string, token: string): Promise<boolean> {
    return this.#changed(this.#release, [key, token]);
  }

  /** Moves the end of the lease on `key` to `leaseMs` from now if `token` still holds it; see `DedupStore.renew`. */
  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    checkDuration('leaseMs', leaseMs);
    return this.#changed(this.#renew, [String(leaseMs), key, token]);
  }

  /** Creates the table and its index unless they exist. */
  migrate(): Promise<void> {
    return applySchema(this.#run, dedupSchema(this.#table));
  }

  /** Deletes expired leases and forgotten done ids, which would otherwise stay until claimed again; resolves to how many. */
  deleteExpired(): Promise<number> {
    return deleteCounted(this.#run, `DELETE FROM ${this.#table.sql} WHERE expires_at <= now()`, []);
  }

  async #changed(statement: string, params: string[]): Promise<boolean> {
    return (await this.#run(statement, params)).length === 1;
  }
}

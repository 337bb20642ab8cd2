/**
 * A `DedupStore` in Postgres, shared by every process that receives the
 * webhooks, on a pg `Pool` or a postgres.js `sql`. Each operation is one
 * statement, atomic without explicit locks: the primary keys serialise
 * concurrent claims. An ordered operation writes the event's row and its
 * object's in one statement, by data-modifying CTEs. Expiry follows the
 * database's clock, the one clock every process shares.
 */
import { randomUUID } from 'node:crypto';
import { checkDuration, checkOptionsObject } from '../../base/option-checks.js';
import { WebhookDedupError } from '../../core/errors.js';
import type { EventOrder } from '../../core/event-order.js';
import type { BeginResult, OrderedBeginResult, OrderingDedupStore } from '../dedup-store.js';
import { statementRunner, type PostgresConnection, type RunStatement } from './connection.js';
import { deleteCounted, deleteCountedIfTable } from './delete-counted.js';
import { WebhookOptionsError } from '../../base/options-error.js';
import { applySchema } from './migrate.js';
import { orderedStatements, type OrderedStatements } from './ordered-statements.js';
import { DEDUP_TABLE, dedupOrderSchema, dedupSchema, ORDER_TABLE_SUFFIX } from './schema.js';
import { tableName, type TableName } from './table-name.js';

/** Options of `new PostgresDedupStore()`. */
export interface PostgresDedupStoreOptions {
  /**
   * The table of leases and done ids: `table` or `schema.table`, lower case.
   * Create it with `store.migrate()` or the shipped SQL file.
   * @default 'svc_webhooks_dedup'
   */
  readonly table?: string;
  /**
   * The table of the objects of ordered events (the `ordering` option): each
   * one's highest version processed and the lease of its event that runs.
   * `table` or `schema.table`, lower case; created by `store.migrate()` and the
   * shipped SQL file.
   * @default the store's `table` followed by `_order`: 'svc_webhooks_dedup_order'
   */
  readonly orderTable?: string;
}

const IN_PROGRESS = Object.freeze({ state: 'in_progress' } as const);
const DONE = Object.freeze({ state: 'done' } as const);
/** A duration in milliseconds, always the first parameter. */
const MS = "$1::bigint * interval '1 millisecond'";

/** The row of a live lease held by a token: id and token are parameters `first` and `first + 1`. */
function held(first: number): string {
  return `id = $${first} AND token = $${first + 1} AND expires_at > now()`;
}

/**
 * A `DedupStore` in a Postgres table, shared by every process that receives
 * the webhooks; create the table with `store.migrate()` or the shipped SQL file.
 * It orders events too (`OrderingDedupStore`), in a second table, `orderTable`.
 */
export class PostgresDedupStore implements OrderingDedupStore {
  readonly #run: RunStatement;
  readonly #table: TableName;
  readonly #orderTable: TableName;
  readonly #begin: string;
  readonly #complete: string;
  readonly #release: string;
  readonly #renew: string;
  readonly #ordered: OrderedStatements;

  /**
   * `connection` is a pg `Pool` (or client), a postgres.js `sql`, or a
   * function running one statement. Checks its arguments once; throws `WebhookOptionsError`.
   */
  constructor(connection: PostgresConnection, options: PostgresDedupStoreOptions = {}) {
    this.#run = statementRunner(connection, 'PostgresDedupStore');
    checkOptionsObject('PostgresDedupStore', options);
    const table = tableName('table', options.table, DEDUP_TABLE);
    const orders = options.orderTable === undefined ? table.beside(ORDER_TABLE_SUFFIX) : tableName('orderTable', options.orderTable, DEDUP_TABLE);
    if (orders.sql === table.sql) throw new WebhookOptionsError('svc-webhooks: orderTable must be another table than table');
    this.#table = table;
    this.#orderTable = orders;
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

    this.#ordered = orderedStatements(table, orders);
  }

  /** Claims `key` for `leaseMs`, unless another delivery holds it or it is done; see `DedupStore.begin`. */
  async begin(key: string, leaseMs: number): Promise<BeginResult> {
    checkDuration('leaseMs', leaseMs);
    const token = randomUUID();
    const [row] = await this.#run(this.#begin, [String(leaseMs), key, token]);
    const holder = row?.token;
    if (holder === token) return { state: 'claimed', token };
    return notClaimed(holder);
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

  /** As `begin`, leasing the event's object too; see `OrderingDedupStore.beginInOrder`. */
  async beginInOrder(key: string, order: EventOrder, leaseMs: number): Promise<OrderedBeginResult> {
    checkDuration('leaseMs', leaseMs);
    const token = randomUUID();
    const [row] = await this.#run(this.#ordered.beginInOrder, [String(leaseMs), key, token, order.key, String(order.version)]);
    if (row?.event_live === true) return notClaimed(row.event_token);
    if (typeof row?.object_token === 'string' && row.object_token !== token) return IN_PROGRESS;
    if (row?.object_token !== token || typeof row.stale !== 'boolean') throw unexpectedAnswer();
    if (row.holder === token) return { state: 'claimed', token, stale: row.stale };
    // Another delivery of the same event won it between the snapshot and the upsert: the object is not this one's.
    await this.#run(this.#ordered.dropObjectLease, [order.key, token]);
    return notClaimed(row.holder);
  }

  /** As `complete`, recording the object's version; see `OrderingDedupStore.completeInOrder`. */
  async completeInOrder(key: string, order: EventOrder, token: string, retentionMs: number): Promise<boolean> {
    checkDuration('retentionMs', retentionMs);
    return this.#changed(this.#ordered.completeInOrder, [String(retentionMs), key, token, order.key, String(order.version)]);
  }

  /** As `release`, dropping the object's lease; see `OrderingDedupStore.releaseInOrder`. */
  async releaseInOrder(key: string, order: EventOrder, token: string): Promise<boolean> {
    return this.#changed(this.#ordered.releaseInOrder, [key, token, order.key]);
  }

  /** As `renew`, with the object's lease; see `OrderingDedupStore.renewInOrder`. */
  async renewInOrder(key: string, order: EventOrder, token: string, leaseMs: number): Promise<boolean> {
    checkDuration('leaseMs', leaseMs);
    return this.#changed(this.#ordered.renewInOrder, [String(leaseMs), key, token, order.key]);
  }

  /** Creates the tables (leases and done ids, and the objects of ordered events) and the index unless they exist. */
  migrate(): Promise<void> {
    return applySchema(this.#run, [...dedupSchema(this.#table), ...dedupOrderSchema(this.#orderTable)]);
  }

  /**
   * Deletes expired leases and forgotten done ids, which would otherwise stay until claimed again,
   * and the objects that hold neither a live lease nor a live version; resolves to how many rows.
   * A store that never ordered may lack the objects' table (created by a `migrate()` of 1.0): then
   * only the ids are deleted.
   */
  async deleteExpired(): Promise<number> {
    const ids = await deleteCounted(this.#run, `DELETE FROM ${this.#table.sql} WHERE expires_at <= now()`, []);
    const objects = await deleteCountedIfTable(this.#run, this.#ordered.deleteExpiredObjects, []);
    return ids + objects;
  }

  async #changed(statement: string, params: string[]): Promise<boolean> {
    return (await this.#run(statement, params)).length === 1;
  }
}

/** What a begin answers when the event's row is held by `holder`, not this delivery: NULL is done, a token another's claim. */
function notClaimed(holder: unknown): typeof IN_PROGRESS | typeof DONE {
  if (holder === null) return DONE;
  if (typeof holder === 'string') return IN_PROGRESS;
  throw unexpectedAnswer();
}

/** What a begin throws for an answer it does not expect, which must not read as a claim. */
function unexpectedAnswer(): WebhookDedupError {
  return new WebhookDedupError('dedup_unavailable', 'Postgres answered the dedup claim unexpectedly');
}

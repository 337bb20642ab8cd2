/**
 * The clients this entry speaks to, told apart by their shape so that
 * neither `pg` nor `postgres` is ever imported: a pg `Pool`, `Client` or
 * `PoolClient`, a postgres.js `sql` (the top-level one, a transaction's, a
 * reserved connection's), or a function that runs one statement.
 */
import { WebhookOptionsError } from '../../base/options-error.js';

/** One row of a result, keyed by column name. */
type PostgresRow = Record<string, unknown>;

/**
 * Runs one statement with `$1`, `$2`… placeholders and resolves to its rows:
 * `{ rows }` as pg answers, or the rows themselves. Every statement sent here
 * uses each placeholder once, in order, so a tagged-template client can take
 * the text split at its placeholders. How Drizzle, Kysely, Prisma or any
 * other client plugs in.
 */
export type PostgresQueryFunction = (
  text: string,
  params: string[],
) => PromiseLike<
  | {
      /** The statement's rows. */
      readonly rows: readonly unknown[];
    }
  | readonly unknown[]
>;

/** The part of a pg `Pool`, `Client` or `PoolClient` used here. */
export interface PgQueryable {
  /** Runs one statement with `$1`, `$2`… placeholders. */
  query(
    text: string,
    values: string[],
  ): PromiseLike<{
    /** The statement's rows. */
    readonly rows: readonly unknown[];
  }>;
}

/** The part of a postgres.js `sql` used here. */
export interface PostgresJsSql {
  /** Runs one statement with `$1`, `$2`… placeholders and resolves to its rows. */
  unsafe(text: string, params: string[], options: { prepare: boolean }): PromiseLike<readonly unknown[]>;
}

/** A pg client or pool, a postgres.js `sql`, or a function running one statement. */
export type PostgresConnection = PgQueryable | PostgresJsSql | PostgresQueryFunction;

/** Runs one statement on a connection and resolves to its rows (or whatever a client put in their place). */
export type RunStatement = (text: string, params: string[]) => Promise<ReadonlyArray<PostgresRow | null | undefined>>;

/**
 * A statement runner for `db`, whatever client it is; `user` names the caller
 * in errors. Throws `WebhookOptionsError` for anything that is no known client.
 */
export function statementRunner(db: PostgresConnection, user: string): RunStatement {
  const send = sender(db, user);
  return async (text, params) => {
    const result = await send(text, params);
    if (Array.isArray(result)) return result;
    const rows = (result as { rows?: unknown } | null)?.rows;
    if (Array.isArray(rows)) return rows;
    throw new WebhookOptionsError(`svc-webhooks: ${user}: the connection answered neither { rows } nor an array of rows`);
  };
}

/**
 * Whether every statement sent to `db` may run on a connection of its own:
 * a pg `Pool`, or a postgres.js top-level `sql` (a transaction's `sql` has
 * no `begin`).
 */
export function isPool(db: PostgresConnection): boolean {
  const shape = db as Partial<Record<'begin' | 'connect' | 'idleCount', unknown>>;
  return typeof shape.begin === 'function' || (typeof shape.connect === 'function' && 'idleCount' in shape);
}

function sender(db: PostgresConnection, user: string): (text: string, params: string[]) => PromiseLike<unknown> {
  if ((typeof db === 'function' || typeof db === 'object') && db !== null) {
    // postgres.js `sql` is a function too: test for unsafe first.
    // Prepared, as its tagged templates are: unprepared, a statement with parameters costs postgres.js
    // a second round trip. A client created with `prepare: false` (for PgBouncer) still wins.
    if ('unsafe' in db && typeof db.unsafe === 'function') return (text, params) => db.unsafe(text, params, { prepare: true });
    if ('query' in db && typeof db.query === 'function') return (text, params) => db.query(text, params);
    if (typeof db === 'function') return db;
  }
  throw new WebhookOptionsError(`svc-webhooks: ${user} needs a pg client or pool, a postgres.js sql, or a (text, params) => Promise<{ rows }> function`);
}

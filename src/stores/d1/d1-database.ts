/**
 * The D1 database of a Worker's binding (`env.DB`), told by its shape so
 * that nothing of `@cloudflare/workers-types` is imported: the part of
 * `D1Database` the store uses.
 */
import { WebhookOptionsError } from '../../base/options-error.js';

/** What D1 answers for a statement that wrote: `meta.changes`, the rows it changed. */
export interface D1RunResult {
  /** D1's figures on the statement. */
  readonly meta: {
    /** The rows the statement inserted, updated or deleted. */
    readonly changes: number;
  };
}

/** The part of D1's `D1PreparedStatement` used here. */
export interface D1Statement {
  /** The statement with its `?` placeholders bound in order. */
  bind(...values: Array<string | number>): D1Statement;
  /** Runs the statement; resolves to its first row, or `null`. */
  first<T = Record<string, unknown>>(): Promise<T | null>;
  /** Runs the statement; resolves to what it changed. */
  run(): Promise<D1RunResult>;
}

/** The part of a Worker's D1 binding (`D1Database`) used here. */
export interface D1Database {
  /** Compiles one statement. */
  prepare(sql: string): D1Statement;
  /**
   * Runs statements in order, in one transaction: all of them or none.
   * Resolves to one result per statement, its rows in `results` and its
   * figures in `meta`, as `run` answers.
   */
  batch(statements: D1Statement[]): Promise<unknown[]>;
}

/** `db` as a `D1Database`; `user` names the caller in the `WebhookOptionsError` thrown for anything else. */
export function d1Database(db: unknown, user: string): D1Database {
  const shape = db as Partial<Record<'prepare' | 'batch', unknown>> | null;
  if (typeof shape === 'object' && shape !== null && typeof shape.prepare === 'function' && typeof shape.batch === 'function') return db as D1Database;
  throw new WebhookOptionsError(`svc-webhooks: ${user} needs a D1 database binding (env.DB, with prepare and batch)`);
}

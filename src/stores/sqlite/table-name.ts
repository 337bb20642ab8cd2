/** Table names given as options: checked once, then quoted for SQLite. */
import { WebhookOptionsError } from '../../base/options-error.js';

/** Lower case only, so the name means the same quoted or not in the caller's own SQL. */
const NAME = /^[a-z_][a-z0-9_]*$/;
/** SQLite keeps names starting so for its own tables, and refuses to create one. */
const RESERVED_PREFIX = 'sqlite_';
/** Long enough for any name a person picks; the index names add a suffix to it. */
export const MAX_SQLITE_TABLE_NAME_LENGTH = 63;

/** A table name, quoted for SQL, and the names of its indexes. */
export interface SqliteTableName {
  /** The table, quoted: `"table"`. */
  readonly sql: string;
  /** The quoted name of the table's index on `column`. */
  index(column: string): string;
}

/**
 * `value`, or `fallback` when it is undefined: lower-case letters, digits
 * and underscores, not starting with a digit nor with `sqlite_`, at most
 * `MAX_SQLITE_TABLE_NAME_LENGTH` characters. `option` names the option in the
 * `WebhookOptionsError` thrown otherwise.
 */
export function sqliteTableName(option: string, value: unknown, fallback: string): SqliteTableName {
  const name = value === undefined ? fallback : value;
  if (typeof name !== 'string' || !NAME.test(name) || name.startsWith(RESERVED_PREFIX) || name.length > MAX_SQLITE_TABLE_NAME_LENGTH) {
    throw new WebhookOptionsError(
      `svc-webhooks: ${option} must be a table name of lower-case letters, digits and underscores, not starting with ` +
        `a digit or ${RESERVED_PREFIX}, at most ${MAX_SQLITE_TABLE_NAME_LENGTH} characters`,
    );
  }
  return { sql: `"${name}"`, index: (column) => `"${name}_${column}_idx"` };
}

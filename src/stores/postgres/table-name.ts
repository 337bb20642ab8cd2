/** Table names given as options: checked once, then quoted for SQL. */
import { WebhookOptionsError } from '../../base/options-error.js';

/** What Postgres keeps of an identifier: longer ones are cut, so two long names could meet. */
const MAX_IDENTIFIER_BYTES = 63;
/** The longest suffix an index name adds to its table's name. */
const LONGEST_INDEX_SUFFIX = '_processed_at_idx';
/** Lower case only, so the name means the same quoted or not in the caller's own SQL. */
const PART = /^[a-z_][a-z0-9_]*$/;
export const MAX_TABLE_NAME_LENGTH = MAX_IDENTIFIER_BYTES - LONGEST_INDEX_SUFFIX.length;

export interface TableName {
  /** The table, quoted and schema-qualified if it was given so: `"schema"."table"`. */
  readonly sql: string;
  /** The quoted name of the table's index on `column`, which Postgres puts in the table's schema. */
  index(column: string): string;
  /**
   * The table beside it, in the same schema, named with `suffix` appended. A suffix no longer than
   * the longest index suffix keeps the name within what Postgres keeps; give such a table no index
   * but its primary key's, which Postgres names within the limit itself.
   */
  beside(suffix: string): TableName;
}

/**
 * `value`, or `fallback` when it is undefined: `table` or `schema.table`,
 * each part lower-case letters, digits and underscores, not starting with a
 * digit, at most `MAX_TABLE_NAME_LENGTH` characters. `option` names the
 * option in the `WebhookOptionsError` thrown otherwise.
 */
export function tableName(option: string, value: unknown, fallback: string): TableName {
  const name = value === undefined ? fallback : value;
  const parts = typeof name === 'string' ? name.split('.') : [];
  const valid = parts.length >= 1 && parts.length <= 2 && parts.every((part) => PART.test(part) && part.length <= MAX_TABLE_NAME_LENGTH);
  if (!valid) {
    throw new WebhookOptionsError(
      `svc-webhooks: ${option} must be a table name, optionally schema-qualified (schema.table), each part of ` +
        `lower-case letters, digits and underscores, at most ${MAX_TABLE_NAME_LENGTH} characters`,
    );
  }
  return quoted(parts);
}

function quoted(parts: readonly string[]): TableName {
  const table = parts[parts.length - 1]!;
  return {
    sql: parts.map((part) => `"${part}"`).join('.'),
    index: (column) => `"${table}_${column}_idx"`,
    beside: (suffix) => quoted([...parts.slice(0, -1), table + suffix]),
  };
}

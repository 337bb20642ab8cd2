/**
 * The statements of `PostgresDedupStore`'s ordered operations: each writes
 * the event's row and its object's in one statement, by data-modifying CTEs,
 * so that it is atomic on a pool as on a client.
 */
import type { TableName } from './table-name.js';

/** The statements, with the parameters each takes, in order. */
export interface OrderedStatements {
  /** leaseMs, id, token, object key, version. */
  readonly beginInOrder: string;
  /** object key, token: the second statement of a claim that lost its event to another. */
  readonly dropObjectLease: string;
  /** retentionMs, id, token, object key, version. */
  readonly completeInOrder: string;
  /** id, token, object key. */
  readonly releaseInOrder: string;
  /** leaseMs, id, token, object key. */
  readonly renewInOrder: string;
  /** None: deletes the objects with neither a live lease nor a live version. */
  readonly deleteExpiredObjects: string;
}

/**
 * The parameters of an ordered statement, named once in a first CTE `p`: every placeholder is then
 * used once and in order, as function-form clients need, however often the statement reads them.
 * `p.ms` is the duration, as an interval.
 */
function orderParams(columns: readonly string[]): string {
  const named = columns.map((column, i) => {
    if (column === 'ms') return `$${i + 1}::bigint * interval '1 millisecond' AS ms`;
    return `$${i + 1}::${column === 'version' ? 'float8' : 'text'} AS ${column}`;
  });
  return `WITH p AS (SELECT ${named.join(', ')})`;
}

/** Whether the object row `o` is leased by a live lease. */
const OBJECT_LEASED = 'o.token IS NOT NULL AND o.lease_expires_at > now()';

/** The ordered statements on the store's `table` and its objects' table, `orders`. */
export function orderedStatements(table: TableName, orders: TableName): OrderedStatements {
  // The event's row as the statement's snapshot sees it; its upsert below has the last word. The object
  // is upserted (its row locked) unless the event is live: leased anew if its lease is free, written
  // back unchanged otherwise, so RETURNING tells the holder. The event is claimed only under the
  // object's lease; should a concurrent claim of the same event have won meanwhile, its upsert answers
  // that claim's token (or NULL, done), and the object's lease is dropped by a second statement.
  const freeObject = `NOT (${OBJECT_LEASED})`;
  const beginInOrder =
    `${orderParams(['ms', 'id', 'token', 'key', 'version'])}, ` +
    `ev AS (SELECT d.token, d.expires_at > now() AS live FROM ${table.sql} AS d, p WHERE d.id = p.id), ` +
    `obj AS (INSERT INTO ${orders.sql} AS o (key, token, lease_expires_at) ` +
    'SELECT p.key, p.token, now() + p.ms FROM p WHERE NOT EXISTS (SELECT 1 FROM ev WHERE ev.live) ' +
    'ON CONFLICT (key) DO UPDATE SET ' +
    `token = CASE WHEN ${freeObject} THEN excluded.token ELSE o.token END, ` +
    `lease_expires_at = CASE WHEN ${freeObject} THEN excluded.lease_expires_at ELSE o.lease_expires_at END ` +
    'RETURNING o.token, o.version IS NOT NULL AND o.version_expires_at > now() AND o.version > (SELECT version FROM p) AS stale), ' +
    `e AS (INSERT INTO ${table.sql} AS d (expires_at, id, token) SELECT now() + p.ms, p.id, p.token FROM p, obj WHERE obj.token = p.token ` +
    'ON CONFLICT (id) DO UPDATE SET ' +
    'token = CASE WHEN d.expires_at <= now() THEN excluded.token ELSE d.token END, ' +
    'expires_at = CASE WHEN d.expires_at <= now() THEN excluded.expires_at ELSE d.expires_at END ' +
    'RETURNING d.token) ' +
    'SELECT ev.live AS event_live, ev.token AS event_token, obj.token AS object_token, obj.stale, e.token AS holder ' +
    'FROM p LEFT JOIN ev ON true LEFT JOIN obj ON true LEFT JOIN e ON true';
  const dropObjectLease = `UPDATE ${orders.sql} SET token = NULL, lease_expires_at = NULL WHERE key = $1 AND token = $2`;
  // The version is raised unless a higher live one is recorded, even where the object's lease ran out: the event is done.
  const keepVersion = 'o.version IS NOT NULL AND o.version_expires_at > now() AND o.version > excluded.version';
  const ownLease = 'o.token = (SELECT token FROM p)';
  const completeInOrder =
    `${orderParams(['ms', 'id', 'token', 'key', 'version'])}, ` +
    `e AS (UPDATE ${table.sql} AS d SET token = NULL, expires_at = now() + p.ms FROM p ` +
    'WHERE d.id = p.id AND d.token = p.token AND d.expires_at > now() RETURNING true AS changed), ' +
    `obj AS (INSERT INTO ${orders.sql} AS o (key, version, version_expires_at) SELECT p.key, p.version, now() + p.ms FROM p, e ` +
    'ON CONFLICT (key) DO UPDATE SET ' +
    `version = CASE WHEN ${keepVersion} THEN o.version ELSE excluded.version END, ` +
    `version_expires_at = CASE WHEN ${keepVersion} THEN o.version_expires_at ELSE excluded.version_expires_at END, ` +
    `token = CASE WHEN ${ownLease} THEN NULL ELSE o.token END, ` +
    `lease_expires_at = CASE WHEN ${ownLease} THEN NULL ELSE o.lease_expires_at END) ` +
    'SELECT changed FROM e';
  const releaseInOrder =
    `${orderParams(['id', 'token', 'key'])}, ` +
    `obj AS (UPDATE ${orders.sql} AS o SET token = NULL, lease_expires_at = NULL FROM p WHERE o.key = p.key AND o.token = p.token), ` +
    `e AS (DELETE FROM ${table.sql} AS d USING p WHERE d.id = p.id AND d.token = p.token AND d.expires_at > now() RETURNING true AS changed) ` +
    'SELECT changed FROM e';
  const renewInOrder =
    `${orderParams(['ms', 'id', 'token', 'key'])}, ` +
    `e AS (UPDATE ${table.sql} AS d SET expires_at = now() + p.ms FROM p ` +
    'WHERE d.id = p.id AND d.token = p.token AND d.expires_at > now() RETURNING true AS changed), ' +
    `obj AS (UPDATE ${orders.sql} AS o SET lease_expires_at = now() + p.ms FROM p, e WHERE o.key = p.key AND o.token = p.token) ` +
    'SELECT changed FROM e';
  const deleteExpiredObjects = `DELETE FROM ${orders.sql} AS o WHERE NOT (${OBJECT_LEASED}) AND NOT (o.version IS NOT NULL AND o.version_expires_at > now())`;
  return { beginInOrder, dropObjectLease, completeInOrder, releaseInOrder, renewInOrder, deleteExpiredObjects };
}

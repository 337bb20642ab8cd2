/**
 * Exactly once and in order, when the side effect is a database write: the
 * delivery's dedup key and the version of the object its event is about are
 * recorded in the caller's own transaction, so that both commit or roll back
 * with the caller's writes, and an event older than one of its object
 * processed before is told apart.
 */
import { WebhookOptionsError } from '../../base/options-error.js';
import type { WebhookDelivery } from '../../core/delivery.js';
import type { WebhookEvent } from '../../core/event.js';
import { checkOrdering, eventOrder, type CheckedOrdering, type OrderingOptions } from '../../core/event-order.js';
import type { PostgresConnection, RunStatement } from './connection.js';
import { checkKeyToMark, recordIdStatement, runInTransaction, transactionRunner } from './in-transaction.js';
import { processedVersionsTables, type ProcessedVersionsOptions } from './processed-events-options.js';
import type { TableName } from './table-name.js';

/**
 * What `markProcessedInOrder` found: `'apply'`, the event is new and not
 * older than its object's version (now its version): do the side effect;
 * `'duplicate'`, the event was processed before: skip it; `'stale'`, a
 * higher version of its object was processed: the event is recorded as
 * processed, the version left as it was; skip the side effect, or apply what
 * of it still holds.
 */
export type MarkInOrderResult = 'apply' | 'duplicate' | 'stale';

const USER = 'markProcessedInOrder';

/**
 * Records `delivery.dedupKey` as processed and its event's version as its
 * object's, inside the caller's open transaction on `db`, as `markProcessed`
 * does for the key alone; resolves to what to do with the event (see
 * `MarkInOrderResult`). `ordering` reads the object and the version from the
 * event, as the receivers' `ordering` option does (its `staleEvents` is not
 * used: the answer says `'stale'`). An event whose key or version is
 * `undefined` is unordered: it resolves to `'apply'` or `'duplicate'`, as
 * `markProcessed` to true or false.
 *
 * Two transactions for one object take turns: the second waits on the
 * object's row until the first ends, then decides on the version the first
 * committed. (Under REPEATABLE READ or SERIALIZABLE the waiting transaction
 * fails with a serialization error instead; its retry decides.) Mark the
 * events of one transaction in one order of objects, or two transactions may
 * deadlock.
 *
 * `db` is the transaction's connection, as for `markProcessed`. Throws
 * `WebhookOptionsError` for a pool or a postgres.js top-level `sql`, an
 * empty key, or bad `ordering` or options; rejects with one, recording
 * nothing, when the statements run outside a transaction all the same, and
 * with a `WebhookDedupError` `invalid_event_order` when `ordering`'s
 * functions throw or answer what cannot order.
 * @example
 * ```ts
 * // In the route's transaction (postgres.js: the sql of sql.begin()); the object's version is the time its event happened.
 * const { event } = req.webhook;
 * if ((await markProcessedInOrder(tx, req.webhook, { version: (e) => e.timestamp as string })) === 'apply') {
 *   await tx`UPDATE messages SET last_event = ${event.type} WHERE id = ${event.data.object.id}`;
 * }
 * ```
 */
export function markProcessedInOrder<E extends WebhookEvent = WebhookEvent>(
  db: PostgresConnection,
  delivery: Pick<WebhookDelivery<E>, 'event' | 'dedupKey'>,
  ordering: OrderingOptions<E>,
  options?: ProcessedVersionsOptions,
): Promise<MarkInOrderResult> {
  const run = transactionRunner(db, USER);
  checkKeyToMark((delivery as Partial<typeof delivery> | null)?.dedupKey);
  if (ordering === undefined) throw new WebhookOptionsError(`svc-webhooks: ${USER} needs ordering, with at least its version function`);
  const checked = checkOrdering(ordering)!;
  return mark(run, delivery, checked, processedVersionsTables(options));
}

async function mark(
  run: RunStatement,
  delivery: Pick<WebhookDelivery, 'event' | 'dedupKey'>,
  ordering: CheckedOrdering,
  { events, versions }: { events: TableName; versions: TableName },
): Promise<MarkInOrderResult> {
  const order = eventOrder(ordering, delivery);
  if (order === undefined) {
    const rows = await runInTransaction(run, USER, [events], recordIdStatement(events), [delivery.dedupKey]);
    return rows.length === 1 ? 'apply' : 'duplicate';
  }
  // One statement: the id first (waiting on a concurrent transaction that inserted it), then the
  // object's row, locked by the upsert even where its WHERE keeps the higher version: a second
  // transaction for the object waits there and decides on the version this one commits.
  const rows = await runInTransaction(
    run,
    USER,
    [events, versions],
    `WITH e AS (${recordIdStatement(events)}), ` +
      `v AS (INSERT INTO ${versions.sql} AS v (key, version) SELECT $2, $3::float8 FROM e ` +
      'ON CONFLICT (key) DO UPDATE SET version = excluded.version, processed_at = now() WHERE v.version <= excluded.version ' +
      'RETURNING true AS raised) ' +
      'SELECT v.raised FROM e LEFT JOIN v ON true',
    [delivery.dedupKey, order.key, String(order.version)],
  );
  if (rows.length === 0) return 'duplicate';
  return rows[0]?.raised === true ? 'apply' : 'stale';
}

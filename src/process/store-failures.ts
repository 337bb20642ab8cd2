/**
 * Telling the operator of a failed store: the user's `dedup.onError`, called
 * so that it can neither change an answer nor take the process down, or by
 * default one log line per store at most every few seconds while it stays
 * down; and the diagnostics channels. A failed secret lookup is told the same
 * way, to a callback of its own.
 */
import { CONSOLE_LINES, errorFields, lineDue, quoted, writeLog, type QuietSpell, type WebhookLogFields, type WebhookLogger } from '../base/logger.js';
import { reasonOf } from '../base/user-code.js';
import type { StoreOperation } from '../stores/dedup-store.js';
import { describeStoreError, storeErrorFields, storeFailureHint } from '../stores/store-failure-hint.js';
import { lookupFailures, storeFailures } from './diagnostics.js';

/**
 * What a dedup store's `onError` learns besides the error: which operation
 * failed, and for which event.
 */
export interface StoreErrorContext {
  /** Which operation of the dedup store failed. */
  readonly operation: StoreOperation;
  /** The dedup key it was for: the delivery's `dedupKey`. */
  readonly key: string;
  /** The delivery's `webhook-id` (every receiver and worker gives it). */
  readonly id?: string;
  /** The delivery's event type (every receiver and worker gives it). */
  readonly type?: string;
  /** The delivery's tenant, where the receiver serves many. */
  readonly tenant?: string;
}

/**
 * What `tenants.onLookupError` learns besides the error: the request whose
 * tenant's secret could not be looked up (or whose `tenants.of` threw).
 */
export interface LookupErrorContext {
  /** A tenant's secret could not be looked up, or `tenants.of` threw. */
  readonly operation: 'lookup';
  /** The request's `webhook-id`, not yet verified. */
  readonly id: string;
  /** The tenant whose secret was looked up; absent when `tenants.of` threw. */
  readonly tenant?: string;
}

/** `dedup.onError`. What it answers is awaited, so it may be async; the value is ignored. */
export type StoreErrorCallback = (error: unknown, context: StoreErrorContext) => unknown;

/** `tenants.onLookupError`. What it answers is awaited, so it may be async; the value is ignored. */
export type LookupErrorCallback = (error: unknown, context: LookupErrorContext) => unknown;

/** A failure of either kind the default log tells of. */
export type FailureContext = StoreErrorContext | LookupErrorContext;

/** Tells the operator of a store failure; never rejects. */
export type StoreErrorReport = (error: unknown, context: StoreErrorContext) => Promise<void>;

/** Tells the operator of a failed secret lookup; never rejects. */
export type LookupErrorReport = (error: unknown, context: LookupErrorContext) => Promise<void>;

/**
 * Wraps `callback` (named `name` in the log, as the caller gave it) so that
 * calling it never rejects: it is awaited, and whatever it throws or rejects
 * with is logged in one line to `logger`. A callback's failure can then
 * neither change an answer nor become an unhandled rejection that takes the
 * process down.
 */
export function storeErrorReporter<C extends FailureContext>(
  callback: (error: unknown, context: C) => unknown,
  logger: WebhookLogger = CONSOLE_LINES,
  name = 'dedup.onError',
): (error: unknown, context: C) => Promise<void> {
  return async (error, context) => {
    try {
      await callback(error, context);
    } catch (thrown) {
      const fields = { code: 'on_store_error_failed', ...contextFields(context), ...errorFields(thrown, true) } as const;
      writeLog(logger, 'error', fields, `${name} threw (${reasonOf(thrown)}) on a failed ${context.operation}`);
    }
  };
}

/** How long the default log stays quiet about a store after a line about it. */
export const STORE_LOG_INTERVAL_MS = 5_000;

/** Per store, however many receivers share it: until when its log stays quiet, and how many failures it left out. */
const quietLogs = new WeakMap<object, QuietSpell>();

/**
 * The default `dedup.onError` of a receiver or worker on `store`, and the
 * default `tenants.onLookupError` (a dedup
 * store, or a secret resolver): one line naming the error (class, code,
 * message), what it leads to, and what to do where the cause is known.
 * While the store stays down it writes at most one line per
 * `STORE_LOG_INTERVAL_MS`, counting the failures it left out. `consequence`
 * says what a failed `begin` (or lookup) leads to: a 503, or a job delayed.
 * A failed `begin` or lookup is a warning (the sender or the queue tries
 * again); a settle or renewal that failed until the lease ended, an error.
 */
export function storeErrorLog(
  store: object,
  consequence = 'the request was answered 503 and the sender will retry it',
  logger: WebhookLogger = CONSOLE_LINES,
): (error: unknown, context: FailureContext) => void {
  return (error, context) => {
    const unlogged = lineDue(quietLogs, store, Date.now(), STORE_LOG_INTERVAL_MS);
    if (unlogged === undefined) return;
    const more = unlogged > 0 ? ` (${unlogged} more store failures since the last line)` : '';
    const { operation } = context;
    // The hints name the dedup store's own fixes (its table, migrateProcessedEvents()): never a resolver's.
    const hint = context.operation === 'lookup' ? undefined : storeFailureHint(error);
    const retried = operation === 'begin' || operation === 'lookup';
    const then = retried ? consequence : AFTER_THE_LEASE[operation];
    const fields: WebhookLogFields = {
      code: operation === 'lookup' ? 'secret_unavailable' : 'store_failed',
      ...contextFields(context),
      ...storeErrorFields(error),
      ...(unlogged > 0 && { unlogged }),
    };
    writeLog(logger, retried ? 'warn' : 'error', fields, `${failureOf(error, context)}; ${then}.${hint === undefined ? '' : ` ${hint}`}${more}`);
  };
}

/** The fields naming what a store failure was for. */
function contextFields(context: FailureContext): Omit<WebhookLogFields, 'code'> {
  if (context.operation === 'lookup') {
    const { operation, id, tenant } = context;
    return tenant === undefined ? { operation, id } : { operation, id, tenant };
  }
  const { operation, key, id, type, tenant } = context;
  return { operation, key, ...(id !== undefined && { id }), ...(type !== undefined && { type }), ...(tenant !== undefined && { tenant }) };
}

/** What failed, in words: a lookup without a tenant is one whose `tenants.of` threw, and names no tenant. */
function failureOf(error: unknown, context: FailureContext): string {
  const described = describeStoreError(error);
  if (context.operation !== 'lookup') return `the dedup store failed to ${context.operation} event ${quoted(context.key)} (${described})`;
  const { id, tenant } = context;
  if (tenant === undefined) return `tenants.of threw for delivery ${quoted(id)} (${described})`;
  return `the secret lookup for tenant ${quoted(tenant)} failed (delivery ${quoted(id)}; ${described})`;
}

/** What a settle or a renewal that failed until the lease's end leads to. */
const AFTER_THE_LEASE: Readonly<Record<Exclude<StoreOperation, 'begin'>, string>> = {
  complete: 'the lease ran out first, so a retry of that event may run the handler again',
  release: 'the lease ran out first, so a retry of that event waits for the lease to end',
  renew: 'the lease ran out first, so a retry of that event may run the handler again while it still runs',
};

/** Publishes a failed dedup store operation on the store channel, while someone listens there. */
export function tellStoreFailure(operation: StoreOperation, key: string, attempt: number, error: unknown, tenant?: string): void {
  if (storeFailures?.hasSubscribers) storeFailures.publish(tenant === undefined ? { operation, key, attempt, error } : { operation, key, attempt, error, tenant });
}

/** Publishes a failed secret lookup on its channel, while someone listens there. */
export function tellLookupFailure(id: string, tenant: string | undefined, error: unknown): void {
  if (lookupFailures?.hasSubscribers) lookupFailures.publish(tenant === undefined ? { id, error } : { id, tenant, error });
}

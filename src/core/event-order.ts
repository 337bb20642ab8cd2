/**
 * Where an event stands in the history of the object it is about: the
 * object's key, scoped by the secret as dedup keys are, and the event's
 * version as a number that orders. The sender retries for days, so an older
 * event can arrive after a newer one; the `webhook-timestamp` header is the
 * time of the attempt and cannot tell them apart, so the order comes from the
 * payload.
 */
import { checkCallback, checkOptionsObject, checkPolicy } from '../base/option-checks.js';
import { WebhookOptionsError } from '../base/options-error.js';
import type { WebhookDelivery } from './delivery.js';
import { WebhookDedupError } from './errors.js';
import type { WebhookEvent } from './event.js';

/**
 * What to do with a stale event, one whose object has a higher version
 * processed already: `'skip'` runs nothing and answers 2xx (outcome
 * `stale`), so the sender stops; `'run'` runs its code all the same, with
 * `delivery.stale` set.
 */
export type StaleEventPolicy = 'skip' | 'run';

/** How events about one object are put in order; `E` is the event the functions read. */
export interface OrderingOptions<E extends WebhookEvent = WebhookEvent> {
  /**
   * The object an event is about, a non-empty string. Events of one key run
   * one at a time, and never one older than a version already processed.
   * `undefined` leaves the event unordered: it runs as without `ordering`.
   * Typed `unknown`, as the fields an envelope adds are: anything else is
   * refused 422 `invalid_event_order`.
   * @default (event) => event.data.object.id
   */
  readonly key?: (event: E) => unknown;
  /**
   * The event's version: a number, a `Date`, or an RFC 3339 string (compared
   * by the instant it names, to the microsecond, not as text), e.g.
   * `(event) => event.timestamp`, the time the event happened. Never the
   * `webhook-timestamp` header: that is the time of the attempt. `undefined`
   * leaves the event unordered; anything else is refused 422
   * `invalid_event_order`. Required.
   */
  readonly version: (event: E) => unknown;
  /**
   * What to do with an event older than one of its object processed before.
   * @default 'skip'
   */
  readonly staleEvents?: StaleEventPolicy;
}

/** An event's place in its object's history, as a store records it. */
export interface EventOrder {
  /** The object's key, scoped by the secret that verified the delivery, as `dedupKey` is: `<16 characters>:<key>`. */
  readonly key: string;
  /** The version, as a number: an instant as its milliseconds since the Unix epoch. */
  readonly version: number;
}

/** The ordering options, checked. */
export interface CheckedOrdering {
  readonly key: (event: WebhookEvent) => unknown;
  readonly version: (event: WebhookEvent) => unknown;
  readonly staleEvents: StaleEventPolicy;
}

/** The id of the object the event is about: the envelope's `data.object.id`, which verification checked is a string. */
const objectId = (event: WebhookEvent): string => event.data.object.id;

/**
 * The `ordering` options, checked and copied; `undefined` when not given.
 * Throws `WebhookOptionsError` for a mistake.
 */
export function checkOrdering(ordering: unknown): CheckedOrdering | undefined {
  if (ordering === undefined) return undefined;
  checkOptionsObject('ordering', ordering);
  const { key = objectId, version, staleEvents } = ordering as Partial<OrderingOptions>;
  if (typeof version !== 'function') throw new WebhookOptionsError('svc-webhooks: ordering.version is required: a function from the event to its version, e.g. (event) => event.timestamp');
  checkCallback('ordering.key', key);
  return {
    key: key as CheckedOrdering['key'],
    version: version as CheckedOrdering['version'],
    staleEvents: checkPolicy('ordering.staleEvents', staleEvents, ['skip', 'run'] as const) ?? 'skip',
  };
}

// YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM), the T and Z in either case (RFC 3339, section 5.6).
const RFC_3339 = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

/** `version` as a number that orders, or `undefined` when it is no finite number, valid `Date` or RFC 3339 time. */
export function versionNumber(version: unknown): number | undefined {
  if (typeof version === 'number') return Number.isFinite(version) ? version : undefined;
  if (version instanceof Date) {
    const ms = version.getTime();
    return Number.isNaN(ms) ? undefined : ms;
  }
  if (typeof version !== 'string') return undefined;
  const match = RFC_3339.exec(version);
  if (match === null) return undefined;
  const [, date, time, fraction = '', zone] = match;
  // The whole seconds by Date (which refuses a day or hour out of range), then the fraction, to the microsecond.
  const ms = Date.parse(`${date}T${time}${zone!.toUpperCase()}`);
  if (Number.isNaN(ms)) return undefined;
  return ms + Number(`0.${fraction}`) * 1000;
}

const UNREADABLE = 'the ordering key or version of this event could not be read; retry later';

/**
 * The order of `delivery`'s event by `ordering`: `undefined` when its key or
 * version is `undefined` (an unordered event). Throws `WebhookDedupError`
 * `invalid_event_order`, its `cause` what was thrown, when a function threw
 * or answered what cannot order.
 */
export function eventOrder(ordering: CheckedOrdering, delivery: Pick<WebhookDelivery, 'event' | 'dedupKey'>): EventOrder | undefined {
  const { event, dedupKey } = delivery;
  let key: unknown;
  let version: unknown;
  try {
    key = ordering.key(event);
    version = ordering.version(event);
  } catch (error) {
    throw new WebhookDedupError('invalid_event_order', UNREADABLE, { cause: error });
  }
  if (key === undefined || version === undefined) return undefined;
  const number = versionNumber(version);
  if (typeof key !== 'string' || key === '' || number === undefined) {
    throw new WebhookDedupError('invalid_event_order', UNREADABLE, {
      cause: new TypeError('ordering.key must answer a non-empty string and ordering.version a finite number, a valid Date or an RFC 3339 time'),
    });
  }
  // The scope is the dedup key's: up to and with its first ':'.
  return { key: dedupKey.slice(0, dedupKey.indexOf(':') + 1) + key, version: number };
}

/** `delivery` as the code of a stale event sees it under `staleEvents: 'run'`: `stale` set, the rest the same. */
export function staleDelivery<D extends WebhookDelivery>(delivery: D): D {
  return { ...delivery, stale: true };
}

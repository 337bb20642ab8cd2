/** The answers svc-webhooks decides itself: a refusal with its JSON body, 204 for a handled event, 202 for a queued one, 200 for a duplicate or a stale event skipped. */
import { WebhookError, type WebhookErrorCode } from '../core/errors.js';
import type { HandlerOutcome } from '../process/dispatcher.js';
import type { HandoffOutcome } from '../process/handoff.js';

/** A response an entry sends: `body` as JSON, or no body when it is `undefined`. */
export interface WebhookResponse {
  /** The HTTP status. */
  readonly status: number;
  /** Headers to send, by lower-case name: `retry-after`, `connection`. */
  readonly headers: Readonly<Record<string, string>>;
  /** What to send as JSON; `undefined` for no body. */
  readonly body: unknown;
}

/** The body of a refusal: the shape every refusal of svc-webhooks has, plus `paths` for a schema failure. */
export interface WebhookErrorBody {
  /** The refusal. */
  readonly error: {
    /** The stable code: see `ERROR_CODES`. */
    readonly code: WebhookErrorCode;
    /** What went wrong, for a person; never a secret, a signature or the body. */
    readonly message: string;
    /** `invalid_event_data` only: where the event failed its schema, as `$.data.object.id`; never the values. */
    readonly paths?: readonly string[];
  };
}

/** An answer decided here, with the refusal it stands for, if any. */
export interface DecidedResponse extends WebhookResponse {
  /** The refusal `body` describes, for the user's `onError`; absent on a 2xx. */
  readonly error?: WebhookError;
}

/** What `dispatch` answers: 204 without a body, or a refusal. */
export interface DispatchResult extends DecidedResponse {
  /** The refusal's body, or `undefined` for 204 and for an event skipped. */
  readonly body: WebhookErrorBody | undefined;
  /** Why nothing ran, on a 200 of `dispatch` with `dedup`: the event was processed already, or is stale (`ordering`). */
  readonly skipped?: 'duplicate' | 'stale';
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
const ACCEPTED: DispatchResult = Object.freeze({ status: 204, headers: NO_HEADERS, body: undefined });
const QUEUED: DecidedResponse = Object.freeze({ status: 202, headers: NO_HEADERS, body: undefined });
const DUPLICATE: DecidedResponse = Object.freeze({ status: 200, headers: NO_HEADERS, body: Object.freeze({ received: true, duplicate: true }) });

/** 204 without a body: the event was handled, or nothing needed to handle it. */
export function accepted(): DispatchResult {
  return ACCEPTED;
}

const STALE: DecidedResponse = Object.freeze({ status: 200, headers: NO_HEADERS, body: Object.freeze({ received: true, stale: true }) });

/** 200 for an event processed already: the sender stops, and nothing runs again. */
export function duplicate(): DecidedResponse {
  return DUPLICATE;
}

/** 200 for a stale event skipped (`ordering`): the sender stops, and nothing runs. */
export function staleSkipped(): DecidedResponse {
  return STALE;
}

/** Whether `decided` is the answer to a stale event skipped. */
export function isStaleSkipped(decided: DecidedResponse): boolean {
  return decided === STALE;
}

/**
 * The refusal for `error`, with `headers` (Retry-After, Connection) and the
 * schema's failing `paths` when there are some. Anything but a
 * `WebhookError` is re-thrown: it is a bug, not a request to refuse.
 */
export function refused(error: unknown, headers: Readonly<Record<string, string>> = NO_HEADERS, paths?: readonly string[]): DispatchResult {
  if (!(error instanceof WebhookError)) throw error;
  const { code, message, status } = error;
  const body: WebhookErrorBody = { error: paths === undefined ? { code, message } : { code, message, paths } };
  return { status, headers, body, error };
}

/** The answer to what the handlers of `on` made of an event. */
export function handlersAnswer(outcome: HandlerOutcome): DispatchResult {
  return outcome.kind === 'failed' ? refused(outcome.error, NO_HEADERS, outcome.paths) : ACCEPTED;
}

/**
 * `Retry-After` on a 503 whose cause mostly passes within seconds: a failing
 * dedup store, secret lookup or queue. 5 s, soon, for all three.
 */
export const RETRY_SOON: Readonly<Record<string, string>> = Object.freeze({ 'retry-after': '5' });

/** The answer to a handoff: 202 once queued, the duplicate's 200, or 503 `handoff_failed` with `Retry-After`. */
export function handoffAnswer(outcome: HandoffOutcome): DecidedResponse {
  if (outcome.kind === 'queued') return QUEUED;
  if (outcome.kind === 'duplicate') return DUPLICATE;
  return refused(outcome.error, RETRY_SOON);
}

/**
 * Where svc-webhooks writes what went wrong that no answer shows: a store
 * or a secret lookup that failed, a handler that threw, a queue that did
 * not record an event, an `onError` that failed. Each line is written with
 * fields an application's logs can filter on, to a logger of pino's shape,
 * or by default as one sentence on the console.
 */
import { printable } from './printable.js';
import { kindOf, reasonOf } from './user-code.js';
import { WebhookOptionsError } from './options-error.js';

/** What went wrong, stable: the `code` field of every line. */
export type WebhookLogCode =
  /** A dedup store operation failed (`operation` says which). */
  | 'store_failed'
  /** A tenant's secret could not be looked up in time, or `tenants.of` threw. */
  | 'secret_unavailable'
  /** A handler threw or rejected. */
  | 'handler_failed'
  /** An event failed the schema of its type. */
  | 'invalid_event_data'
  /** The queue did not record an event handed off to it. */
  | 'handoff_failed'
  /** A queued job did not hold a delivery `enqueue` sent. */
  | 'invalid_job'
  /** `onError` threw, rejected or did not answer in time. */
  | 'on_error_failed'
  /** `dedup.onError` or `tenants.onLookupError` threw or rejected. */
  | 'on_store_error_failed'
  /** The platform's `waitUntil` threw. */
  | 'wait_until_failed';

/**
 * The fields of a line: what went wrong and for which delivery, where that
 * is known. Never a secret, a signature or a body; a handler's error gives
 * its class alone, as its message may quote the event.
 */
export interface WebhookLogFields {
  /** What went wrong. */
  readonly code: WebhookLogCode;
  /** The dedup store's operation (`begin`, `complete`, `release`, `renew`), or `lookup` for a tenant's secret. */
  readonly operation?: string;
  /** The delivery's `webhook-id` (not yet verified for a failed lookup). */
  readonly id?: string;
  /** The event's type. */
  readonly type?: string;
  /** The delivery's tenant, where the receiver serves many. */
  readonly tenant?: string;
  /** The id of the secret that verified the delivery. */
  readonly keyId?: string;
  /** The dedup key a store operation was for. */
  readonly key?: string;
  /** The class of the error, or `string` for a thrown string. */
  readonly errorClass?: string;
  /** The code a store's client gave its error (a SQLSTATE, `ECONNREFUSED`), where it is a plain word. */
  readonly errorCode?: string;
  /** The error's message, one line without credentials; absent for a handler's error. */
  readonly errorMessage?: string;
  /** The queue's id of the job a worker ran. */
  readonly jobId?: string;
  /** How many lines like this one were left out since the last one (a store that stays down). */
  readonly unlogged?: number;
}

/**
 * A logger of pino's shape: `warn(fields, message)` and `error(fields,
 * message)`. A pino or bunyan logger is one as it is, and so is `console`
 * (it prints the fields, then the message). For winston, whose methods take
 * the message first, pass `{ warn: (f, m) => log.warn(m, f), error: (f, m) => log.error(m, f) }`.
 */
export interface WebhookLogger {
  /** Something went wrong and nothing was lost: the sender or the queue tries again. */
  warn(fields: WebhookLogFields, message: string): unknown;
  /** Something went wrong that an operator should look at. */
  error(fields: WebhookLogFields, message: string): unknown;
}

/**
 * The most characters of a message the console line keeps: 2,000, past the longest sentence svc-webhooks
 * writes, whose values from outside are `quoted` (200 characters each).
 */
const MAX_CONSOLE_LINE_CHARS = 2000;

/** `svc-webhooks: <message>` on `console.error`, the message `printable` (its unprintable characters escaped) and cut past `MAX_CONSOLE_LINE_CHARS`. */
function consoleLine(_fields: WebhookLogFields, message: string): void {
  console.error(`svc-webhooks: ${printable(message, MAX_CONSOLE_LINE_CHARS)}`);
}

/**
 * The default: each line as one sentence, `svc-webhooks: <message>`, on `console.error`, the fields left out.
 * What a sender, a store or a callback put in the message (a tenant's name, an error's message) is shown with
 * its control characters, line and paragraph separators and bidirectional marks escaped (`\x1b`, `\r\n`,
 * `\u202e`), and the line cut past 2,000 characters, so that it can neither drive a terminal nor forge or
 * flood a line.
 */
export const CONSOLE_LINES: WebhookLogger = { warn: consoleLine, error: consoleLine };

/**
 * `text`, a value from outside (an event's id or type, a tenant, a dedup key), quoted for a message as JSON
 * quotes it, its other unprintable characters escaped and cut past 200 characters (`printable`'s bound): a
 * long value leaves the rest of the sentence readable.
 */
export function quoted(text: string): string {
  return printable(JSON.stringify(text));
}

/** `logger`, checked, or the console lines. Throws `WebhookOptionsError` for what has no `warn` and `error` functions. */
export function checkLogger(logger: unknown): WebhookLogger {
  if (logger === undefined) return CONSOLE_LINES;
  const { warn, error } = (logger ?? {}) as { warn?: unknown; error?: unknown };
  if (typeof logger !== 'object' || typeof warn !== 'function' || typeof error !== 'function') {
    throw new WebhookOptionsError('svc-webhooks: logger must have warn(fields, message) and error(fields, message) functions, as pino has');
  }
  return logger as WebhookLogger;
}

/**
 * Writes one line; a logger that throws or rejects takes nothing down: the
 * line goes to `console.error` then, with why.
 */
export function writeLog(logger: WebhookLogger, level: 'warn' | 'error', fields: WebhookLogFields, message: string): void {
  const failed = (error: unknown): void => {
    CONSOLE_LINES.error(fields, `the logger failed (${reasonOf(error)}); ${message}`);
  };
  try {
    // Promise.resolve adopts what a logger may answer (a promise, any thenable), so its rejection is caught too.
    Promise.resolve(logger[level](fields, message)).catch(failed);
  } catch (error) {
    failed(error);
  }
}

/** The fields that name an error: its class, and its message where that cannot quote an event. */
export function errorFields(error: unknown, withMessage: boolean): Pick<WebhookLogFields, 'errorClass' | 'errorMessage'> {
  const errorClass = kindOf(error);
  return withMessage ? { errorClass, errorMessage: reasonOf(error) } : { errorClass };
}

/**
 * Where svc-webhooks writes what went wrong: a store or a secret lookup that
 * failed, a handler that threw, a queue that did not record an event, an
 * `onError` that failed, a request refused. Each line is written with fields
 * an application's logs can filter on, to a logger of pino's shape, or by
 * default as one sentence on the console (a handler's stack below it).
 */
import { printable } from './printable.js';
import { kindOf, reasonOf } from './user-code.js';
import { WebhookOptionsError } from './options-error.js';

/** What went wrong, stable: the `code` field of every line. A refused request's line has its refusal's code, as its answer does. */
export type WebhookLogCode =
  /** A dedup store operation failed (`operation` says which). */
  | 'store_failed'
  /** With `ordering`: an event older than one of its object processed before was skipped, and answered 200. */
  | 'stale_event'
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
  | 'wait_until_failed'
  /** A refused request: `webhook-id`, `webhook-timestamp` or `webhook-signature` is missing. */
  | 'missing_header'
  /** A refused request: `webhook-timestamp` is no integer of seconds. */
  | 'invalid_timestamp'
  /** A refused request: its timestamp is older than the tolerance. */
  | 'timestamp_too_old'
  /** A refused request: its timestamp is further ahead than the tolerance. */
  | 'timestamp_too_new'
  /** A refused request: no signature matched any secret. */
  | 'invalid_signature'
  /** A refused request: signed, but no event envelope. */
  | 'invalid_payload'
  /** A refused request: its tenant has no secret. */
  | 'unknown_tenant'
  /** A refused request: its body is larger than `maxPayloadBytes`. */
  | 'payload_too_large'
  /** A refused request: its body did not arrive within `bodyTimeoutMs`. */
  | 'body_timeout'
  /** A refused request: something read its body before verification (a setup mistake). */
  | 'body_already_parsed'
  /** A refused request: a parser decoded its body from another charset than UTF-8 (a setup mistake). */
  | 'body_decoded'
  /** A refused request: the Lambda function got an event that is no HTTP request (a setup mistake). */
  | 'not_http_request';

/**
 * The fields of a line: what went wrong and for which delivery, where that
 * is known. Never a secret, a signature or a body; what a handler threw is
 * the user's own, and is given whole.
 */
export interface WebhookLogFields {
  /** What went wrong. */
  readonly code: WebhookLogCode;
  /** The dedup store's operation (`begin`, `complete`, `release`, `renew`), or `lookup` for a tenant's secret. */
  readonly operation?: string;
  /** The delivery's `webhook-id` (not verified for a failed lookup or a refused request). */
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
  /** The error's message: a store's or a callback's without credentials, a handler's as it threw it; absent for a queue's error. */
  readonly errorMessage?: string;
  /**
   * What a handler threw, when it threw an `Error`, as it is: pino's `err` serializer writes its `type`,
   * `message` and `stack` (and its causes), and the default console line its stack.
   */
  readonly err?: Error;
  /** The queue's id of the job a worker ran. */
  readonly jobId?: string;
  /** How many lines like this one were left out since the last one (a store that stays down, refusals of one code). */
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

/** The most frames of a stack the console line shows, and the most characters of each. */
const MAX_CONSOLE_FRAMES = 20;
const MAX_FRAME_CHARS = 400;

/**
 * `svc-webhooks: <message>` on `console.error`, the message `printable` (its unprintable characters escaped)
 * and cut past `MAX_CONSOLE_LINE_CHARS`; then the frames of `fields.err`'s stack, if any, one a line.
 */
function consoleLine(fields: WebhookLogFields, message: string): void {
  const frames = fields.err === undefined ? [] : stackFrames(fields.err);
  console.error([`svc-webhooks: ${printable(message, MAX_CONSOLE_LINE_CHARS)}`, ...frames].join('\n'));
}

/**
 * The frames of `error`'s stack (its `at …` lines), each indented, escaped and cut, at most
 * `MAX_CONSOLE_FRAMES`: never its first lines, which repeat the message the sentence already gives, so that
 * nothing in the message can start a line of its own.
 */
function stackFrames(error: Error): string[] {
  let stack: unknown;
  try {
    ({ stack } = error);
  } catch {
    // A stack getter that throws leaves the sentence alone.
    return [];
  }
  if (typeof stack !== 'string') return [];
  const frames = stack.split('\n').filter((line) => /^\s*at /.test(line));
  return frames.slice(0, MAX_CONSOLE_FRAMES).map((frame) => `    ${printable(frame.trim(), MAX_FRAME_CHARS)}`);
}

/**
 * The default: each line as one sentence, `svc-webhooks: <message>`, on `console.error`, the other fields left
 * out but for a thrown error's stack: its frames follow the sentence, one an indented line, as Node prints a
 * stack. What a sender, a store, a callback or a handler put in the message or the stack (a tenant's name, an
 * error's message) is shown with its control characters, line and paragraph separators and bidirectional marks
 * escaped (`\x1b`, `\r\n`, `\u202e`), the sentence cut past 2,000 characters and the stack past 20 frames, so
 * that it can neither drive a terminal nor forge or flood a line.
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

/**
 * What the user's code threw, for a sentence: `TypeError: <its message>` (escaped, and cut past 1,000
 * characters), `string: <the string>`, or the class alone for an empty message, `null` or `undefined`.
 */
export function thrownText(error: unknown): string {
  const reason = error === undefined || error === null ? '' : reasonOf(error);
  return reason === '' ? kindOf(error) : `${kindOf(error)}: ${printable(reason, MAX_THROWN_CHARS)}`;
}

/** The most characters of a thrown error's message a sentence keeps: the whole is in the fields. */
const MAX_THROWN_CHARS = 1000;

/** The fields of what the user's code threw: its class and message, and the error itself under `err` when it is one. */
export function thrownFields(error: unknown): Pick<WebhookLogFields, 'errorClass' | 'errorMessage' | 'err'> {
  const named = errorFields(error, true);
  return error instanceof Error ? { ...named, err: error } : named;
}

/** A log's quiet spell about one thing: until when it lasts, and how many lines it left out so far. */
export interface QuietSpell {
  until: number;
  unlogged: number;
}

/**
 * Whether a line about `key` is written at `nowMs`, for a log that writes at most one line per key per
 * `intervalMs`: `undefined` while the spell after the last one lasts (the line is counted), else the number
 * of lines the spell left out (0 for none), and a new spell starts. A clock that went back past the spell's
 * start ends it, rather than holding the log quiet until the clock catches up.
 */
export function lineDue<K>(spells: { get(key: K): QuietSpell | undefined; set(key: K, spell: QuietSpell): unknown }, key: K, nowMs: number, intervalMs: number): number | undefined {
  const spell = spells.get(key);
  if (spell !== undefined && nowMs < spell.until && nowMs >= spell.until - intervalMs) {
    spell.unlogged++;
    return undefined;
  }
  spells.set(key, { until: nowMs + intervalMs, unlogged: 0 });
  return spell?.unlogged ?? 0;
}

/**
 * What an entry knows of its platform: how to read a request and how to
 * answer it. I/O only: which user code runs is the entry's mode, chosen
 * once at creation (see `what-runs.ts`).
 */
import type { WebhookError } from '../core/errors.js';
import type { WebhookHeaders } from '../core/headers.js';
import type { WebhookPayload } from '../core/payload.js';
import type { EntryName } from '../process/diagnostics.js';
import type { BodyLimits } from './body-limits.js';
import type { WebhookResponse } from './responses.js';

/** What an entry knows of its platform's requests (`R`) and answers (`A`). */
export interface Platform<R, A> {
  /** Which entry this is, for the diagnostics channels. */
  readonly entry: EntryName;
  /**
   * The raw body. Rejects with a `WebhookError` to refuse the request (past
   * the limits, already parsed), with `SenderGoneError` when the connection
   * broke off; anything else is a bug and propagates.
   */
  body(request: R, limits: BodyLimits): WebhookPayload | PromiseLike<WebhookPayload>;
  /** The request's headers, for any request, even one that is no HTTP request at all. */
  headers(request: R): WebhookHeaders;
  /** Sends an answer decided here: `body` as JSON, or none when it is `undefined`. */
  send(request: R, response: WebhookResponse): A;
  /** The status the request was answered with, once answered: `answer` is what the entry returns (`undefined` where the route answered). */
  statusOf(request: R, answer: A | undefined): number;
  /** The request's sender left mid-body: nobody is left to answer. Absent where a body cannot break off (Lambda). */
  senderGone?(request: R): A;
  /**
   * Calls the user's `onError` for `error` and resolves to its answer once it
   * has answered, with `headers` (Retry-After, Connection: close) on it where
   * it set none of its own; rejects when it answered nothing. Absent without
   * an `onError`.
   */
  readonly onError?: ((request: R, error: WebhookError, headers: Readonly<Record<string, string>>) => PromiseLike<A>) | undefined;
  /** The request as the user's own functions take it (`tenant`): Express's `req`, Hono's `c`, the Fetch `Request`, the Lambda event. */
  userRequest(request: R): unknown;
  /** Keeps `work` alive after the answer where the runtime may cut it off (a Worker's `waitUntil`). */
  keepAlive?(request: R, work: Promise<void>): void;
}

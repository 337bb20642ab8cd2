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

/** How an entry's own answers look: a Response, a Lambda result. */
export interface AnswerShape<A> {
  /** Whether a value the user's handler or `onError` returned is an answer. */
  readonly isAnswer: (value: unknown) => value is A;
  /** What an answer is, for the error that names a value that is none. */
  readonly described: string;
  /** The HTTP status of an answer, which settles the dedup claim. */
  readonly statusOf: (answer: A) => number;
}

/** How an entry's answers look, are made from a response decided here, and take a refusal's headers; `Q` is its host's request. */
export interface HostAnswers<Q, A> extends AnswerShape<A> {
  /** The answer for a response decided here: `body` as JSON, or none when it is `undefined`. */
  make(request: Q, response: WebhookResponse): A;
  /**
   * `answer` with those of `headers` it lacks, whatever the letter case of
   * its own: Retry-After and the like apply whoever wrote the body.
   */
  withMissingHeaders(answer: A, headers: Readonly<Record<string, string>>, request: Q): A;
}

/** What the user's `onError` answered, as the answer to send, with the refusal's `headers` it lacks; throws for a value that is no answer. */
export function onErrorAnswer<Q, A>(answers: HostAnswers<Q, A>, value: unknown, headers: Readonly<Record<string, string>>, request: Q): A {
  if (!answers.isAnswer(value)) throw new TypeError(`it must answer ${answers.described}`);
  return answers.withMissingHeaders(value, headers, request);
}

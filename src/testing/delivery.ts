/**
 * One webhook delivery as the service makes it: a POST that counts as failed
 * unless a 2xx arrives within 10 seconds (spec section 6), retried with
 * backoff under the same webhook-id. The timing is injectable so that tests
 * need not wait it out. What a receiver answered is the receiver's to choose:
 * an attempt keeps its text only as `printable` makes it.
 */
import { Buffer } from 'node:buffer';
import { printable } from '../base/printable.js';
import { OUTCOME_HEADER, parseOutcome } from '../core/outcome-header.js';

const MAX_BACKOFF_MS = 30_000;
/** The most of an answer's body read, for its error code: an error envelope is far smaller. */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** How a sender waits: for the answer to one attempt, and between attempts. */
export interface DeliveryTiming {
  /** How long an attempt waits for its answer before it counts as failed. */
  readonly answerWindowMs: number;
  /** Waits `ms` before a retry. */
  readonly pause: (ms: number) => Promise<void>;
}

/** The service's timing: a 2xx within 10 seconds (spec sections 6 and 8), retries after real waits. */
export const SERVICE_TIMING: DeliveryTiming = {
  answerWindowMs: 10_000,
  pause: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** What one attempt got. */
export interface Attempt {
  /** Milliseconds from sending to the end of the answer, or to giving up. */
  readonly ms: number;
  /** The HTTP status; absent when no answer came. */
  readonly status?: number;
  /** `error.code` of a JSON answer (the spec's error envelope), when it has one, made `printable`. */
  readonly errorCode?: string;
  /** The answer's `Retry-After`, when it is a whole number of seconds. */
  readonly retryAfterSeconds?: number;
  /** True when the answer's body is a receiver's `{ "duplicate": true }`: the event was processed before. */
  readonly duplicate?: true;
  /** True when the answer's body is a receiver's `{ "stale": true }`: an event of its object newer than this one was processed. */
  readonly stale?: true;
  /** Why no answer came: the window ran out, or the connection failed (its reason made `printable`). */
  readonly failure?: string;
  /** The receiver's own verdict, its `svc-webhooks-outcome` header as sent (`outcomeHeader: 'on'`); `describeAttempt` prints it escaped. */
  readonly outcome?: string;
}

/** Whether the sender counts the attempt as delivered. */
export function delivered(attempt: Attempt): boolean {
  const status = attempt.status ?? 0;
  return status >= 200 && status < 300;
}

/** Whether the receiver said it skipped the event as stale: by its body, or by its outcome header. */
export function answeredStale(attempt: Attempt): boolean {
  return attempt.stale === true || (attempt.outcome !== undefined && parseOutcome(attempt.outcome)?.outcome === 'stale');
}

/**
 * Whether the attempt ran the receiver's code, as far as its answer tells: a
 * 2xx neither a duplicate nor stale, and, where the outcome header says,
 * processed (or queued to be).
 */
export function answeredApplied(attempt: Attempt): boolean {
  if (!delivered(attempt) || attempt.duplicate === true || answeredStale(attempt)) return false;
  const verdict = attempt.outcome === undefined ? undefined : parseOutcome(attempt.outcome)?.outcome;
  return verdict === undefined || verdict === 'processed' || verdict === 'queued';
}

/** One attempt, as `postWithAnswer` makes it, without the answer's text. */
export async function post(
  target: DeliveryTarget,
  body: string | Uint8Array,
  headers: Readonly<Record<string, string>>,
  answerWindowMs = SERVICE_TIMING.answerWindowMs,
): Promise<Attempt> {
  return (await postWithAnswer(target, body, headers, answerWindowMs)).attempt;
}

/**
 * One attempt: POST `body` with `headers`, abandoned when the answer window
 * closes. Its status counts once it arrived in time; of the body at most
 * `MAX_ANSWER_BYTES` are read, and only while the window lasts, so a receiver
 * that answers 200 and then streams for ever costs neither memory nor the
 * delivery.
 */
export async function postWithAnswer(
  target: DeliveryTarget,
  body: string | Uint8Array,
  headers: Readonly<Record<string, string>>,
  answerWindowMs = SERVICE_TIMING.answerWindowMs,
): Promise<{ readonly attempt: Attempt; readonly answer?: string }> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), answerWindowMs);
  try {
    const response = await send(target, { method: 'POST', body, headers, redirect: 'manual', signal: controller.signal });
    const text = await answerText(response);
    const answer = parsedAnswer(text);
    const errorCode = errorCodeOf(answer);
    const retryAfter = response.headers.get('retry-after');
    const outcome = response.headers.get(OUTCOME_HEADER);
    const attempt: Attempt = {
      ms: elapsed(),
      status: response.status,
      ...(errorCode !== undefined && { errorCode }),
      ...(/^\d{1,9}$/.test(String(retryAfter)) && { retryAfterSeconds: Number(retryAfter) }),
      ...((answer as { duplicate?: unknown } | undefined)?.duplicate === true && { duplicate: true as const }),
      ...((answer as { stale?: unknown } | undefined)?.stale === true && { stale: true as const }),
      ...(outcome !== null && { outcome }),
    };
    return { attempt, answer: text };
  } catch (error) {
    if (controller.signal.aborted) return { attempt: { ms: elapsed(), failure: `no answer within ${answerWindowMs / 1000} s` } };
    const cause = (error as { cause?: { code?: unknown } }).cause;
    const code = typeof cause?.code === 'string' ? cause.code : (error as Error).message;
    // A handler in this process may throw anything, and the HTTP client's messages may quote the answer.
    return { attempt: { ms: elapsed(), failure: `connection failed (${printable(String(code))})` } };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Where a delivery goes: a URL, or a Fetch handler called in this process
 * (`(request) => Promise<Response>`, Hono's `app.request`, a Worker's fetch).
 */
export type DeliveryTarget = string | ((request: Request) => Response | Promise<Response>);

const IN_PROCESS_URL = 'http://receiver.test/webhooks';

/**
 * Sends one request to `target`. A handler in this process is not stopped
 * when the answer window closes, as a receiver is not when the service gives
 * up on it: only its answer stops counting.
 */
function send(target: DeliveryTarget, init: RequestInit & { readonly signal: AbortSignal }): Promise<Response> {
  if (typeof target === 'string') return fetch(target, init);
  const { signal } = init;
  return new Promise<Response>((resolve, reject) => {
    signal.addEventListener('abort', () => reject(signal.reason));
    Promise.resolve()
      .then(() => target(new Request(IN_PROCESS_URL, init)))
      .then(resolve, reject);
  });
}

/** Up to `MAX_ANSWER_BYTES` of the answer's body, as text; what a window closing mid-body left, if it did. */
async function answerText(response: Response): Promise<string> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < MAX_ANSWER_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // The window closed mid-body: the status came in time, and counts.
  } finally {
    reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES).toString('utf8');
}

/**
 * The answer's `error.code`, made printable here, where it enters: every
 * report of an attempt (`send`'s lines, `check`'s table and JSON, the
 * testing kit's `SimulatedAttempt`) then holds it safe, whichever prints it.
 */
function errorCodeOf(answer: unknown): string | undefined {
  const code = (answer as { error?: { code?: unknown } } | null | undefined)?.error?.code;
  return typeof code === 'string' ? printable(code) : undefined;
}

/** The answer's body as JSON, or `undefined` where it is none. */
function parsedAnswer(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** What an attempt got, in a few words, on one line: `503 service_unavailable (8 ms)`. */
export function describeAttempt(attempt: Attempt): string {
  if (attempt.status === undefined) return `${attempt.failure} (${attempt.ms} ms)`;
  const answered = `${attempt.status}${attempt.errorCode === undefined ? '' : ` ${attempt.errorCode}`} (${attempt.ms} ms)`;
  return attempt.outcome === undefined ? answered : `${answered}, receiver: ${printable(attempt.outcome)}`;
}

/** A delivery to make, attempt after attempt. */
export interface DeliveryPlan {
  /** A URL, or a Fetch handler in this process. */
  readonly url: DeliveryTarget;
  readonly body: string;
  /** The headers of one attempt: signed afresh each time, always with the same webhook-id. */
  readonly headers: () => Readonly<Record<string, string>>;
  /** How many times a failed attempt is retried. */
  readonly retries: number;
  /** The wait before the first retry, doubled for each next one (up to 30 s). */
  readonly backoffMs: number;
  /**
   * Whether a failed attempt is retried, retries left.
   * @default every failed attempt
   */
  readonly retryIf?: (attempt: Attempt) => boolean;
  /** Told of each attempt as it ends, with the wait before the next one (absent when none follows). */
  readonly onAttempt?: (attempt: Attempt, number: number, nextInMs: number | undefined) => void;
  /** @default SERVICE_TIMING */
  readonly timing?: DeliveryTiming;
}

/** Makes the delivery; answers every attempt, the last one delivered or out of retries. */
export async function deliver(plan: DeliveryPlan): Promise<Attempt[]> {
  const { retryIf = () => true, timing = SERVICE_TIMING } = plan;
  const attempts: Attempt[] = [];
  for (;;) {
    const attempt = await post(plan.url, plan.body, plan.headers(), timing.answerWindowMs);
    attempts.push(attempt);
    const retry = !delivered(attempt) && attempts.length <= plan.retries && retryIf(attempt);
    const waitMs = retry ? Math.min(plan.backoffMs * 2 ** (attempts.length - 1), MAX_BACKOFF_MS) : undefined;
    plan.onAttempt?.(attempt, attempts.length, waitMs);
    if (waitMs === undefined) return attempts;
    await timing.pause(waitMs);
  }
}

/**
 * The service's delivery behaviour in a test: each attempt signed afresh
 * under the same `webhook-id`, failed unless a 2xx arrives within the answer
 * window, retried with backoff; copies sent at once, each retried on its
 * own. The same delivery code the command line's `send` and `check` use.
 */
import type { WebhookEvent } from '../core/event.js';
import type { WebhookSecret } from '../core/secret.js';
import { checkCallback } from '../base/option-checks.js';
import { deliver, delivered, SERVICE_TIMING, type DeliveryTarget } from './delivery.js';
import { signedHeaders } from './signed-request.js';
import { WebhookOptionsError } from '../base/options-error.js';
import { asDeliveryTarget, type AzureDeliveryTarget, type LambdaDeliveryTarget } from './in-process-targets.js';
import { checkSimulateOrdering, simulateOrdering, type SimulatedOrdering, type SimulateOrderingOptions } from './ordering-scenario.js';

/** Options of `simulateDelivery()`. */
export interface SimulateDeliveryOptions {
  /** The endpoint's secret, as the receiver is given it. */
  readonly secret: WebhookSecret;
  /**
   * How many copies are sent at once, each retried on its own, as the service may when a retry meets
   * a first attempt still running.
   * @default 1
   */
  readonly copies?: number;
  /**
   * Attempts per copy, the first included.
   * @default 5
   */
  readonly maxAttempts?: number;
  /**
   * How long an attempt waits for a 2xx before it counts as failed.
   * @default 10000 (the service's window)
   */
  readonly answerWindowMs?: number;
  /**
   * Waits between attempts (1 s, 2 s, 4 s … up to 30 s): pass `async () => {}` to run retries at once.
   * A compressed wait lets no time pass: retries are signed at `now()` all the same.
   * @default real waits
   */
  readonly sleep?: (ms: number) => Promise<void>;
  /**
   * The clock each attempt is signed with when it is sent, in milliseconds since the Unix epoch. It
   * must be the receiver's clock, or the receiver refuses attempts as `timestamp_too_old` or
   * `timestamp_too_new`. To test retries as if the waits passed, without waiting them out, give the
   * receiver and `simulateDelivery` the same fake clock and move it on in `sleep`: with
   * `let clock = Date.now()`, pass `now: () => clock` to both and `sleep: async (ms) => { clock += ms; }`
   * here, and every retry carries a timestamp later than the one before by the wait.
   * @default Date.now
   */
  readonly now?: () => number;
  /**
   * Delivers a lifecycle of events about one object instead, as the
   * service's retries may (shuffled, some twice, a few at once, each attempt
   * without a 2xx retried later on its own, deterministic for a seed), and
   * compares the object's state then, read by `ordering.state`, with its
   * state after the lifecycle in order: the result's `ordering`. Not with
   * `copies`.
   * @default undefined (`event` alone, in `copies`)
   */
  readonly ordering?: SimulateOrderingOptions;
}

/** One attempt of one copy. */
export interface SimulatedAttempt {
  /** Which copy, from 1; under `ordering`, which delivery of the shuffled lifecycle. */
  readonly copy: number;
  /** Under `ordering`, the id of the event the attempt delivered. */
  readonly event?: string;
  /** Under `ordering`, the event's place in its object's lifecycle, from 1, the oldest. */
  readonly version?: number;
  /** The HTTP status; absent when no answer came within the window or the connection failed. */
  readonly status?: number;
  /** `error.code` of a JSON refusal, safe to print: control characters escaped (`\x1b`, `\n`), cut to 200 characters. */
  readonly code?: string;
  /** True when the receiver answered `{ "duplicate": true }`: the event was processed before, and ran nothing again. */
  readonly duplicate?: true;
  /** Under `ordering`, true when the receiver answered the event stale (`{ "stale": true }`, or the outcome header's `stale`): it ran nothing. */
  readonly stale?: true;
  /** How long the attempt took, in milliseconds: to its answer, or to the end of the window. */
  readonly ms: number;
}

/** What `simulateDelivery()` resolves to. */
export interface SimulatedDelivery {
  /** Whether every copy ended in a 2xx. */
  readonly delivered: boolean;
  /** Every attempt of every copy, in the order they ended. */
  readonly attempts: readonly SimulatedAttempt[];
  /** What the ordering scenario found; present when `options.ordering` was given. */
  readonly ordering?: SimulatedOrdering;
}

/**
 * Delivers `event` to `target`, a URL or a Fetch handler in this process
 * (`(request) => Promise<Response>`, Hono's `app.request`, a Worker's
 * fetch), the way the service does.
 * @example
 * ```ts
 * import { verifyWebhook } from 'svc-webhooks/fetch';
 * import { simulateDelivery, testEvent } from 'svc-webhooks/testing';
 *
 * const secret = 'whsec_c2VjcmV0LWZvci10ZXN0cw==';
 * const receiver = verifyWebhook({ secret }, async (event) => console.log(event.id));
 * // Two copies at once: the handler runs once, both copies end in a 2xx.
 * const { delivered } = await simulateDelivery(receiver, testEvent('call.missed'), { secret, copies: 2, sleep: async () => {} });
 * ```
 */
export function simulateDelivery(target: DeliveryTarget, event: WebhookEvent, options: SimulateDeliveryOptions): Promise<SimulatedDelivery>;
/**
 * Delivers `event` to a Lambda handler in this process the way the service
 * does, each attempt the event of `target.format`'s source
 * ({@link LambdaDeliveryTarget}).
 * @example
 * ```ts
 * import { verifyWebhook } from 'svc-webhooks/lambda';
 * import { simulateDelivery, testEvent } from 'svc-webhooks/testing';
 *
 * const secret = 'whsec_c2VjcmV0LWZvci10ZXN0cw==';
 * const handler = verifyWebhook({ secret }, async (event) => console.log(event.id));
 * // Two copies at once, as REST API events: the handler runs once, both copies end in a 2xx.
 * const { delivered } = await simulateDelivery({ lambda: handler, format: 'rest' }, testEvent('call.missed'), { secret, copies: 2, sleep: async () => {} });
 * ```
 */
export function simulateDelivery(target: LambdaDeliveryTarget, event: WebhookEvent, options: SimulateDeliveryOptions): Promise<SimulatedDelivery>;
/**
 * Delivers `event` to an Azure Functions HTTP handler in this process the
 * way the service does ({@link AzureDeliveryTarget}).
 * @example
 * ```ts
 * import { verifyWebhook } from 'svc-webhooks/azure';
 * import { simulateDelivery, testEvent } from 'svc-webhooks/testing';
 *
 * const secret = 'whsec_c2VjcmV0LWZvci10ZXN0cw==';
 * const handler = verifyWebhook({ secret }, async (event) => console.log(event.id));
 * const { attempts } = await simulateDelivery({ azure: handler }, testEvent('call.missed'), { secret, maxAttempts: 3 });
 * ```
 */
export function simulateDelivery(target: AzureDeliveryTarget, event: WebhookEvent, options: SimulateDeliveryOptions): Promise<SimulatedDelivery>;
/**
 * Delivers `event` to any of those targets the way the service does: for a
 * test run against each.
 * @example
 * ```ts
 * import { verifyWebhook as lambdaWebhook } from 'svc-webhooks/lambda';
 * import { verifyWebhook as azureWebhook } from 'svc-webhooks/azure';
 * import { simulateDelivery, testEvent, type AzureDeliveryTarget, type LambdaDeliveryTarget } from 'svc-webhooks/testing';
 *
 * const secret = 'whsec_c2VjcmV0LWZvci10ZXN0cw==';
 * const targets: Array<LambdaDeliveryTarget | AzureDeliveryTarget> = [
 *   { lambda: lambdaWebhook({ secret }, () => {}), format: 'alb' },
 *   { azure: azureWebhook({ secret }, () => {}) },
 * ];
 * for (const target of targets) await simulateDelivery(target, testEvent('call.missed'), { secret });
 * ```
 */
export function simulateDelivery(
  target: DeliveryTarget | LambdaDeliveryTarget | AzureDeliveryTarget,
  event: WebhookEvent,
  options: SimulateDeliveryOptions,
): Promise<SimulatedDelivery>;
/**
 * Throws `WebhookOptionsError` for counts that are no whole numbers, a clock that is no function, a target that is
 * none of those, or a mistake in `ordering`.
 */
export async function simulateDelivery(
  target: DeliveryTarget | LambdaDeliveryTarget | AzureDeliveryTarget,
  event: WebhookEvent,
  options: SimulateDeliveryOptions,
): Promise<SimulatedDelivery> {
  const { secret, copies = 1, maxAttempts = 5, answerWindowMs = SERVICE_TIMING.answerWindowMs, now = Date.now, sleep = SERVICE_TIMING.pause } = options;
  if (!Number.isSafeInteger(copies) || copies < 1) throw new WebhookOptionsError('svc-webhooks: copies must be a whole number of at least 1');
  if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1) throw new WebhookOptionsError('svc-webhooks: maxAttempts must be a whole number of at least 1');
  checkCallback('now', now);
  const url = asDeliveryTarget(target, now);
  if (options.ordering !== undefined) {
    if (options.copies !== undefined) throw new WebhookOptionsError('svc-webhooks: ordering sends copies of its own: leave copies out');
    const ordering = checkSimulateOrdering(options.ordering, event, now());
    return simulateOrdering({ url, secret, maxAttempts, now, timing: { answerWindowMs, pause: sleep } }, ordering);
  }
  const body = JSON.stringify(event);
  const attempts: SimulatedAttempt[] = [];
  const outcomes = await Promise.all(
    Array.from({ length: copies }, (_, i) =>
      deliver({
        url,
        body,
        // Signed again for each attempt, at the receiver's time when it is sent, always with the event's id.
        headers: () => signedHeaders(body, { secret, id: event.id, timestamp: Math.floor(now() / 1000) }),
        retries: maxAttempts - 1,
        backoffMs: 1000,
        timing: { answerWindowMs, pause: sleep },
        onAttempt: ({ status, errorCode, duplicate, ms }) =>
          void attempts.push({
            copy: i + 1,
            ...(status !== undefined && { status }),
            ...(errorCode !== undefined && { code: errorCode }),
            ...(duplicate && { duplicate }),
            ms,
          }),
      }),
    ),
  );
  return { delivered: outcomes.every((copy) => delivered(copy.at(-1)!)), attempts };
}

/**
 * The one request path of every entry (Express, Hono, Fastify, Fetch,
 * Lambda), top to bottom: read the body, verify it, claim its event, run the
 * user's code (the route, the handlers of `on`, a handoff, or the entry's
 * single handler), settle the claim by the answer, and answer. An entry
 * supplies a `Platform`, a few small functions that know its requests and
 * its answers, and what it brings to run: its route, or the handler it was
 * given.
 */
import { DeadlineQueue, withinDeadline } from '../base/deadlines.js';
import { errorFields, quoted, writeLog } from '../base/logger.js';
import { checkPolicy } from '../base/option-checks.js';
import { isThenable, reasonOf } from '../base/user-code.js';
import type { WebhookDelivery } from '../core/delivery.js';
import { WebhookError } from '../core/errors.js';
import { WebhookOptionsError } from '../base/options-error.js';
import { readHeader } from '../core/headers.js';
import { formatOutcome, OUTCOME_HEADER } from '../core/outcome-header.js';
import type { WebhookPayload } from '../core/payload.js';
import { deliveryTraces, handlerRuns, runWithinTrace, type DeliveryOutcome, type DeliveryTrace, type HandlerTrace } from '../process/diagnostics.js';
import { thrownBehind } from '../process/dispatcher.js';
import type { EventSchemas, HandlerErrorCallback, HandlerOptions } from '../process/handler-types.js';
import { bodyRefusal, SenderGoneError } from './body-limits.js';
import { checkOnErrorOptions, runOnError, type OnErrorOptions } from './on-error.js';
import type { Platform } from './platform.js';
import { refusalLog } from './refusal-log.js';
import { createReceiver, type ReceiverOptions, type SecretOrTenants } from './receiver.js';
import type { Settle } from '../process/claim.js';
import { staleDelivery } from '../core/event-order.js';
import { isStaleSkipped, type DecidedResponse } from './responses.js';
import { whatRuns, type EntryRunner, type Outcome } from './what-runs.js';

/** The options every entry takes, besides its secret (or `tenants`), its `onError` and what runs. */
export interface EntryOptions extends ReceiverOptions, OnErrorOptions {
  /**
   * `'on'` adds the `svc-webhooks-outcome` header to every answer the entry
   * makes itself (not one of your route or handler): the receiver's verdict
   * (`processed`, `queued`, `duplicate`, `in_progress`, `unhandled`, or a
   * refusal's code), how long the handlers ran, and the key id and tenant
   * that verified the delivery, as `processed; handler-ms=12; key-id=k2025`.
   * For development, where `svc-webhooks send` prints it; the sender learns
   * which key verified its deliveries.
   * @default 'off'
   */
  readonly outcomeHeader?: 'off' | 'on';
}

/** What the pipeline reads of an entry's options: the shared ones, its secret or `tenants` (each entry types `tenants.of` for its own request), and what runs. */
export type PipelineOptions = EntryOptions &
  SecretOrTenants<never> &
  Partial<HandlerOptions<EventSchemas>> & {
    readonly handoff?: unknown;
    readonly onHandlerError?: HandlerErrorCallback;
  };

/**
 * How long an answer of the user's code waits for the store to record its
 * outcome. A store answers in milliseconds, and waiting for it means a
 * retry finds the claim settled and a runtime that stops work once the
 * answer is sent (a Worker, a frozen Lambda) does not cut the settle off. A
 * store that keeps failing (or retries) must not hold the answer past the
 * sender's 10 s: the settle goes on after the answer then.
 */
export const SETTLE_WAIT_MS = 1000;

/** The tenant of every request to a receiver of one endpoint: none, and nothing is built per request to say so. */
const noTenant = (): undefined => undefined;

/** The delivery trace as the pipeline fills it in. */
type Trace = { -readonly [K in keyof DeliveryTrace]: DeliveryTrace[K] };

/**
 * Checks the options once and returns the request path; throws `WebhookOptionsError`.
 * `runner` is what the entry brings to run: its route (a middleware) or the
 * handler it was given (Fetch, Lambda). The path resolves to what the entry
 * returns: the platform's answer, or `undefined` once the route answered. It
 * rejects only with what `body` rejects with that is not a refusal, and with
 * what the route rejects with.
 */
export function createPipeline<R, A>(
  options: PipelineOptions,
  platform: Platform<R, A>,
  runner?: EntryRunner<R, A>,
): (request: R) => Promise<A | undefined> {
  if (options.ordering !== undefined && options.handoff !== undefined) {
    throw new WebhookOptionsError("svc-webhooks: ordering does not apply to a handoff, whose queue runs jobs in an order of its own: give ordering to the queue's worker (work({ ordering }))");
  }
  const receiver = createReceiver(options);
  const onErrorTimeoutMs = checkOnErrorOptions(options);
  const { logger, now, tenantOf } = receiver;
  const runs = whatRuns(options, runner, logger);
  const settleWaits = new DeadlineQueue(SETTLE_WAIT_MS);
  const outcomeHeader = checkPolicy('outcomeHeader', options.outcomeHeader, ['off', 'on'] as const) === 'on';
  const { entry } = platform;
  const logRefusal = refusalLog(logger, now);

  /** The request's `webhook-id` header, as sent. */
  const idOf = (request: R): string | undefined => readHeader(platform.headers(request), 'webhook-id', ', ');

  /** Answers what was decided here: by the user's `onError` for a refusal, if it answers in time, else as decided. */
  const answer = (request: R, decided: DecidedResponse, delivery?: WebhookDelivery): A | Promise<A> => {
    const { error, headers } = decided;
    if (error === undefined || platform.onError === undefined) return platform.send(request, decided);
    const about = delivery === undefined ? idFields(idOf(request)) : { id: delivery.id, type: delivery.event.type };
    return runOnError(() => platform.onError!(request, error, headers), onErrorTimeoutMs, logger, about).then((custom) =>
      custom === undefined ? platform.send(request, decided) : custom.value,
    );
  };

  /** Answers a refusal (or the claim's duplicate), finishing the trace where there is one. A refusal of the request's own is logged. */
  const refuse = (request: R, trace: Trace | undefined, decided: DecidedResponse, delivery?: WebhookDelivery): A | Promise<A | undefined> => {
    if (decided.error !== undefined) logRefusal(decided.error, () => idOf(request));
    else if (delivery !== undefined && isStaleSkipped(decided)) logStale(delivery);
    const answering = answer(request, outcomeHeader ? described(decided, refusalOutcome(decided), delivery) : decided, delivery);
    return trace === undefined ? answering : finish(request, trace, answering, refusalOutcome(decided));
  };

  /** Fills in the trace's answer once `answering` is sent, and passes the answer on. */
  const finish = async (request: R, trace: Trace, answering: A | PromiseLike<A> | undefined, outcome: DeliveryOutcome): Promise<A | undefined> => {
    const answered = await answering;
    trace.status = platform.statusOf(request, answered);
    trace.outcome = outcome;
    const headers = platform.headers(request);
    const skewMs = receiver.skewMsOf(headers);
    if (skewMs !== undefined) trace.skewMs = skewMs;
    const id = readHeader(headers, 'webhook-id', ', ');
    if (id !== undefined) trace.id = id;
    return answered;
  };

  async function handle(request: R, trace: Trace | undefined): Promise<A | undefined> {
    // 1. The body, within the limits. A body at hand (Lambda) is taken without a turn of the event loop.
    let payload: WebhookPayload;
    try {
      const read = platform.body(request, receiver.limits);
      payload = isThenable(read) ? await read : read;
    } catch (error) {
      // Nobody is left to answer, nor anything to tell.
      if (error instanceof SenderGoneError && platform.senderGone !== undefined) return platform.senderGone(request);
      if (!(error instanceof WebhookError)) throw error;
      return refuse(request, trace, bodyRefusal(error));
    }

    // 2. Verify it, with its tenant's secret where the receiver serves many.
    const verifying = receiver.verify(payload, platform.headers(request), tenantOf === undefined ? noTenant : () => tenantOf(platform.userRequest(request) as never));
    const verified = isThenable(verifying) ? await verifying : verifying;
    if (!('event' in verified)) return refuse(request, trace, verified);
    let delivery: WebhookDelivery = verified;
    if (trace !== undefined) trace.delivery = delivery;

    // 3. Claim its event: a duplicate, one in progress, a stale event skipped or a failing store is answered here.
    // A stale event run under `staleEvents: 'run'` runs as a delivery marked stale.
    const claiming = receiver.claim(delivery);
    const claimed = isThenable(claiming) ? await claiming : claiming;
    let claim: Settle | undefined;
    if (typeof claimed !== 'object') claim = claimed;
    else if ('stale' in claimed) {
      claim = claimed.settle;
      delivery = staleDelivery(delivery);
      if (trace !== undefined) trace.delivery = delivery;
    } else return refuse(request, trace, claimed, delivery);

    // 4. Run the user's code, in a span of the handler channel while someone listens there and code of theirs runs.
    const startedMs = outcomeHeader ? now() : 0;
    const running =
      trace !== undefined && handlerRuns?.hasSubscribers && runs.runsFor(delivery.event.type) ? traced(request, delivery, trace) : runs.run(request, delivery);
    const outcome = isThenable(running) ? await running : running;
    const status = statusOf(outcome);
    // Before the settle: the header tells how long the user's code ran, not the store.
    const handlerMs = outcomeHeader ? now() - startedMs : 0;

    // 5. Settle the claim by the answer: only a 2xx tells the sender to stop. In the background where the
    // platform may cut it off; an answer not yet sent waits for it, within bounds.
    if (claim !== undefined) {
      const settling = claim(status >= 200 && status < 300);
      if (settling !== undefined) {
        keepAlive(request, settling, delivery);
        if (outcome.kind !== 'routed') await withinDeadline(settleWaits, settling, () => undefined);
      }
    }

    // 6. Answer, unless the route did.
    const decided = outcome.kind === 'decided' && outcomeHeader ? described(outcome.response, outcome.outcome, delivery, handlerMs) : undefined;
    const answering = outcome.kind === 'routed' ? undefined : outcome.kind === 'answered' ? outcome.answer : answer(request, decided ?? outcome.response, delivery);
    if (trace === undefined) return answering;
    return finish(request, trace, answering, outcomeOf(outcome, status));
  }

  /** `decided` with the outcome header. */
  function described(decided: DecidedResponse, outcome: DeliveryOutcome, delivery?: WebhookDelivery, handlerMs?: number): DecidedResponse {
    const report = { outcome, handlerMs: handlerMs === undefined ? undefined : Math.round(handlerMs), keyId: delivery?.keyId, tenant: delivery?.tenant };
    return { ...decided, headers: { ...decided.headers, [OUTCOME_HEADER]: formatOutcome(report) } };
  }

  /** Runs the user's code on the handler channel, which learns the status it led to. */
  function traced(request: R, delivery: WebhookDelivery, trace: Trace): Promise<Outcome<A>> {
    const run: { -readonly [K in keyof HandlerTrace]: HandlerTrace[K] } = { entry, delivery, trace };
    return handlerRuns!.tracePromise(async () => {
      // A subscriber's start may have given the code a context of its own to run in.
      const outcome = await runWithinTrace(run, () => runs.run(request, delivery));
      run.status = statusOf(outcome);
      run.failed = run.status >= 500;
      if (outcome.kind === 'decided' && outcome.outcome === 'handler_failed') run.thrown = thrownBehind(outcome.response.error);
      return outcome;
    }, run);
  }

  /** One line per stale event skipped: nothing failed, but an older state was not applied, which an operator may look for. */
  function logStale({ id, event, keyId, tenant }: WebhookDelivery): void {
    const fields = { code: 'stale_event', id, type: event.type, keyId, ...(tenant !== undefined && { tenant }) } as const;
    writeLog(logger, 'warn', fields, `event ${quoted(id)} of type ${quoted(event.type)} is older than one of its object processed before: skipped, and answered 200`);
  }

  /** Hands the settling to the platform; a platform that throws for it changes no answer, and the settle runs on regardless. */
  function keepAlive(request: R, settling: Promise<void>, { id, event }: WebhookDelivery): void {
    try {
      platform.keepAlive?.(request, settling);
    } catch (error) {
      const fields = { code: 'wait_until_failed', id, type: event.type, ...errorFields(error, true) } as const;
      writeLog(logger, 'error', fields, `the platform's waitUntil threw (${reasonOf(error)}); the claim of event ${quoted(id)} is settled without it`);
    }
  }

  return function receive(request) {
    if (deliveryTraces?.hasSubscribers) {
      const trace: Trace = { entry };
      return deliveryTraces.tracePromise(() => handle(request, trace), trace);
    }
    // The handler channel's context points to its delivery's trace: one is made while someone listens there alone.
    return handle(request, handlerRuns?.hasSubscribers ? { entry } : undefined);
  };
}

/** The fields naming a request's id, where it has one. */
function idFields(id: string | undefined): { readonly id?: string } {
  return id === undefined ? {} : { id };
}

/** The status the user's code led to. */
function statusOf(outcome: Outcome<unknown>): number {
  return outcome.kind === 'decided' ? outcome.response.status : outcome.status;
}

/** The delivery outcome of an answer decided before any user code ran: a refusal's code, or the claim's duplicate or stale event skipped. */
function refusalOutcome(decided: DecidedResponse): DeliveryOutcome {
  const { error } = decided;
  if (error === undefined) return isStaleSkipped(decided) ? 'stale' : 'duplicate';
  return error.code === 'delivery_in_progress' ? 'in_progress' : error.code;
}

/** The delivery outcome of what the user's code led to: decided here, or the answer of the route or handler, by its status. */
function outcomeOf(outcome: Outcome<unknown>, status: number): DeliveryOutcome {
  if (outcome.kind === 'decided') return outcome.outcome;
  return status >= 200 && status < 300 ? 'processed' : 'failed';
}

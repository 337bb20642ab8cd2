/**
 * `dispatch`: the handlers of `on` for a delivery verified by
 * `verifyDelivery()`, and the answer to send; under a claim on its event in
 * a dedup store, and in order, where the options ask.
 */
import type { WebhookDelivery } from '../core/delivery.js';
import { checkOrdering, staleDelivery, type OrderingOptions } from '../core/event-order.js';
import { checkDedupObject } from '../process/claim.js';
import { createDispatcher, type Dispatcher } from '../process/dispatcher.js';
import type { EventSchemas, HandlerOptions } from '../process/handler-types.js';
import { isDedupStore, type DedupStore } from '../stores/dedup-store.js';
import { dedupClaims, type ClaimOutcome } from './claim-answers.js';
import type { DedupOptions } from './receiver.js';
import { handlersAnswer, isStaleSkipped, type DecidedResponse, type DispatchResult } from './responses.js';
import { WebhookOptionsError } from '../base/options-error.js';

/** The claims of `dispatch`: an entry's `dedup` options, with the store required. */
export interface DispatchDedupOptions extends DedupOptions {
  /** Where each event is claimed and recorded: a store of the process (`MemoryDedupStore`) or a shared one. Required. */
  readonly store: DedupStore;
}

/** Options of `dispatch`: the handlers, and the claim each event runs under, if any. */
export interface DispatchOptions<S extends EventSchemas = {}> extends HandlerOptions<S> {
  /**
   * Runs each event under a claim in `dedup.store`, as an entry does: a copy
   * of an event running is answered 409 `delivery_in_progress`, one
   * processed already 200 (`skipped: 'duplicate'`), and a store that fails
   * 503 `dedup_unavailable` (or runs the handler without a claim, under
   * `whenUnavailable: 'process'`). The claim's other options as an entry's.
   * @default undefined (no claim: a retry runs its handler again)
   */
  readonly dedup?: DispatchDedupOptions;
  /**
   * Puts the events about one object in order, as an entry's `ordering`
   * does: a stale event skipped is answered 200 (`skipped: 'stale'`). Needs
   * `dedup`, with a store that orders.
   * @default undefined (each event runs as it comes)
   */
  readonly ordering?: OrderingOptions;
}

/**
 * Runs the handler in `options.on` for the delivery's event type and
 * resolves to the answer to send (status, headers and body): 204, 200 for
 * an event skipped (a duplicate or a stale one, with `dedup`), or a refusal
 * (500 `handler_failed`, 422 `invalid_event_data` with `paths`, 422
 * `unknown_event_type`, and with `dedup` 409 `delivery_in_progress`, 503
 * `dedup_unavailable`, 422 `invalid_event_order`). Never rejects. For
 * deliveries from `verifyDelivery()`: without `dedup` there is no claim, so
 * a retry runs its handler again. Checks the options on each call and
 * throws `WebhookOptionsError` for a mistake.
 * @example
 * ```ts
 * const delivery = webhook.verifyDelivery(body, request.headers);
 * const { status, headers, body: answer } = await dispatch(delivery, {
 *   on: { 'message.received': async (event) => inbox.add(event.id, event.type) },
 *   dedup: { store },
 *   ordering: { version: (event) => event.timestamp },
 * });
 * ```
 */
export function dispatch<S extends EventSchemas = {}>(delivery: WebhookDelivery, options: DispatchOptions<S>): Promise<DispatchResult> {
  if (typeof options !== 'object' || options === null) throw new WebhookOptionsError('svc-webhooks: dispatch needs options with on, an object of handlers by event type');
  const dispatcher = createDispatcher(options);
  const { dedup } = options;
  const ordering = checkOrdering(options.ordering);
  if (dedup === undefined) {
    if (ordering !== undefined) throw new WebhookOptionsError("svc-webhooks: dispatch's ordering needs dedup, with a store that records each object's version");
    return Promise.resolve(dispatcher.dispatch(delivery)).then(handlersAnswer);
  }
  checkDedupObject(dedup, 'an object with the store ({ store, leaseMs, … })');
  if (!isDedupStore(dedup.store)) throw new WebhookOptionsError('svc-webhooks: dispatch needs dedup.store, a DedupStore (begin, complete, release and renew)');
  const claim = dedupClaims(dedup.store, dedup, ordering);
  return Promise.resolve(claim(delivery)).then((claimed) => runClaimed(dispatcher, delivery, claimed));
}

/** Runs the handler under what claiming led to, and settles the claim by the answer; or answers what the claim decided. */
async function runClaimed(dispatcher: Dispatcher, delivery: WebhookDelivery, claimed: ClaimOutcome): Promise<DispatchResult> {
  if (typeof claimed === 'object' && !('stale' in claimed)) return skippedOrRefused(claimed);
  const stale = typeof claimed === 'object';
  const answer = handlersAnswer(await dispatcher.dispatch(stale ? staleDelivery(delivery) : delivery));
  const settle = stale ? claimed.settle : claimed;
  await settle?.(answer.status >= 200 && answer.status < 300);
  return answer;
}

/** What the claim answered, as `dispatch` answers it: an event skipped has no body, and says why. */
function skippedOrRefused(decided: DecidedResponse): DispatchResult {
  if (decided.error !== undefined) return decided as DispatchResult;
  return { status: decided.status, headers: decided.headers, body: undefined, skipped: isStaleSkipped(decided) ? 'stale' : 'duplicate' };
}

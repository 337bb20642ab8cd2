/**
 * The processing side: a consumer Worker's `queue` handler that runs the
 * typed handlers of each queued delivery once, under the dedup store's
 * lease on the event. The store may come from the Worker's `env`, where a
 * D1 binding is.
 */
import { checkLogger, type WebhookLogger } from '../../base/logger.js';
import { checkOptionsObject } from '../../base/option-checks.js';
import { WebhookOptionsError } from '../../base/options-error.js';
import { checkOrdering, type CheckedOrdering, type OrderingOptions } from '../../core/event-order.js';
import { checkClaimOptions, checkDedupObject, claimSettings, type ClaimDurations, type ClaimSettings } from '../../process/claim.js';
import { createDispatcher } from '../../process/dispatcher.js';
import { handlerErrorLog } from '../../process/handler-options.js';
import type { EventSchemas, HandlerOptions } from '../../process/handler-types.js';
import { storeErrorLog, storeErrorReporter, type StoreErrorCallback } from '../../process/store-failures.js';
import { isDedupStore, type DedupStore } from '../../stores/dedup-store.js';
import { runMessage } from './message-processor.js';
import type { QueueBatch } from './queue-types.js';

/** How a consumer Worker processes each event once: the dedup store and its claims. */
export interface CloudflareWorkerDedupOptions<Env = unknown> {
  /**
   * Where the worker records the events it processed, keyed on each
   * delivery's `dedupKey`: a store, or a function that makes one from the
   * Worker's `env` for each batch, as a D1 binding exists only there
   * (`(env) => new D1DedupStore(env.DB, { table: 'svc_webhooks_queue_dedup' })`).
   * Give it a table of its own, apart from the receiver's store: the
   * receiver marks an event done once it is queued, the worker once it is
   * processed. Required.
   */
  readonly store: DedupStore | ((env: Env) => DedupStore);
  /**
   * How long the worker holds its claim on an event while the handler
   * runs; the lease is renewed each third of it. It is how long another
   * isolate waits for an event whose isolate died mid-handler, before
   * running it again. A message whose event another isolate holds is
   * retried after a quarter of it (whole seconds, at least one).
   * @default 60000
   */
  readonly leaseMs?: number;
  /**
   * The longest the worker holds its claim, renewals included: a handler
   * that runs longer may be run again by another copy of its message. At
   * least `leaseMs`.
   * @default 900000 (fifteen minutes, the longest a consumer Worker runs), or `leaseMs` if that is longer
   */
  readonly maxClaimMs?: number;
  /**
   * How long the store remembers a processed event. Longer than the sender's
   * retry window of about three days.
   * @default 345600000 (four days)
   */
  readonly retentionMs?: number;
  /**
   * Told about every store failure, as a receiver's `dedup.onError`: a
   * `begin` that failed (the message is retried later), and a `complete`,
   * `release` or `renew` that still failed when the lease was about to end.
   * Awaited; what it throws is logged and changes nothing.
   * @default logs one line to `logger` naming the store's error; at most one line per 5 s
   */
  readonly onError?: StoreErrorCallback;
}

/**
 * Options of `work()`: the handlers, as a receiver's `on` takes them (each
 * gets the event and its delivery), and the dedup store with its claims.
 */
export interface CloudflareWorkerOptions<S extends EventSchemas = {}, Env = unknown> extends HandlerOptions<S> {
  /** Where and how the worker records the events it processed. Required. */
  readonly dedup: CloudflareWorkerDedupOptions<Env>;
  /**
   * Puts the events about one object in order, as an entry's `ordering`
   * does, where the worker applies them: messages of one object run one at
   * a time (another is retried after a quarter of `dedup.leaseMs`, as a
   * copy whose event another isolate holds), and a message older than one
   * of its object processed before is stale: acked without running, or run
   * with `delivery.stale` under `staleEvents: 'run'`. `dedup.store` must
   * order events, as a `D1DedupStore` does.
   * @default undefined (each message runs as it comes)
   */
  readonly ordering?: OrderingOptions;
  /**
   * Where the worker's lines about what went wrong go (a handler that
   * failed, a store that failed, a message that holds no delivery), with
   * fields to filter on, as an entry's `logger`.
   * @default one sentence per line on `console.error`
   */
  readonly logger?: WebhookLogger;
}

/** A consumer Worker's `queue` handler: `export default { queue: work(...) }`. */
export type CloudflareQueueHandler<Env = unknown> = (batch: QueueBatch, env: Env, ctx?: unknown) => Promise<void>;

/**
 * A consumer Worker's `queue(batch, env, ctx)` handler that runs, for each
 * message `enqueue` sent, the handler of `on` for its event's type, as a
 * receiver does, under a lease on the event in `dedup.store`: exactly one
 * isolate runs an event however many copies of its message the queue
 * delivers, at once or later. The messages of a batch run at once; each is
 * acked when its handler succeeded or had succeeded before, retried (by the
 * queue's `retry_delay`) when it failed, and retried after a quarter of
 * `dedup.leaseMs` when another isolate holds its event or the store failed.
 * Every retry counts towards the queue's `max_retries`: give it a
 * dead-letter queue, where a message out of retries keeps its event. With
 * `ordering`, a message waits likewise while another event of its object
 * runs, and a stale one is acked without running. Throws
 * `WebhookOptionsError` for bad options, and for a `dedup.store` that
 * cannot order given with `ordering`; a `dedup.store` function that makes
 * no store, or one that cannot order, fails the batch, and the queue
 * delivers it again.
 *
 * @example
 * ```ts
 * import { work } from 'svc-webhooks/cloudflare';
 * import { D1DedupStore, type D1Database } from 'svc-webhooks/d1';
 *
 * interface Env { DB: D1Database }
 *
 * export default {
 *   queue: work<{}, Env>({
 *     on: { 'message.received': async (event) => console.log(event.data.object.id) },
 *     dedup: { store: (env) => new D1DedupStore(env.DB, { table: 'svc_webhooks_queue_dedup' }) },
 *   }),
 * };
 * ```
 */
export function work<S extends EventSchemas = {}, Env = unknown>(options: CloudflareWorkerOptions<S, Env>): CloudflareQueueHandler<Env> {
  if (options === undefined) throw new WebhookOptionsError('svc-webhooks: work needs options with on and dedup');
  checkOptionsObject('work', options);
  if (typeof options.on !== 'object' || options.on === null) throw new WebhookOptionsError('svc-webhooks: work needs on, an object of handlers by event type');
  const { dedup } = options;
  checkDedupObject(dedup, 'an object with the store ({ store, leaseMs, … })');
  const given = dedup.store;
  if (typeof given !== 'function' && !isDedupStore(given)) {
    throw new WebhookOptionsError('svc-webhooks: work needs dedup.store, a DedupStore (begin, complete, release and renew) or a function of env that makes one');
  }
  const durations = checkClaimOptions(dedup, 900_000);
  const ordering = checkOrdering(options.ordering);
  const logger = checkLogger(options.logger);
  const dispatcher = createDispatcher(options, handlerErrorLog("the queue retries its message as its max_retries allow", logger));
  // Keyed on the options, not the store, so that stores made per batch share one limit on lines.
  const report = storeErrorReporter(dedup.onError ?? storeErrorLog(dedup, 'the message is retried later', logger), logger);
  const busyDelaySeconds = Math.max(1, Math.ceil(durations.leaseMs / 4 / 1000));
  const settingsOf = claimsOn(durations, report, ordering);
  const fixed = typeof given === 'function' ? undefined : settingsOf(given);
  return async (batch, env) => {
    const claims = fixed ?? settingsOf((given as (env: Env) => DedupStore)(env));
    const run = { dispatcher, claims, logger, queue: batch.queue, busyDelaySeconds };
    await Promise.all(batch.messages.map((message) => runMessage(run, message)));
  };
}

/** The claim settings of each store, made once per store: a store made per batch gets its own. */
function claimsOn(durations: ClaimDurations, report: ClaimSettings['report'], ordering: CheckedOrdering | undefined): (store: unknown) => ClaimSettings {
  const settings = new WeakMap<object, ClaimSettings>();
  return (store) => {
    if (!isDedupStore(store)) throw new WebhookOptionsError('svc-webhooks: dedup.store(env) must answer a DedupStore (begin, complete, release and renew)');
    let held = settings.get(store);
    if (held === undefined) {
      held = claimSettings(store, durations, report, ordering);
      settings.set(store, held);
    }
    return held;
  };
}

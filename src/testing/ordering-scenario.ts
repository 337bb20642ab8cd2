/**
 * `simulateDelivery`'s ordering scenario: the events of one object's
 * lifecycle delivered as the service's retries deliver them (shuffled, some
 * twice, a few at once, each attempt that got no 2xx retried later on its
 * own), then the object's state, read by the caller's function, compared
 * with its state after the same lifecycle in order.
 */
import { isDeepStrictEqual } from 'node:util';
import { checkCallback, checkOptionsObject } from '../base/option-checks.js';
import { WebhookOptionsError } from '../base/options-error.js';
import type { WebhookEvent } from '../core/event.js';
import type { WebhookSecret } from '../core/secret.js';
import { answeredApplied, answeredStale, deliver, delivered, post, type Attempt, type DeliveryTarget, type DeliveryTiming } from './delivery.js';
import { newId } from './envelope.js';
import { signedHeaders } from './signed-request.js';

/** The ordering scenario of `simulateDelivery()`: how to read the object's state, and which lifecycle to deliver. */
export interface SimulateOrderingOptions {
  /**
   * Reads the object's state as the receiver keeps it (its row, its status),
   * after the deliveries. Two states are equal as `node:util`'s
   * `isDeepStrictEqual` compares them. Required.
   */
  readonly state: () => unknown;
  /**
   * The state the object must end in: its state after its whole lifecycle
   * in order. Without it, the lifecycle is first delivered in order, one
   * event at a time, between two calls of `reset`.
   * @default the state read after delivering the lifecycle in order (needs `reset`)
   */
  readonly expected?: unknown;
  /**
   * Makes the receiver forget the lifecycle: the object's state and what its
   * dedup store recorded (build the receiver anew behind the target). Called
   * before the in-order delivery and again before the shuffled one. Required
   * unless `expected` is given.
   * @default undefined
   */
  readonly reset?: () => unknown;
  /**
   * The older events of the object, oldest first, each with an id of its
   * own: the lifecycle is these, then `event`, the newest.
   * @default `versions - 1` copies of `event`, each a fresh `evt_` id and a `timestamp` a second before the next
   */
  readonly older?: readonly WebhookEvent[];
  /**
   * How many versions the lifecycle made from `event` holds, `event` the
   * newest; not with `older`.
   * @default 5
   */
  readonly versions?: number;
  /**
   * The seed of the shuffle: the same seed delivers the same order, copies,
   * groups and places of retries.
   * @default 1
   */
  readonly seed?: number;
}

/** An older event the receiver applied after a newer one of its object. */
export interface OlderAfterNewer {
  /** The older event's id. */
  readonly older: string;
  /** The id of the newer event applied before it. */
  readonly newer: string;
}

/** What the ordering scenario found: `SimulatedDelivery.ordering`. */
export interface SimulatedOrdering {
  /** Whether the state after the shuffled deliveries equals `expected`. */
  readonly equal: boolean;
  /** The state after the lifecycle in order: the option, or read after delivering it so. */
  readonly expected: unknown;
  /** The state after the shuffled deliveries. */
  readonly actual: unknown;
  /** The ids of the lifecycle's events, oldest first: an attempt's `version` 1 is the first. */
  readonly events: readonly string[];
  /** The seed the deliveries were shuffled with. */
  readonly seed: number;
  /**
   * The first older event the receiver's answers say it applied after a
   * newer one: a 2xx that is neither a duplicate nor stale (nor, by the
   * outcome header, anything but processed). Absent when none did. Of events
   * sent at once, the one answered last counts as applied last.
   */
  readonly olderAfterNewer?: OlderAfterNewer;
  /** Whether each event of the in-order delivery ended in a 2xx; absent when `expected` was given. */
  readonly inOrderDelivered?: boolean;
}

/** One attempt of the scenario, as `SimulatedAttempt` reports it. */
interface OrderedAttempt {
  readonly copy: number;
  readonly event: string;
  readonly version: number;
  readonly status?: number;
  readonly code?: string;
  readonly duplicate?: true;
  readonly stale?: true;
  readonly ms: number;
}

/** The checked scenario. */
export interface CheckedOrdering {
  readonly state: () => unknown;
  readonly expected?: { readonly value: unknown };
  readonly reset?: () => unknown;
  readonly lifecycle: readonly WebhookEvent[];
  readonly seed: number;
}

/** The scenario's options, checked and copied, its lifecycle made; throws `WebhookOptionsError` for a mistake. */
export function checkSimulateOrdering(ordering: unknown, event: WebhookEvent, nowMs: number): CheckedOrdering {
  checkOptionsObject('ordering', ordering);
  const { state, reset, older, versions, seed = 1 } = ordering as SimulateOrderingOptions;
  if (typeof state !== 'function') throw new WebhookOptionsError('svc-webhooks: ordering.state is required: a function answering the object\'s state as the receiver keeps it');
  checkCallback('ordering.reset', reset);
  const hasExpected = Object.hasOwn(ordering as object, 'expected');
  if (!hasExpected && reset === undefined) {
    throw new WebhookOptionsError('svc-webhooks: ordering needs expected (the state after the lifecycle in order) or reset (to deliver the lifecycle in order first)');
  }
  if (!Number.isSafeInteger(seed)) throw new WebhookOptionsError('svc-webhooks: ordering.seed must be a whole number');
  if (older !== undefined && versions !== undefined) throw new WebhookOptionsError('svc-webhooks: ordering takes older or versions, not both');
  const lifecycle = older === undefined ? madeLifecycle(event, versions ?? 5, nowMs) : [...checkedOlder(older), event];
  if (new Set(lifecycle.map(({ id }) => id)).size !== lifecycle.length) throw new WebhookOptionsError('svc-webhooks: each event of ordering.older needs an id of its own, other than the event\'s');
  return {
    state,
    ...(hasExpected && { expected: { value: (ordering as SimulateOrderingOptions).expected } }),
    ...(reset !== undefined && { reset }),
    lifecycle,
    seed,
  };
}

function checkedOlder(older: unknown): WebhookEvent[] {
  if (!Array.isArray(older) || older.length === 0 || !older.every((one) => typeof (one as { id?: unknown } | null)?.id === 'string')) {
    throw new WebhookOptionsError('svc-webhooks: ordering.older must be a list of at least one event, oldest first');
  }
  return [...(older as WebhookEvent[])];
}

/** `versions` events: `event` last, each before it a fresh id and a timestamp a second earlier than the next. */
function madeLifecycle(event: WebhookEvent, versions: number, nowMs: number): WebhookEvent[] {
  if (!Number.isSafeInteger(versions) || versions < 2) throw new WebhookOptionsError('svc-webhooks: ordering.versions must be a whole number of at least 2');
  const newestMs = Date.parse(String(event.timestamp));
  if (Number.isNaN(newestMs)) throw new WebhookOptionsError("svc-webhooks: ordering makes older versions of the event from its timestamp, which is no RFC 3339 time: give ordering.older");
  const older = Array.from({ length: versions - 1 }, (_, i) => ({
    ...event,
    id: newId('evt', nowMs),
    timestamp: new Date(newestMs - (versions - 1 - i) * 1000).toISOString().replace('.000Z', 'Z'),
  }));
  return [...older, event];
}

/** A generator of numbers in [0, 1) from `seed` (mulberry32): the same seed, the same numbers. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One delivery of the plan: which version, which delivery of the plan it is, its attempt. */
interface Send {
  readonly version: number;
  readonly copy: number;
  readonly attempt: number;
}

/**
 * The deliveries in groups sent at once: each version once in a shuffled
 * order, the newest never last (so an older event comes after it), about
 * half of them again later, in groups of one to three, the newest's first
 * delivery ending its group (so what follows it comes after its answer).
 */
export function orderingPlan(count: number, random: () => number): number[][] {
  const pick = (below: number): number => Math.floor(random() * below);
  const order = Array.from({ length: count }, (_, i) => i);
  for (let i = count - 1; i > 0; i--) {
    const j = pick(i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  if (order[count - 1] === count - 1) {
    const j = pick(count - 1);
    [order[count - 1], order[j]] = [order[j]!, order[count - 1]!];
  }
  const sends = [...order];
  for (const version of order) {
    if (random() >= 0.5) continue;
    const first = sends.indexOf(version);
    sends.splice(first + 1 + pick(sends.length - first), 0, version);
  }
  if (sends.length === count) sends.push(order[0]!);
  const groups: number[][] = [];
  let size = 1 + pick(3);
  let group: number[] = [];
  const newestFirst = sends.indexOf(count - 1);
  for (const [i, version] of sends.entries()) {
    group.push(version);
    if (group.length === size || i === newestFirst) {
      groups.push(group);
      group = [];
      size = 1 + pick(3);
    }
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/** How the scenario delivers: as `simulateDelivery` does. */
export interface OrderingDelivery {
  readonly url: DeliveryTarget;
  readonly secret: WebhookSecret;
  readonly maxAttempts: number;
  readonly timing: DeliveryTiming;
  readonly now: () => number;
}

const MAX_BACKOFF_MS = 30_000;

/** Runs the scenario; answers `SimulatedDelivery`'s fields for it. */
export async function simulateOrdering(
  how: OrderingDelivery,
  ordering: CheckedOrdering,
): Promise<{ delivered: boolean; attempts: OrderedAttempt[]; ordering: SimulatedOrdering }> {
  const { lifecycle, seed } = ordering;
  const bodies = lifecycle.map((event) => JSON.stringify(event));
  // Signed again for each attempt, at the receiver's time when it is sent, always with the event's id.
  const headersOf = (version: number) => () => signedHeaders(bodies[version]!, { secret: how.secret, id: lifecycle[version]!.id, timestamp: Math.floor(how.now() / 1000) });

  let inOrder: { expected: unknown; delivered: boolean } | undefined;
  if (ordering.expected === undefined) {
    await ordering.reset!();
    let all = true;
    for (const [version, body] of bodies.entries()) {
      const attempts = await deliver({ url: how.url, body, headers: headersOf(version), retries: how.maxAttempts - 1, backoffMs: 1000, timing: how.timing });
      all &&= delivered(attempts.at(-1)!);
    }
    inOrder = { expected: await ordering.state(), delivered: all };
  }
  await ordering.reset?.();

  const random = seeded(seed);
  let copies = 0;
  const groups: Send[][] = orderingPlan(lifecycle.length, random).map((group) => group.map((version) => ({ version, copy: ++copies, attempt: 1 })));
  const attempts: OrderedAttempt[] = [];
  const lastAttempt = new Map<number, Attempt>();
  let newest: { version: number; id: string } | undefined;
  let olderAfterNewer: OlderAfterNewer | undefined;
  for (let g = 0; g < groups.length; g++) {
    const group = groups[g]!;
    const retried = Math.max(...group.map(({ attempt }) => attempt));
    if (retried > 1) await how.timing.pause(Math.min(1000 * 2 ** (retried - 2), MAX_BACKOFF_MS));
    const answers = await Promise.all(
      group.map(async (send) => {
        const attempt = await post(how.url, bodies[send.version]!, headersOf(send.version)(), how.timing.answerWindowMs);
        const id = lifecycle[send.version]!.id;
        attempts.push({
          copy: send.copy,
          event: id,
          version: send.version + 1,
          ...(attempt.status !== undefined && { status: attempt.status }),
          ...(attempt.errorCode !== undefined && { code: attempt.errorCode }),
          ...(attempt.duplicate && { duplicate: true as const }),
          ...(answeredStale(attempt) && { stale: true as const }),
          ms: attempt.ms,
        });
        // In the order the answers come: the one answered last counts as applied last.
        if (answeredApplied(attempt)) {
          if (newest !== undefined && send.version < newest.version) olderAfterNewer ??= { older: id, newer: newest.id };
          if (newest === undefined || send.version > newest.version) newest = { version: send.version, id };
        }
        return attempt;
      }),
    );
    // Each attempt without a 2xx is retried on its own, in a later group the seed picks.
    for (const [i, send] of group.entries()) {
      const attempt = answers[i]!;
      lastAttempt.set(send.copy, attempt);
      if (delivered(attempt) || send.attempt >= how.maxAttempts) continue;
      const at = g + 1 + Math.floor(random() * (groups.length - g));
      const retry = { ...send, attempt: send.attempt + 1 };
      if (at === groups.length) groups.push([retry]);
      else groups[at]!.push(retry);
    }
  }
  const actual = await ordering.state();
  const expected = inOrder === undefined ? ordering.expected!.value : inOrder.expected;
  return {
    delivered: [...lastAttempt.values()].every(delivered),
    attempts,
    ordering: {
      equal: isDeepStrictEqual(actual, expected),
      expected,
      actual,
      events: lifecycle.map(({ id }) => id),
      seed,
      ...(olderAfterNewer !== undefined && { olderAfterNewer }),
      ...(inOrder !== undefined && { inOrderDelivered: inOrder.delivered }),
    },
  };
}

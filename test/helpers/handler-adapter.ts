/** Helpers for the adapters that call the handler themselves (Fetch, Lambda). */
import { expect, vi } from 'vitest';
import { keyOf, SECRET, now } from './signed-request.js';
import { TestDedupStore } from './test-dedup-store.js';

const options = { secret: SECRET, now };
const handler = (): undefined => undefined;

const queue = { hand: async (): Promise<void> => undefined };
const whatRuns = 'say what runs for each delivery with exactly one of on, handoff and a handler function; given:';

/**
 * Creation mistakes, each thrown at `verifyWebhook(options, handler)` (`handler` undefined: `verifyWebhook(options)`)
 * as a `WebhookOptionsError` with its message, less the `svc-webhooks: ` every message begins with.
 */
export const creationMistakes: ReadonlyArray<readonly [name: string, options: unknown, handler: unknown, message: string]> = [
  ['neither on nor a handler', options, undefined, `${whatRuns} none`],
  ['both on and a handler', { ...options, on: {} }, handler, `${whatRuns} on and a handler`],
  ['both handoff and a handler', { ...options, handoff: queue }, handler, `${whatRuns} handoff and a handler`],
  ['both on and handoff', { ...options, on: {}, handoff: queue }, undefined, `${whatRuns} on and handoff`],
  ['a handoff that is no queue', { ...options, handoff: 'bullmq' }, undefined, 'handoff must be what enqueue() returns: an object with a hand(delivery) method'],
  ['a handler that is no function', options, 'handle', 'the handler must be a function'],
  ['schemas with a handler', { ...options, schemas: {} }, handler, 'schemas takes effect only with on'],
  ['unknownEvents with a handler', { ...options, unknownEvents: 'reject' }, handler, 'unknownEvents takes effect only with on'],
  ['onUnknownEvent with a handler', { ...options, onUnknownEvent: () => undefined }, handler, 'onUnknownEvent takes effect only with on'],
  ['schemas with handoff', { ...options, handoff: queue, schemas: {} }, undefined, 'schemas takes effect only with on'],
  [
    'both unknownEvents and onUnknownEvent',
    { ...options, on: {}, unknownEvents: 'reject', onUnknownEvent: () => undefined },
    undefined,
    'give onUnknownEvent or unknownEvents, not both: onUnknownEvent handles every unknown type',
  ],
  ['the leaseMs of rc.1 at the top level, now dedup.leaseMs', { ...options, on: {}, leaseMs: 30_000 }, undefined, 'the option leaseMs is now dedup.leaseMs'],
  [
    'an onErrorTimeoutMs that is no whole number of milliseconds',
    { ...options, onErrorTimeoutMs: 1.5 },
    handler,
    'onErrorTimeoutMs must be a whole number of milliseconds from 1 to 2147483647',
  ],
  ['an onError that is no function', { ...options, onError: 'log' }, handler, 'onError must be a function'],
  ['an onHandlerError that is no function', { ...options, onHandlerError: 'log' }, handler, 'onHandlerError must be a function'],
  ['no secret', {}, handler, 'give secret (one endpoint) or tenants (many tenants, each with its own secret): exactly one of them'],
  ['no options', undefined, handler, 'options with a secret (or tenants) are required'],
  ['null options', null, handler, 'options with a secret (or tenants) are required'],
  ['both secret and tenants', { ...options, tenants: { of: () => 'acme', secret: () => SECRET } }, handler, 'give secret (one endpoint) or tenants (many tenants, each with its own secret): exactly one of them'],
  [
    'a secret that is a function',
    { now, secret: () => SECRET },
    handler,
    'a secret looked up per tenant is now tenants.secret, beside tenants.of, which reads the tenant from the request',
  ],
  ['tenants without of', { now, tenants: { secret: () => SECRET } }, handler, 'tenants.of must be a function from the request to the tenant'],
  ['tenants that are no object', { now, tenants: 'acme' }, handler, 'tenants options must be an object'],
  ['a tenants.onLookupError that is no function', { now, tenants: { of: () => 'acme', secret: () => SECRET, onLookupError: 'log' } }, handler, 'tenants.onLookupError must be a function'],
  ['dedup that is neither options nor false', { ...options, dedup: true }, handler, 'dedup must be an object of options ({ store, leaseMs, … }) or false'],
  ['a bodyTimeoutMs of 0', { ...options, bodyTimeoutMs: 0 }, handler, 'bodyTimeoutMs must be a whole number of milliseconds from 1 to 2147483647'],
  [
    'ordering with dedup false',
    { ...options, dedup: false, ordering: { version: () => 1 } },
    handler,
    "ordering needs dedup: the store records each object's version; give dedup (or leave it out for a memory store), not false",
  ],
  [
    'ordering with handoff',
    { ...options, ordering: { version: () => 1 }, handoff: queue },
    undefined,
    "ordering does not apply to a handoff, whose queue runs jobs in an order of its own: give ordering to the queue's worker (work({ ordering }))",
  ],
  ['an outcomeHeader that is neither off nor on', { ...options, outcomeHeader: true }, handler, "outcomeHeader must be 'off' or 'on'"],
  ['a logger without warn and error', { ...options, logger: {} }, handler, 'logger must have warn(fields, message) and error(fields, message) functions, as pino has'],
];

export interface HeldStore {
  readonly dedup: TestDedupStore;
  /** Lets `complete` go on. */
  open(): void;
}

/** A store whose `complete` waits until `open()` is called. */
export function heldStore(): HeldStore {
  const dedup = new TestDedupStore();
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const complete = dedup.complete.bind(dedup);
  dedup.complete = async (id, token) => {
    await opened;
    return complete(id, token);
  };
  return { dedup, open };
}

/**
 * Checks that `answer`, a delivery of evt_1 on `held`, waits for its claim to
 * complete (for a store that answers within SETTLE_WAIT_MS): still pending
 * while the store holds `complete`, then resolved with the claim done.
 * Answers what it resolved to.
 */
export async function expectAnswerAfterSettling<T>(held: HeldStore, answer: Promise<T>): Promise<T> {
  await vi.waitFor(() => expect(held.dedup.stateOf(keyOf('evt_1'))).toBe('leased'));
  expect(await isSettled(answer)).toBe(false);
  held.open();
  const result = await answer;
  expect(held.dedup.stateOf(keyOf('evt_1'))).toBe('done');
  return result;
}

/** Whether `promise` has settled once pending I/O callbacks ran. */
export async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

/** Helpers for the adapters that call the handler themselves (Fetch, Lambda). */
import { expect, vi } from 'vitest';
import { keyOf, SECRET, now } from './signed-request.js';
import { TestDedupStore } from './test-dedup-store.js';

const options = { secret: SECRET, now };
const handler = (): undefined => undefined;

/** Creation mistakes, each a `TypeError` at `verifyWebhook(options, handler)` (`handler` undefined: `verifyWebhook(options)`). */
export const creationMistakes: ReadonlyArray<readonly [name: string, options: unknown, handler: unknown]> = [
  ['neither on nor a handler', options, undefined],
  ['both on and a handler', { ...options, on: {} }, handler],
  ['both handoff and a handler', { ...options, handoff: { hand: async () => undefined } }, handler],
  ['both on and handoff', { ...options, on: {}, handoff: { hand: async () => undefined } }, undefined],
  ['a handoff that is no queue', { ...options, handoff: 'bullmq' }, undefined],
  ['a handler that is no function', options, 'handle'],
  ['schemas with a handler', { ...options, schemas: {} }, handler],
  ['unknownEvents with a handler', { ...options, unknownEvents: 'reject' }, handler],
  ['onUnknownEvent with a handler', { ...options, onUnknownEvent: () => undefined }, handler],
  ['schemas with handoff', { ...options, handoff: { hand: async () => undefined }, schemas: {} }, undefined],
  ['both unknownEvents and onUnknownEvent', { ...options, on: {}, unknownEvents: 'reject', onUnknownEvent: () => undefined }, undefined],
  ['the leaseMs of rc.1 at the top level, now dedup.leaseMs', { ...options, on: {}, leaseMs: 30_000 }, undefined],
  ['an onErrorTimeoutMs that is no whole number of milliseconds', { ...options, onErrorTimeoutMs: 1.5 }, handler],
  ['an onError that is no function', { ...options, onError: 'log' }, handler],
  ['an onHandlerError that is no function', { ...options, onHandlerError: 'log' }, handler],
  ['no secret', {}, handler],
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

/**
 * The behaviour every OrderingDedupStore must have, as one suite run against
 * each store that orders: events of one object one at a time, a version
 * recorded with the completion, and a stale event told apart.
 */
import { describe, expect, it } from 'vitest';
import type { EventOrder } from '../../src/core/event-order.js';
import { missingOrderingMethods, type OrderingDedupStore } from '../../src/stores/dedup-store.js';
import type { ContractTiming, DedupHarness } from './dedup-store-contract.js';

const DEFAULT_TIMING: ContractTiming = { shortMs: 100, pastShortMs: 250 };
const LONG = 60_000;

/** Scoped as receivers scope them: the 16 characters of the secret's scope, then the object's id. */
const order = (version: number, object = 'msg_1'): EventOrder => ({ key: `scopescopescope1:${object}`, version });

/** Claims `id` as an event of `at`; answers the token and whether it was stale. */
export async function claimInOrder(store: OrderingDedupStore, id: string, at: EventOrder, leaseMs = LONG): Promise<{ token: string; stale: boolean }> {
  const result = await store.beginInOrder(id, at, leaseMs);
  if (result.state !== 'claimed') throw new Error(`expected a claim on ${id}, got ${result.state}`);
  return { token: result.token, stale: result.stale };
}

/** Claims and completes `id` as the event of version `version` of `msg_1`. */
async function processed(store: OrderingDedupStore, id: string, version: number): Promise<void> {
  const { token } = await claimInOrder(store, id, order(version));
  expect(await store.completeInOrder(id, order(version), token, LONG)).toBe(true);
}

/**
 * Leaves four ordered events and their objects for a store's `deleteExpired`, then lets 50 ms pass:
 * one leased anew past its first lease, one done with a retention of 50 ms, one done for long, one
 * whose lease ran out (as after a crash). Answers the keys of the objects that must stay, in order;
 * the events of the other two and their objects, four rows, are to go.
 */
export async function objectsToPurge({ store, advance }: DedupHarness & { store: OrderingDedupStore }): Promise<Array<{ key: string }>> {
  const leased = await claimInOrder(store, 'evt_leased', order(1, 'msg_leased'), 50);
  expect(await store.renewInOrder('evt_leased', order(1, 'msg_leased'), leased.token, LONG)).toBe(true);
  const old = await claimInOrder(store, 'evt_old', order(1, 'msg_old'));
  expect(await store.completeInOrder('evt_old', order(1, 'msg_old'), old.token, 50)).toBe(true);
  const kept = await claimInOrder(store, 'evt_kept', order(1, 'msg_kept'));
  expect(await store.completeInOrder('evt_kept', order(1, 'msg_kept'), kept.token, LONG)).toBe(true);
  await claimInOrder(store, 'evt_crashed', order(1, 'msg_crashed'), 50);
  await advance(50);
  return [{ key: order(0, 'msg_kept').key }, { key: order(0, 'msg_leased').key }];
}

/** The contract's suite for one store that orders. */
export function describeOrderingContract(name: string, harness: () => Promise<DedupHarness>, timing: ContractTiming = DEFAULT_TIMING): void {
  const { shortMs: SHORT_LEASE, pastShortMs: PAST_SHORT } = timing;
  const orderingStore = async (): Promise<DedupHarness & { store: OrderingDedupStore }> => {
    const made = await harness();
    expect(missingOrderingMethods(made.store)).toEqual([]);
    return made as DedupHarness & { store: OrderingDedupStore };
  };

  describe(`${name}: OrderingDedupStore contract`, () => {
    it('claims the first event of an object, not stale, and records its version with the completion', async () => {
      const { store } = await orderingStore();
      expect(await claimInOrder(store, 'evt_1', order(5))).toEqual({ token: expect.any(String), stale: false });
      const { token } = await claimInOrder(store, 'evt_1b', order(5, 'msg_2'));
      expect(await store.completeInOrder('evt_1b', order(5, 'msg_2'), token, LONG)).toBe(true);
      expect(await store.beginInOrder('evt_1b', order(5, 'msg_2'), LONG)).toEqual({ state: 'done' });
      expect((await claimInOrder(store, 'evt_2', order(4, 'msg_2'))).stale).toBe(true);
    });

    it('answers in_progress for another event of an object while one of its events holds a live lease', async () => {
      const { store } = await orderingStore();
      await claimInOrder(store, 'evt_1', order(5));
      expect(await store.beginInOrder('evt_2', order(6), LONG)).toEqual({ state: 'in_progress' });
      expect(await store.beginInOrder('evt_1', order(5), LONG)).toEqual({ state: 'in_progress' });
      // Another object runs meanwhile.
      expect((await claimInOrder(store, 'evt_3', order(1, 'msg_2'))).stale).toBe(false);
    });

    it('tells a lower version stale once a higher one was processed; an equal or higher one is not', async () => {
      const { store } = await orderingStore();
      await processed(store, 'evt_5', 5);
      for (const [id, version, stale] of [['evt_4', 4, true], ['evt_5b', 5, false], ['evt_6', 6, false], ['evt_4b', 4.999, true]] as const) {
        const claimed = await claimInOrder(store, id, order(version));
        expect(claimed.stale, id).toBe(stale);
        expect(await store.releaseInOrder(id, order(version), claimed.token)).toBe(true);
      }
    });

    it('never lowers the recorded version: a stale event completed leaves the higher one', async () => {
      const { store } = await orderingStore();
      await processed(store, 'evt_9', 9);
      const old = await claimInOrder(store, 'evt_2', order(2));
      expect(old.stale).toBe(true);
      expect(await store.completeInOrder('evt_2', order(2), old.token, LONG)).toBe(true);
      expect((await claimInOrder(store, 'evt_8', order(8))).stale).toBe(true);
    });

    it('compares versions as numbers: instants in milliseconds with a fraction, past 2^31 and below 10', async () => {
      const { store } = await orderingStore();
      const instant = Date.UTC(2026, 10, 29, 12, 0, 0, 1) + 0.5;
      await processed(store, 'evt_a', instant);
      const claimed = await claimInOrder(store, 'evt_b', order(instant - 0.25));
      expect(claimed.stale).toBe(true);
      await store.releaseInOrder('evt_b', order(instant - 0.25), claimed.token);
      expect((await claimInOrder(store, 'evt_c', order(9, 'msg_2'))).stale).toBe(false);
    });

    it('records no version when the event is released, and frees its object', async () => {
      const { store } = await orderingStore();
      await processed(store, 'evt_3', 3);
      const failing = await claimInOrder(store, 'evt_9', order(9));
      expect(await store.releaseInOrder('evt_9', order(9), failing.token)).toBe(true);
      const next = await claimInOrder(store, 'evt_5', order(5));
      expect(next.stale).toBe(false);
      expect(await store.completeInOrder('evt_5', order(5), next.token, LONG)).toBe(true);
      // The released event comes back and is newer still.
      expect((await claimInOrder(store, 'evt_9', order(9))).stale).toBe(false);
    });

    it('frees the object on completion: the next event of it claims at once', async () => {
      const { store } = await orderingStore();
      await processed(store, 'evt_1', 1);
      expect((await claimInOrder(store, 'evt_2', order(2))).stale).toBe(false);
    });

    it('answers done for a processed event, whatever its object holds', async () => {
      const { store } = await orderingStore();
      await processed(store, 'evt_1', 1);
      await claimInOrder(store, 'evt_2', order(2));
      expect(await store.beginInOrder('evt_1', order(1), LONG)).toEqual({ state: 'done' });
    });

    it('lets a wrong token neither complete, release nor renew, and records nothing for it', async () => {
      const { store } = await orderingStore();
      const held = await claimInOrder(store, 'evt_7', order(7));
      expect(await store.completeInOrder('evt_7', order(7), 'not-the-token', LONG)).toBe(false);
      expect(await store.releaseInOrder('evt_7', order(7), 'not-the-token')).toBe(false);
      expect(await store.renewInOrder('evt_7', order(7), 'not-the-token', LONG)).toBe(false);
      expect(await store.beginInOrder('evt_8', order(8), LONG)).toEqual({ state: 'in_progress' });
      expect(await store.releaseInOrder('evt_7', order(7), held.token)).toBe(true);
      expect((await claimInOrder(store, 'evt_6', order(6))).stale).toBe(false);
    });

    it("frees the object when its event's lease runs out, as after a crashed handler", async () => {
      const { store, advance } = await orderingStore();
      const crashed = await claimInOrder(store, 'evt_5', order(5), SHORT_LEASE);
      await advance(PAST_SHORT);
      const next = await claimInOrder(store, 'evt_6', order(6));
      expect(next.stale).toBe(false);
      // The crashed delivery's late completion is refused and records nothing.
      expect(await store.completeInOrder('evt_5', order(5), crashed.token, LONG)).toBe(false);
      expect(await store.completeInOrder('evt_6', order(6), next.token, LONG)).toBe(true);
      expect((await claimInOrder(store, 'evt_5', order(5))).stale).toBe(true);
    });

    it("renews the object's lease with the event's", async () => {
      const { store, advance } = await orderingStore();
      const held = await claimInOrder(store, 'evt_1', order(1), SHORT_LEASE);
      expect(await store.renewInOrder('evt_1', order(1), held.token, LONG)).toBe(true);
      await advance(PAST_SHORT);
      expect(await store.beginInOrder('evt_2', order(2), LONG)).toEqual({ state: 'in_progress' });
      expect(await store.completeInOrder('evt_1', order(1), held.token, LONG)).toBe(true);
    });

    it('gives exactly one claim to many concurrent events of one object', async () => {
      const { store } = await orderingStore();
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.beginInOrder(`evt_${i}`, order(i), LONG)));
      expect(results.filter((result) => result.state === 'claimed')).toHaveLength(1);
      expect(results.filter((result) => result.state === 'in_progress')).toHaveLength(19);
    });
  });
}

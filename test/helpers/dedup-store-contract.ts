/**
 * The behaviour every DedupStore must have, as one suite run against each
 * store. A harness gives a fresh, isolated store per test and a way to let
 * time pass: an injected clock for memory, real sleeps for Redis.
 */
import { describe, expect, it } from 'vitest';
import type { BeginResult, DedupStore } from '../../src/stores/dedup-store.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

export interface DedupHarness {
  readonly store: DedupStore;
  /** Lets `ms` milliseconds pass for the store. */
  advance(ms: number): Promise<void>;
}

/** A short lease or retention, and a wait past it: short enough for real Redis expiry, with a margin for slow machines. */
export interface ContractTiming {
  readonly shortMs: number;
  readonly pastShortMs: number;
}

const DEFAULT_TIMING: ContractTiming = { shortMs: 100, pastShortMs: 250 };
const LONG = 60_000;

/** A clock for a store that a test moves by hand: `now` for the store's option, `advance` for its harness. */
export function manualClock(start = 1_700_000_000_000): { now: () => number; advance(ms: number): Promise<void> } {
  let now = start;
  return {
    now: () => now,
    advance: async (ms) => {
      now += ms;
    },
  };
}

export async function claim(store: DedupStore, id: string, leaseMs = LONG): Promise<string> {
  const result = await store.begin(id, leaseMs);
  if (result.state !== 'claimed') throw new Error(`expected a claim on ${id}, got ${result.state}`);
  return result.token;
}

/**
 * The contract's suite for one store. `timing` is longer for a store whose
 * steps take real round trips (Postgres): a loaded machine spends 100 ms
 * between a `complete` and the `begin` that must still find it done.
 */
export function describeDedupContract(name: string, harness: () => Promise<DedupHarness>, timing: ContractTiming = DEFAULT_TIMING): void {
  const { shortMs: SHORT_LEASE, pastShortMs: PAST_SHORT } = timing;
  describe(`${name}: DedupStore contract`, () => {
    it('claims an absent id with a non-empty token', async () => {
      const { store } = await harness();
      const result = await store.begin('evt_1', LONG);
      expect(result.state).toBe('claimed');
      expect(result.state === 'claimed' && result.token.length > 0).toBe(true);
    });

    it('answers in_progress while the lease is live', async () => {
      const { store } = await harness();
      await claim(store, 'evt_1');
      expect(await store.begin('evt_1', LONG)).toEqual({ state: 'in_progress' });
    });

    it('answers done after complete, and keeps answering it', async () => {
      const { store } = await harness();
      const token = await claim(store, 'evt_1');
      expect(await store.complete('evt_1', token, LONG)).toBe(true);
      expect(await store.begin('evt_1', LONG)).toEqual({ state: 'done' });
      expect(await store.begin('evt_1', LONG)).toEqual({ state: 'done' });
    });

    it('claims again with a new token after release', async () => {
      const { store } = await harness();
      const first = await claim(store, 'evt_1');
      expect(await store.release('evt_1', first)).toBe(true);
      const second = await claim(store, 'evt_1');
      expect(second).not.toBe(first);
    });

    it('claims again once a lease expires, as after a crashed handler', async () => {
      const h = await harness();
      await claim(h.store, 'evt_1', SHORT_LEASE);
      await h.advance(PAST_SHORT);
      expect((await h.store.begin('evt_1', LONG)).state).toBe('claimed');
    });

    it('forgets a done id after its retention', async () => {
      const h = await harness();
      const token = await claim(h.store, 'evt_1');
      expect(await h.store.complete('evt_1', token, SHORT_LEASE)).toBe(true);
      expect(await h.store.begin('evt_1', LONG)).toEqual({ state: 'done' });
      await h.advance(PAST_SHORT);
      expect((await h.store.begin('evt_1', LONG)).state).toBe('claimed');
    });

    it('lets a stale token neither complete nor release the claim that took over', async () => {
      const h = await harness();
      const stale = await claim(h.store, 'evt_1', SHORT_LEASE);
      await h.advance(PAST_SHORT);
      const current = await claim(h.store, 'evt_1');
      expect(await h.store.complete('evt_1', stale, LONG)).toBe(false);
      expect(await h.store.release('evt_1', stale)).toBe(false);
      expect(await h.store.begin('evt_1', LONG)).toEqual({ state: 'in_progress' });
      expect(await h.store.complete('evt_1', current, LONG)).toBe(true);
      expect(await h.store.begin('evt_1', LONG)).toEqual({ state: 'done' });
    });

    it('refuses to complete once its own lease expired, even if nobody took over, so the retry processes it', async () => {
      const h = await harness();
      const token = await claim(h.store, 'evt_1', SHORT_LEASE);
      await h.advance(PAST_SHORT);
      expect(await h.store.complete('evt_1', token, LONG)).toBe(false);
      expect(await h.store.release('evt_1', token)).toBe(false);
      expect((await h.store.begin('evt_1', LONG)).state).toBe('claimed');
    });

    it('refuses a wrong token and leaves the claim alone', async () => {
      const { store } = await harness();
      const token = await claim(store, 'evt_1');
      const other = await claim(store, 'evt_2');
      expect(await store.complete('evt_1', other, LONG)).toBe(false);
      expect(await store.release('evt_1', other)).toBe(false);
      expect(await store.complete('evt_1', 'done', LONG)).toBe(false);
      expect(await store.begin('evt_1', LONG)).toEqual({ state: 'in_progress' });
      expect(await store.complete('evt_1', token, LONG)).toBe(true);
    });

    it('refuses to complete or release an id nobody claimed', async () => {
      const { store } = await harness();
      expect(await store.complete('evt_unknown', 'some-token', LONG)).toBe(false);
      expect(await store.release('evt_unknown', 'some-token')).toBe(false);
      expect((await store.begin('evt_unknown', LONG)).state).toBe('claimed');
    });

    it('keeps a done id done: a second complete or a release changes nothing', async () => {
      const { store } = await harness();
      const token = await claim(store, 'evt_1');
      expect(await store.complete('evt_1', token, LONG)).toBe(true);
      expect(await store.complete('evt_1', token, LONG)).toBe(false);
      expect(await store.release('evt_1', token)).toBe(false);
      expect(await store.begin('evt_1', LONG)).toEqual({ state: 'done' });
    });

    it('keeps ids apart', async () => {
      const { store } = await harness();
      const token = await claim(store, 'evt_1');
      await store.complete('evt_1', token, LONG);
      expect((await store.begin('evt_2', LONG)).state).toBe('claimed');
      expect((await store.begin('evt_10', LONG)).state).toBe('claimed');
    });

    it('gives exactly one claim to many concurrent begins on one id', async () => {
      const { store } = await harness();
      const results: BeginResult[] = await Promise.all(Array.from({ length: 50 }, () => store.begin('evt_1', LONG)));
      expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1);
      expect(results.filter((r) => r.state === 'in_progress')).toHaveLength(49);
    });

    it('renews a lease past its first end, and the holder still completes it', async () => {
      const h = await harness();
      const token = await claim(h.store, 'evt_1', SHORT_LEASE);
      expect(await h.store.renew('evt_1', token, LONG)).toBe(true);
      await h.advance(PAST_SHORT);
      expect(await h.store.begin('evt_1', LONG)).toEqual({ state: 'in_progress' });
      expect(await h.store.complete('evt_1', token, LONG)).toBe(true);
      expect(await h.store.begin('evt_1', LONG)).toEqual({ state: 'done' });
    });

    it('renews to leaseMs from now, so a renewal may also shorten the lease', async () => {
      const h = await harness();
      const token = await claim(h.store, 'evt_1', LONG);
      expect(await h.store.renew('evt_1', token, SHORT_LEASE)).toBe(true);
      await h.advance(PAST_SHORT);
      expect((await h.store.begin('evt_1', LONG)).state).toBe('claimed');
    });

    it('refuses to renew with a wrong or stale token, and leaves the holder its lease', async () => {
      const h = await harness();
      const stale = await claim(h.store, 'evt_1', SHORT_LEASE);
      await h.advance(PAST_SHORT);
      const current = await claim(h.store, 'evt_1', SHORT_LEASE);
      expect(await h.store.renew('evt_1', stale, LONG)).toBe(false);
      expect(await h.store.renew('evt_1', 'done', LONG)).toBe(false);
      // Neither refusal lengthened the holder's short lease.
      await h.advance(PAST_SHORT);
      expect(await h.store.complete('evt_1', current, LONG)).toBe(false);
      expect((await h.store.begin('evt_1', LONG)).state).toBe('claimed');
    });

    it('never revives an expired lease by renewing it', async () => {
      const h = await harness();
      const token = await claim(h.store, 'evt_1', SHORT_LEASE);
      await h.advance(PAST_SHORT);
      expect(await h.store.renew('evt_1', token, LONG)).toBe(false);
      expect(await h.store.complete('evt_1', token, LONG)).toBe(false);
      expect((await h.store.begin('evt_1', LONG)).state).toBe('claimed');
    });

    it('leaves a done id and an absent id as they are when asked to renew them', async () => {
      const h = await harness();
      const token = await claim(h.store, 'evt_1');
      expect(await h.store.complete('evt_1', token, SHORT_LEASE)).toBe(true);
      expect(await h.store.renew('evt_1', token, LONG)).toBe(false);
      expect(await h.store.renew('evt_1', 'done', LONG)).toBe(false);
      expect(await h.store.renew('evt_absent', 'some-token', LONG)).toBe(false);
      expect(await h.store.begin('evt_1', LONG)).toEqual({ state: 'done' });
      // The done id is still forgotten on its own schedule, and the absent one was never created.
      await h.advance(PAST_SHORT);
      expect((await h.store.begin('evt_1', LONG)).state).toBe('claimed');
      expect((await h.store.begin('evt_absent', LONG)).state).toBe('claimed');
    });

    it('rejects a renewal for a duration that is not a positive integer with a WebhookOptionsError, keeping the lease', async () => {
      const { store } = await harness();
      const token = await claim(store, 'evt_1');
      for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
        await expect(store.renew('evt_1', token, bad)).rejects.toThrow(WebhookOptionsError);
      }
      expect(await store.begin('evt_1', LONG)).toEqual({ state: 'in_progress' });
      expect(await store.complete('evt_1', token, LONG)).toBe(true);
    });

    it('rejects durations that are not positive integers with a WebhookOptionsError', async () => {
      const { store } = await harness();
      for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
        await expect(store.begin('evt_1', bad)).rejects.toThrow(WebhookOptionsError);
      }
      const token = await claim(store, 'evt_1');
      await expect(store.complete('evt_1', token, 0)).rejects.toThrow(WebhookOptionsError);
      expect(await store.begin('evt_1', LONG)).toEqual({ state: 'in_progress' });
    });
  });
}

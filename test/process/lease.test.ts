/**
 * A lease renewed while the user's code runs, on a fake clock: each third of
 * the lease, retried while the store fails until the lease is about to end,
 * stopped when settled, when the store says the lease went elsewhere, or at
 * maxClaimMs.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { BeginResult, DedupStore } from '../../src/index.js';
import { STORE_CHANNEL } from '../../src/process/diagnostics.js';
import { LeaseRenewal, renewalDelay, type HeldLease } from '../../src/process/lease.js';

describe('LeaseRenewal', () => {
  const START = 1_700_000_000_000;

  interface RenewCall {
    readonly at: number;
    readonly id: string;
    readonly token: string;
    readonly leaseMs: number;
  }

  /** A store that only renews: each call recorded, answered by `answer` (true by default). */
  class RenewingStore implements DedupStore {
    readonly calls: RenewCall[] = [];
    answer: (call: RenewCall) => Promise<boolean> = async () => true;

    renew(id: string, token: string, leaseMs: number): Promise<boolean> {
      const call = { at: Date.now() - START, id, token, leaseMs };
      this.calls.push(call);
      return this.answer(call);
    }
    begin(): Promise<BeginResult> {
      throw new Error('not used by a renewal');
    }
    complete(): Promise<boolean> {
      throw new Error('not used by a renewal');
    }
    release(): Promise<boolean> {
      throw new Error('not used by a renewal');
    }

    /** When each renewal was sent, in ms from START, and for how long. */
    get sent(): Array<[number, number]> {
      return this.calls.map(({ at, leaseMs }) => [at, leaseMs]);
    }
  }

  let store: RenewingStore;
  let gaveUp: unknown[];
  let renewal: LeaseRenewal | undefined;

  beforeEach(() => {
    vi.useFakeTimers({ now: START });
    store = new RenewingStore();
    gaveUp = [];
  });

  afterEach(() => {
    renewal?.stop();
    renewal = undefined;
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  /** Starts renewing evt_1's lease, claimed now, under token-1. */
  function renewing(leaseMs: number, maxClaimMs = 100 * leaseMs): LeaseRenewal {
    const lease: HeldLease = { store, key: 'evt_1', token: 'token-1', leaseMs, claimedAt: Date.now(), maxClaimMs };
    renewal = new LeaseRenewal(lease, async (error) => void gaveUp.push(error));
    return renewal;
  }

  describe('LeaseRenewal.deadline', () => {
    it('is a tenth of the lease, rounded up, before the lease ends', () => {
      expect(LeaseRenewal.deadline(10_000, 1_000)).toBe(9_900);
      expect(LeaseRenewal.deadline(10_000, 1_001)).toBe(9_899);
    });
  });

  describe('renewing a lease', () => {
    it('renews once a third of the lease has passed, for a whole lease, the id and token held', async () => {
      renewing(1_000);
      await vi.advanceTimersByTimeAsync(333);
      expect(store.calls).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      expect(store.calls).toEqual([{ at: 334, id: 'evt_1', token: 'token-1', leaseMs: 1_000 }]);
    });

    it('renews again a third of a lease after each renewal was sent', async () => {
      renewing(900);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(store.sent).toEqual([
        [300, 900],
        [600, 900],
        [900, 900],
      ]);
    });

    it('answers the end of the first lease when stopped before any renewal', () => {
      expect(renewing(900).stop()).toBe(START + 900);
    });

    it('answers the end of the lease the last accepted renewal gave, counted from when it was sent', async () => {
      const lease = renewing(900);
      let accept!: (held: boolean) => void;
      store.answer = () => new Promise((resolve) => (accept = resolve));
      await vi.advanceTimersByTimeAsync(300);
      await vi.advanceTimersByTimeAsync(50);
      accept(true);
      await vi.advanceTimersByTimeAsync(0);
      expect(lease.stop()).toBe(START + 300 + 900);
    });

    it('counts a retried renewal from when the try that succeeded was sent', async () => {
      const lease = renewing(900);
      store.answer = async () => {
        store.answer = async () => true;
        throw new Error('renew failed');
      };
      await vi.advanceTimersByTimeAsync(325);
      expect(store.sent).toEqual([
        [300, 900],
        [325, 900],
      ]);
      expect(lease.stop()).toBe(START + 325 + 900);
      expect(gaveUp).toEqual([]);
    });

    it('sends nothing more once stopped', async () => {
      renewing(900).stop();
      await vi.advanceTimersByTimeAsync(10_000);
      expect(store.calls).toEqual([]);
    });

    it('schedules no further renewal when stopped while one was on its way', async () => {
      const lease = renewing(900);
      let accept!: (held: boolean) => void;
      store.answer = () => new Promise((resolve) => (accept = resolve));
      await vi.advanceTimersByTimeAsync(300);
      expect(lease.stop()).toBe(START + 900);
      accept(true);
      await vi.advanceTimersByTimeAsync(10_000);
      expect(store.calls).toHaveLength(1);
    });

    it.each([
      ['false', false],
      ['something other than true', 'yes' as unknown as boolean],
    ])('stops when the store answers %s: the token no longer holds the lease', async (_name, answer) => {
      const lease = renewing(900);
      store.answer = async () => answer;
      await vi.advanceTimersByTimeAsync(10_000);
      expect(store.calls).toHaveLength(1);
      expect(lease.stop()).toBe(START + 900);
      expect(gaveUp).toEqual([]);
    });
  });

  describe('the hold limit, maxClaimMs', () => {
    it('shortens the renewal that reaches it, and renews no more after', async () => {
      const lease = renewing(900, 1_000);
      await vi.advanceTimersByTimeAsync(300);
      expect(store.sent).toEqual([[300, 700]]);
      // Nothing is left scheduled after the last renewal.
      expect(vi.getTimerCount()).toBe(0);
      await vi.advanceTimersByTimeAsync(10_000);
      expect(store.calls).toHaveLength(1);
      expect(lease.stop()).toBe(START + 1_000);
    });

    it('renews nothing when it is no longer than the lease', async () => {
      renewing(900, 900);
      await vi.advanceTimersByTimeAsync(10_000);
      expect(store.calls).toEqual([]);
    });

    it('still grants a last millisecond', async () => {
      renewing(900, 1_000);
      // The clock jumps ahead of the timers, as after an event loop stall.
      vi.setSystemTime(START + 699);
      await vi.advanceTimersByTimeAsync(300);
      expect(store.sent).toEqual([[999, 1]]);
    });

    it('grants nothing when the hold limit has passed by the time the renewal is due', async () => {
      renewing(900, 1_000);
      vi.setSystemTime(START + 700);
      await vi.advanceTimersByTimeAsync(300);
      expect(store.calls).toEqual([]);
    });
  });

  describe('a store that keeps failing', () => {
    beforeEach(() => {
      store.answer = async ({ at }) => {
        throw new Error(`renew at ${at} failed`);
      };
    });

    it('is retried until a tenth of the lease before it ends, then onGiveUp hears the last error once', async () => {
      renewing(1_001);
      await vi.advanceTimersByTimeAsync(10_000);
      const tries = store.calls.map(({ at }) => at);
      expect(tries[0]).toBe(334);
      expect(tries.at(-1)).toBe(900);
      expect(tries.length).toBeGreaterThan(3);
      expect(gaveUp).toEqual([new Error('renew at 900 failed')]);
    });

    it('tells each failed try on the store channel: a renew of its key, numbered, with its tenant', async () => {
      const heard: unknown[] = [];
      const hear = (message: unknown): void => void heard.push(message);
      subscribe(STORE_CHANNEL, hear);
      try {
        renewal = new LeaseRenewal({ store, key: 'k:evt_1', token: 'token-1', leaseMs: 1_000, claimedAt: Date.now(), maxClaimMs: 100_000, tenant: 'acme' }, async () => undefined);
        await vi.advanceTimersByTimeAsync(500);
      } finally {
        unsubscribe(STORE_CHANNEL, hear);
      }
      expect(heard.length).toBeGreaterThan(1);
      expect(heard).toEqual(
        store.calls.map(({ at }, i) => ({ operation: 'renew', key: 'k:evt_1', attempt: i + 1, error: new Error(`renew at ${at} failed`), tenant: 'acme' })),
      );
    });

    it('is tried no more once stopped between tries, and onGiveUp hears nothing', async () => {
      const lease = renewing(900);
      await vi.advanceTimersByTimeAsync(300);
      expect(store.calls).toHaveLength(1);
      lease.stop();
      await vi.advanceTimersByTimeAsync(10_000);
      expect(store.calls).toHaveLength(1);
      expect(gaveUp).toEqual([]);
    });

    it('tells onGiveUp nothing when stopped while its last try was on its way', async () => {
      const lease = renewing(1_000);
      let fail!: (error: Error) => void;
      const failing = store.answer;
      store.answer = (call) => (call.at < 900 ? failing(call) : new Promise((_resolve, reject) => (fail = reject)));
      await vi.advanceTimersByTimeAsync(900);
      expect(store.calls.at(-1)?.at).toBe(900);
      lease.stop();
      fail(new Error('renew at 900 failed'));
      await vi.advanceTimersByTimeAsync(10_000);
      expect(gaveUp).toEqual([]);
    });
  });

  describe('the renewal timer', () => {
    it('does not keep a Node process alive', () => {
      const timers: NodeJS.Timeout[] = [];
      const setTimer = globalThis.setTimeout;
      vi.spyOn(globalThis, 'setTimeout').mockImplementation(((...args: Parameters<typeof setTimeout>) => {
        const timer = setTimer(...args);
        timers.push(timer);
        return timer;
      }) as typeof setTimeout);
      renewing(900);
      expect(timers).toHaveLength(1);
      expect(timers[0]!.hasRef()).toBe(false);
    });

    it.each([
      ['a number, as in a Worker', 7],
      ['an object without unref', {}],
    ])('may be %s', (_name, timer) => {
      vi.spyOn(globalThis, 'setTimeout').mockReturnValue(timer as unknown as NodeJS.Timeout);
      vi.spyOn(globalThis, 'clearTimeout').mockReturnValue(undefined);
      expect(() => renewing(900).stop()).not.toThrow();
    });
  });
});

describe('renewalDelay', () => {
  it('is a third of the lease, leaving two thirds for retries, for any lease', () => {
    expect([renewalDelay(90), renewalDelay(60_000), renewalDelay(1), renewalDelay(100)]).toEqual([30, 20_000, 1, 34]);
  });
});

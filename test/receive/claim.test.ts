/**
 * A delivery's claim, on a fake clock: the lease renewed while the user's
 * code runs (bounded by maxClaimMs), settlement retried while the store
 * fails until the lease is about to end, and the operator told only then,
 * through an onStoreError that cannot change anything by throwing, or the
 * default log line, written at most once per store per interval.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryDedupStore, type BeginResult, type DedupStore, type ReceiverOptions } from '../../src/index.js';
import { LeaseRenewal, renewalDelay, STORE_LOG_INTERVAL_MS, storeErrorLog, storeErrorReporter, type HeldLease } from '../../src/receive/claim.js';
import { createReceiver } from '../../src/receive/receiver.js';
import { storeFailureHint } from '../../src/stores/store-failure-hint.js';
import { failingBothWays } from '../helpers/failing-callbacks.js';
import { verifyAndClaim } from '../helpers/receiver-steps.js';
import { now as signedAt, SECRET, signedRequest } from '../helpers/signed-request.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('holding a claim through a receiver', () => {
  type Op = 'complete' | 'release' | 'renew';

  /**
   * A MemoryDedupStore on the fake clock, recording when each operation was
   * tried; `failures[op]` makes the next that many calls fail, alternately by
   * rejecting and by throwing at once, as a careless custom store might.
   */
  class FlakyStore implements DedupStore {
    readonly inner = new MemoryDedupStore({ now: () => Date.now() });
    readonly tries: Record<Op, number[]> = { complete: [], release: [], renew: [] };
    readonly failures: Record<Op, number> = { complete: 0, release: 0, renew: 0 };

    begin(id: string, leaseMs: number) {
      return this.inner.begin(id, leaseMs);
    }
    complete(id: string, token: string, ttlMs: number) {
      return this.#try('complete', () => this.inner.complete(id, token, ttlMs));
    }
    release(id: string, token: string) {
      return this.#try('release', () => this.inner.release(id, token));
    }
    renew(id: string, token: string, leaseMs: number) {
      return this.#try('renew', () => this.inner.renew(id, token, leaseMs));
    }

    #try(op: Op, run: () => Promise<boolean>): Promise<boolean> {
      this.tries[op].push(Date.now());
      if (this.failures[op] > 0) {
        this.failures[op] -= 1;
        const error = new Error(`${op} failed`);
        if (this.failures[op] % 2 === 0) throw error;
        return Promise.reject(error);
      }
      return run();
    }
  }

  const LEASE_MS = 1_000;
  const START = 1_700_000_000_000;

  let store: FlakyStore;
  let storeErrors: unknown[];

  beforeEach(() => {
    vi.useFakeTimers({ now: START });
    store = new FlakyStore();
    storeErrors = [];
  });

  afterEach(() => {
    store.inner.close();
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  /** Claims evt_1 through a receiver on `store`; answers the claim's settle. */
  async function claimed(options: Partial<ReceiverOptions> = {}): Promise<(status: number) => Promise<void>> {
    const receiver = createReceiver({
      secret: SECRET,
      now: signedAt,
      dedup: store,
      leaseMs: LEASE_MS,
      onStoreError: (error) => storeErrors.push(error),
      ...options,
    });
    const { body, headers } = signedRequest();
    const reception = await verifyAndClaim(receiver, body, headers);
    if (reception.action !== 'process' || reception.settle === undefined) throw new Error('expected a claim');
    return reception.settle;
  }

  /** What another delivery of evt_1 would find now. */
  async function stateForARetry(): Promise<string> {
    const result = await store.inner.begin('evt_1', LEASE_MS);
    if (result.state === 'claimed') await store.inner.release('evt_1', result.token);
    return result.state;
  }

  /** Runs the fake clock until `settling` resolves; answers how long that took. */
  async function settledAfter(settling: Promise<void>): Promise<number> {
    const from = Date.now();
    let done = false;
    void settling.then(() => (done = true));
    while (!done) await vi.advanceTimersByTimeAsync(5);
    return Date.now() - from;
  }

  describe('settling a claim while the store fails', () => {
    it.each([
      ['completes after a 2xx', 204, 'complete', 'done'],
      ['releases after a failure', 500, 'release', 'claimed'],
    ] as const)('%s once the store recovers from failing three times, and tells onStoreError nothing', async (_name, status, op, after) => {
      const settle = await claimed();
      store.failures[op] = 3;
      await settledAfter(settle(status));
      expect(store.tries[op]).toHaveLength(4);
      expect(storeErrors).toEqual([]);
      expect(await stateForARetry()).toBe(after);
    });

    it('pauses longer after each failure', async () => {
      const settle = await claimed();
      store.failures.complete = 4;
      await settledAfter(settle(204));
      const pauses = store.tries.complete.slice(1).map((at, i) => at - store.tries.complete[i]!);
      expect(pauses).toHaveLength(4);
      for (let i = 1; i < pauses.length; i++) expect(pauses[i]).toBeGreaterThan(pauses[i - 1]!);
    });

    it('gives up shortly before the lease ends, then tells onStoreError the last error, once', async () => {
      const settle = await claimed();
      store.failures.complete = Number.POSITIVE_INFINITY;
      await settledAfter(settle(204));
      const tries = store.tries.complete;
      expect(tries.length).toBeGreaterThan(3);
      expect(tries.at(-1)! - START).toBeLessThan(LEASE_MS);
      expect(tries.at(-1)! - START).toBeGreaterThanOrEqual(LEASE_MS * 0.8);
      expect(storeErrors).toEqual([new Error('complete failed')]);
      // Nothing more is tried after giving up.
      await vi.advanceTimersByTimeAsync(10 * LEASE_MS);
      expect(store.tries.complete).toHaveLength(tries.length);
    });

    it('retries until the renewed lease is about to end, not the first one', async () => {
      const settle = await claimed();
      await vi.advanceTimersByTimeAsync(2 * LEASE_MS);
      store.failures.complete = 5;
      await settledAfter(settle(204));
      expect(storeErrors).toEqual([]);
      expect(await stateForARetry()).toBe('done');
    });

    it('settles once, however often settle is called', async () => {
      const settle = await claimed();
      await Promise.all([settle(204), settle(500), settle(204)]);
      expect(store.tries.complete).toHaveLength(1);
      expect(store.tries.release).toEqual([]);
      expect(await stateForARetry()).toBe('done');
    });
  });

  describe('an onStoreError that fails', () => {
    it.each([
      ['throws', () => {
        throw new Error('callback bug');
      }],
      ['rejects', async () => Promise.reject(new Error('callback bug'))],
      ['throws a value that cannot be printed', () => {
        throw Object.create(null);
      }],
    ])('%s: settle still resolves, and one line is logged', async (_name, onStoreError) => {
      const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
      const settle = await claimed({ onStoreError });
      store.failures.complete = Number.POSITIVE_INFINITY;
      await expect(settledAfter(settle(204))).resolves.toBeGreaterThan(0);
      expect(logged).toHaveBeenCalledTimes(1);
      expect(logged.mock.calls[0]).toEqual([expect.stringMatching(/^svc-webhooks: onStoreError threw \(.+\)/)]);
    });

    it('is awaited: settle resolves only after an async onStoreError did', async () => {
      let finished = false;
      const settle = await claimed({
        onStoreError: async () => {
          await new Promise((resolve) => setTimeout(resolve, 500));
          finished = true;
        },
      });
      store.failures.release = Number.POSITIVE_INFINITY;
      await settledAfter(settle(500));
      expect(finished).toBe(true);
    });

    it('defaults to one console line', async () => {
      const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
      const settle = await claimed({ onStoreError: undefined });
      store.failures.complete = Number.POSITIVE_INFINITY;
      await settledAfter(settle(204));
      expect(logged).toHaveBeenCalledTimes(1);
      expect(logged.mock.calls[0]).toEqual([expect.stringContaining('complete failed')]);
    });
  });

  describe('renewing the lease while the route runs', () => {
    it('keeps a route running 3x leaseMs claimed, then settles it', async () => {
      const settle = await claimed();
      for (let at = 0; at < 3 * LEASE_MS; at += LEASE_MS / 4) {
        expect(await stateForARetry()).toBe('in_progress');
        await vi.advanceTimersByTimeAsync(LEASE_MS / 4);
      }
      expect(store.tries.renew.length).toBeGreaterThanOrEqual(8);
      await settle(204);
      expect(await stateForARetry()).toBe('done');
    });

    it('stops renewing once settled', async () => {
      const settle = await claimed();
      await vi.advanceTimersByTimeAsync(LEASE_MS);
      await settle(500);
      const renewals = store.tries.renew.length;
      await vi.advanceTimersByTimeAsync(10 * LEASE_MS);
      expect(store.tries.renew).toHaveLength(renewals);
      expect(await stateForARetry()).toBe('claimed');
    });

    it('retries a failed renewal, so a store that recovers keeps the lease', async () => {
      await claimed();
      store.failures.renew = 4;
      await vi.advanceTimersByTimeAsync(3 * LEASE_MS);
      expect(await stateForARetry()).toBe('in_progress');
      expect(storeErrors).toEqual([]);
    });

    it('gives up on a store that keeps failing before the lease ends, and tells onStoreError once', async () => {
      await claimed();
      store.failures.renew = Number.POSITIVE_INFINITY;
      await vi.advanceTimersByTimeAsync(LEASE_MS - 1);
      expect(await stateForARetry()).toBe('in_progress');
      expect(store.tries.renew.length).toBeGreaterThan(3);
      expect(store.tries.renew.at(-1)! - START).toBeLessThan(LEASE_MS);
      expect(storeErrors).toEqual([new Error('renew failed')]);
      // The lease ran out: a retry takes the event, as it would from a dead process.
      await vi.advanceTimersByTimeAsync(1);
      expect(await stateForARetry()).toBe('claimed');
    });

    it('stops renewing when the store answers that the token no longer holds the lease', async () => {
      await claimed();
      vi.spyOn(store.inner, 'renew').mockResolvedValue(false);
      await vi.advanceTimersByTimeAsync(5 * LEASE_MS);
      expect(store.tries.renew).toHaveLength(1);
      expect(storeErrors).toEqual([]);
    });

    it('lets a route that never ends hold its claim for maxClaimMs, not longer', async () => {
      await claimed({ maxClaimMs: 2_500 });
      await vi.advanceTimersByTimeAsync(2_499);
      expect(await stateForARetry()).toBe('in_progress');
      await vi.advanceTimersByTimeAsync(1);
      expect(await stateForARetry()).toBe('claimed');
      const renewals = store.tries.renew.length;
      await vi.advanceTimersByTimeAsync(10 * LEASE_MS);
      expect(store.tries.renew).toHaveLength(renewals);
    });

    it('holds a claim for ten minutes by default', async () => {
      await claimed({ leaseMs: undefined });
      await vi.advanceTimersByTimeAsync(600_000 - 1);
      expect(await stateForARetry()).toBe('in_progress');
      await vi.advanceTimersByTimeAsync(1);
      expect(await stateForARetry()).toBe('claimed');
    });

    it('holds a claim for leaseMs by default when that is longer than ten minutes', async () => {
      await claimed({ leaseMs: 900_000 });
      await vi.advanceTimersByTimeAsync(900_000 - 1);
      expect(await stateForARetry()).toBe('in_progress');
      expect(store.tries.renew).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      expect(await stateForARetry()).toBe('claimed');
    });
  });
});

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
    const lease: HeldLease = { store, id: 'evt_1', token: 'token-1', leaseMs, claimedAt: Date.now(), maxClaimMs };
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

describe('storeErrorReporter', () => {
  it('hands the error to onStoreError, and resolves only once its promise has', async () => {
    const heard: unknown[] = [];
    let finish!: () => void;
    const report = storeErrorReporter((error, context) => {
      heard.push([error, context]);
      return new Promise<void>((resolve) => (finish = resolve));
    });
    let reported = false;
    const reporting = report(new Error('renew failed'), { operation: 'renew', id: 'evt_1' }).then(() => (reported = true));
    expect(heard).toEqual([[new Error('renew failed'), { operation: 'renew', id: 'evt_1' }]]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(reported).toBe(false);
    finish();
    await reporting;
    expect(reported).toBe(true);
  });

  it('logs nothing when onStoreError succeeds', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    await storeErrorReporter(() => undefined)(new Error('complete failed'), { operation: 'complete', id: 'evt_1' });
    expect(log).not.toHaveBeenCalled();
  });

  it.each(failingBothWays(new Error('pager down')))('logs one line and resolves when onStoreError %s', async (_how, onStoreError) => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    await expect(storeErrorReporter(onStoreError)(new Error('complete failed'), { operation: 'complete', id: 'evt_1' })).resolves.toBe(undefined);
    expect(log.mock.calls).toEqual([['svc-webhooks: onStoreError threw (pager down) on a failed complete']]);
  });
});

describe('renewalDelay', () => {
  it('is a third of the lease, leaving two thirds for retries, for any lease', () => {
    expect([renewalDelay(90), renewalDelay(60_000), renewalDelay(1), renewalDelay(100)]).toEqual([30, 20_000, 1, 34]);
  });
});

describe('storeErrorLog', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_700_000_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const lines = (log: { mock: { calls: unknown[][] } }) => log.mock.calls.map(([line]) => line);

  it('logs one line naming the store error, what it led to, and what to do where the cause is known', () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const missingTable = Object.assign(new Error('relation "processed_webhooks" does not exist'), { code: '42P01' });
    storeErrorLog({})(missingTable, { operation: 'begin', id: 'evt_1' });
    expect(lines(log)).toEqual([
      'svc-webhooks: the dedup store failed to begin event "evt_1" (Error 42P01: relation "processed_webhooks" does not exist); ' +
        'the request was answered 503 and the sender will retry it. ' +
        storeFailureHint(missingTable),
    ]);
    expect(storeFailureHint(missingTable)).toMatch(/migrate\(\)/);
  });

  it.each([
    ['complete', 'may run the handler again'],
    ['release', 'waits for the lease to end'],
    ['renew', 'may run the handler again while it still runs'],
  ] as const)('says what a failed %s leads to', (operation, consequence) => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    storeErrorLog({})(new Error('connection refused'), { operation, id: 'evt_1' });
    expect(lines(log)).toEqual([expect.stringContaining(consequence)]);
  });

  it('writes at most one line per store per interval while it stays down, then counts the failures it left out', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const store = {};
    const first = storeErrorLog(store);
    const second = storeErrorLog(store);
    for (let i = 0; i < 3; i++) first(new Error('down'), { operation: 'begin', id: `evt_${i}` });
    second(new Error('down'), { operation: 'begin', id: 'evt_3' });
    storeErrorLog({})(new Error('other store down'), { operation: 'begin', id: 'evt_4' });
    expect(log).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(STORE_LOG_INTERVAL_MS - 1);
    first(new Error('down'), { operation: 'begin', id: 'evt_5' });
    expect(log).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1);
    first(new Error('down'), { operation: 'begin', id: 'evt_6' });
    expect(log).toHaveBeenCalledTimes(3);
    expect(lines(log)[2]).toMatch(/ \(4 more store failures since the last line\)$/);
    await vi.advanceTimersByTimeAsync(STORE_LOG_INTERVAL_MS);
    first(new Error('down'), { operation: 'begin', id: 'evt_7' });
    expect(lines(log)[3]).not.toMatch(/more store failures/);
  });
});

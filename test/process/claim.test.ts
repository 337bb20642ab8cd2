/**
 * A delivery's claim, through a receiver on a fake clock: the lease renewed
 * while the user's code runs, settlement retried while the store fails
 * until the lease is about to end, and the operator told only then.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryDedupStore, type DedupOptions, type DedupStore } from '../../src/index.js';
import { checkClaimOptions, claimKey, claimSettings, type Settle } from '../../src/process/claim.js';
import { STORE_CHANNEL, type StoreMessage } from '../../src/process/diagnostics.js';
import { createReceiver } from '../../src/receive/receiver.js';
import { verifyAndClaim } from '../helpers/receiver-steps.js';
import { claimedAtOnce } from '../helpers/claimed-at-once.js';
import { deliveryOf, keyOf, now as signedAt, SECRET, signedRequest } from '../helpers/signed-request.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';
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
    complete(id: string, token: string, retentionMs: number) {
      return this.#try('complete', () => this.inner.complete(id, token, retentionMs));
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

  /** Claims evt_1 through a receiver on `store`, with `dedup` over the test's; answers the claim's settle. */
  async function claimed(dedup: DedupOptions = {}): Promise<Settle> {
    const receiver = createReceiver({ secret: SECRET, now: signedAt, dedup: { store, leaseMs: LEASE_MS, onError: (error) => storeErrors.push(error), ...dedup } });
    const { body, headers } = signedRequest();
    const reception = await verifyAndClaim(receiver, body, headers);
    if (reception.action !== 'process' || reception.settle === undefined) throw new Error('expected a claim');
    return reception.settle;
  }

  /** What another delivery of evt_1 would find now. */
  async function stateForARetry(): Promise<string> {
    const result = await store.inner.begin(keyOf('evt_1'), LEASE_MS);
    if (result.state === 'claimed') await store.inner.release(keyOf('evt_1'), result.token);
    return result.state;
  }

  /** Runs the fake clock until `settling` resolves; answers how long that took. */
  async function settledAfter(settling: Promise<void> | undefined): Promise<number> {
    if (settling === undefined) throw new Error('expected a settle that waits on the store');
    const from = Date.now();
    let done = false;
    void settling.then(() => (done = true));
    while (!done) await vi.advanceTimersByTimeAsync(5);
    return Date.now() - from;
  }

  describe('settling a claim while the store fails', () => {
    it.each([
      ['completes once the event was taken', true, 'complete', 'done'],
      ['releases when it was not', false, 'release', 'claimed'],
    ] as const)('%s, once the store recovers from failing three times, and tells dedup.onError nothing', async (_name, taken, op, after) => {
      const settle = await claimed();
      store.failures[op] = 3;
      await settledAfter(settle(taken));
      expect(store.tries[op]).toHaveLength(4);
      expect(storeErrors).toEqual([]);
      expect(await stateForARetry()).toBe(after);
    });

    it('pauses longer after each failure', async () => {
      const settle = await claimed();
      store.failures.complete = 4;
      await settledAfter(settle(true));
      const pauses = store.tries.complete.slice(1).map((at, i) => at - store.tries.complete[i]!);
      expect(pauses).toHaveLength(4);
      for (let i = 1; i < pauses.length; i++) expect(pauses[i]).toBeGreaterThan(pauses[i - 1]!);
    });

    it('gives up shortly before the lease ends, then tells dedup.onError the last error, once', async () => {
      const settle = await claimed();
      store.failures.complete = Number.POSITIVE_INFINITY;
      await settledAfter(settle(true));
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
      await settledAfter(settle(true));
      expect(storeErrors).toEqual([]);
      expect(await stateForARetry()).toBe('done');
    });

    it('settles once, however often settle is called', async () => {
      const settle = await claimed();
      await Promise.all([settle(true), settle(false), settle(true)]);
      expect(store.tries.complete).toHaveLength(1);
      expect(store.tries.release).toEqual([]);
      expect(await stateForARetry()).toBe('done');
    });
  });

  describe('a dedup.onError that fails', () => {
    it.each([
      ['throws', () => {
        throw new Error('callback bug');
      }],
      ['rejects', async () => Promise.reject(new Error('callback bug'))],
      ['throws a value that cannot be printed', () => {
        throw Object.create(null);
      }],
    ])('%s: settle still resolves, and one line is logged', async (_name, onError) => {
      const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
      const settle = await claimed({ onError });
      store.failures.complete = Number.POSITIVE_INFINITY;
      await expect(settledAfter(settle(true))).resolves.toBeGreaterThan(0);
      expect(logged).toHaveBeenCalledTimes(1);
      expect(logged.mock.calls[0]).toEqual([expect.stringMatching(/^svc-webhooks: dedup.onError threw \(.+\)/)]);
    });

    it('is awaited: settle resolves only after an async dedup.onError did', async () => {
      let finished = false;
      const settle = await claimed({
        onError: async () => {
          await new Promise((resolve) => setTimeout(resolve, 500));
          finished = true;
        },
      });
      store.failures.release = Number.POSITIVE_INFINITY;
      await settledAfter(settle(false));
      expect(finished).toBe(true);
    });

    it('defaults to one console line', async () => {
      const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
      const settle = await claimed({ onError: undefined });
      store.failures.complete = Number.POSITIVE_INFINITY;
      await settledAfter(settle(true));
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
      await settle(true);
      expect(await stateForARetry()).toBe('done');
    });

    it('stops renewing once settled', async () => {
      const settle = await claimed();
      await vi.advanceTimersByTimeAsync(LEASE_MS);
      await settle(false);
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

    it('gives up on a store that keeps failing before the lease ends, and tells dedup.onError once', async () => {
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

  describe('on a store that answers at once: MemoryDedupStore', () => {
    /** A receiver on `inner` and the delivery of evt_1 it verified. */
    async function deliveryOn(inner: MemoryDedupStore) {
      const receiver = createReceiver({ secret: SECRET, now: signedAt, dedup: { store: inner, leaseMs: LEASE_MS, onError: (error) => storeErrors.push(error) } });
      const { body, headers } = signedRequest();
      const delivery = await receiver.verify(body, headers, () => undefined);
      if (!('event' in delivery)) throw new Error('expected a verified delivery');
      return { receiver, delivery };
    }

    it('claims and settles with no promise to wait for, and a retry is then answered at once as a duplicate', async () => {
      await claimedAtOnce(new MemoryDedupStore({ now: () => Date.now() }));
    });

    it("calls the store's methods once one is replaced: a subclass's override, or a spy", async () => {
      const begun: string[] = [];
      class Logged extends MemoryDedupStore {
        override begin(id: string, leaseMs: number) {
          begun.push(id);
          return super.begin(id, leaseMs);
        }
      }
      const logged = await deliveryOn(new Logged({ now: () => Date.now() }));
      const claim = logged.receiver.claim(logged.delivery);
      expect(claim).toBeInstanceOf(Promise);
      expect(await (await claim as Settle)(true)).toBeUndefined();
      expect(begun).toEqual([logged.delivery.dedupKey]);

      const inner = new MemoryDedupStore({ now: () => Date.now() });
      const spied = await deliveryOn(inner);
      const complete = vi.spyOn(inner, 'complete');
      const settle = (await spied.receiver.claim(spied.delivery)) as Settle;
      await settle(true);
      expect(complete).toHaveBeenCalledTimes(1);
    });

    it('tells a settle that failed at once on the store channel, then retries it by the store\'s methods, numbering on', async () => {
      let clockFailures = 0;
      const inner = new MemoryDedupStore({
        now: () => {
          if (clockFailures === 0) return Date.now();
          clockFailures -= 1;
          throw new Error('the clock failed');
        },
      });
      const heard: StoreMessage[] = [];
      const listener = (message: unknown) => heard.push(message as StoreMessage);
      subscribe(STORE_CHANNEL, listener);
      try {
        const { receiver, delivery } = await deliveryOn(inner);
        const settle = receiver.claim(delivery) as Settle;
        clockFailures = 2;
        await settledAfter(settle(true));
        const error = new Error('the clock failed');
        expect(heard).toEqual([
          { operation: 'complete', key: delivery.dedupKey, attempt: 1, error },
          { operation: 'complete', key: delivery.dedupKey, attempt: 2, error },
        ]);
        expect(storeErrors).toEqual([]);
        expect(await inner.begin(delivery.dedupKey, LEASE_MS)).toEqual({ state: 'done' });
      } finally {
        unsubscribe(STORE_CHANNEL, listener);
      }
    });
  });

  describe("what dedup.onError is told: the operation, the key, the delivery's id and type, and the tenant when there is one", () => {
    /** Claims the delivery of `evt_<tenant>` for `tenant` on `store`; answers the contexts dedup.onError was given, what names the delivery, and the attempt. */
    function claimOn(tenant: string | undefined) {
      const contexts: unknown[] = [];
      const settings = claimSettings(store, checkClaimOptions({ leaseMs: LEASE_MS }, LEASE_MS), async (_error, context) => void contexts.push(context));
      const delivery = deliveryOf({ id: `evt_${tenant}`, type: 'message.received', tenant });
      const named = { key: delivery.dedupKey, id: delivery.id, type: 'message.received' };
      return { contexts, named, attempt: claimKey(settings, delivery) };
    }

    it.each([
      ['complete', true],
      ['release', false],
    ] as const)('names %s, with and without a tenant', async (operation, taken) => {
      store.failures[operation] = Number.POSITIVE_INFINITY;
      for (const tenant of ['acme', undefined]) {
        const { contexts, named, attempt } = claimOn(tenant);
        const claimed = await attempt;
        if (claimed.state !== 'claimed') throw new Error('expected a claim');
        await settledAfter(claimed.settle(taken));
        expect(contexts).toStrictEqual([tenant === undefined ? { operation, ...named } : { operation, ...named, tenant }]);
      }
    });

    it('names begin, with and without a tenant, and a begin that answered no known state', async () => {
      store.begin = () => Promise.resolve({ state: 'claimed' } as never);
      for (const tenant of ['acme', undefined]) {
        const { contexts, named, attempt } = claimOn(tenant);
        const answer = await attempt;
        expect(answer).toEqual({ state: 'unavailable', error: new WebhookOptionsError("svc-webhooks: the dedup store's begin answered no known state") });
        expect(contexts).toStrictEqual([tenant === undefined ? { operation: 'begin', ...named } : { operation: 'begin', ...named, tenant }]);
      }
    });
  });
});

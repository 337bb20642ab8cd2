/**
 * A claim from `begin` to its settlement, on a fake clock: renewal while
 * the route runs, bounded by maxClaimMs; settlement retried while the store
 * fails, until the lease is about to end; onStoreError told only then, and
 * unable to change anything by throwing.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createReceiver, MemoryDedupStore, type DedupStore, type ReceiverOptions } from '../../src/index.js';
import { now as signedAt, SECRET, signedRequest } from '../helpers/signed-request.js';

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
  const reception = await receiver.receive(body, headers);
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

/**
 * How an adapter holds and settles a dedup claim over a real connection: a
 * route that outlives its lease keeps its claim, the response never waits
 * for the store, and a store or a dedup.onError that fails after the route
 * answered changes neither the answer nor the process.
 */
import { expect, it, vi } from 'vitest';
import { MemoryDedupStore, type DedupStore } from '../../src/index.js';
import type { BuildHarness } from './adapter-contract.js';
import { RouteSpy } from './adapter-contract.js';
import { now, SECRET, signedRequest } from './signed-request.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A MemoryDedupStore whose `complete` can be held back, or made to fail. */
class GatedStore implements DedupStore {
  readonly inner = new MemoryDedupStore();
  /** While set, `complete` waits for it first. */
  gate: Promise<void> | undefined;
  /** When true, `complete` rejects. */
  failing = false;
  completeCalls = 0;

  begin(key: string, leaseMs: number) {
    return this.inner.begin(key, leaseMs);
  }
  async complete(key: string, token: string, retentionMs: number) {
    this.completeCalls += 1;
    await this.gate;
    if (this.failing) throw new Error('the store is down');
    return this.inner.complete(key, token, retentionMs);
  }
  release(key: string, token: string) {
    return this.inner.release(key, token);
  }
  renew(key: string, token: string, leaseMs: number) {
    return this.inner.renew(key, token, leaseMs);
  }
}

async function withStore(build: BuildHarness, dedup: object, route: RouteSpy, run: (post: () => Promise<Response>, store: GatedStore) => Promise<void>) {
  const store = new GatedStore();
  const harness = await build({ options: { secret: SECRET, now, dedup: { store, ...dedup } }, route });
  try {
    await run(() => harness.post(signedRequest()), store);
  } finally {
    await harness.close();
    store.inner.close();
  }
}

export function settleContract(build: BuildHarness): void {
  it('keeps the claim of a route that runs 3x leaseMs: every retry meanwhile gets 409, and the route runs once', async () => {
    // Long enough that a busy machine's pauses do not outlast the two thirds of a lease left for renewing.
    const leaseMs = 500;
    const route = new RouteSpy();
    await withStore(build, { leaseMs }, route, async (post) => {
      let endRoute!: () => void;
      route.hold = new Promise((resolve) => (endRoute = resolve));
      const first = post();
      await expect.poll(() => route.calls.length).toBe(1);
      const startedAt = Date.now();
      try {
        // The route runs until three leases have passed and a few retries were refused.
        for (let retries = 0; Date.now() - startedAt < 3 * leaseMs || retries < 5; retries++) {
          expect((await post()).status).toBe(409);
          await sleep(leaseMs / 5);
        }
      } finally {
        endRoute();
      }
      expect((await first).status).toBe(204);
      await expect.poll(async () => (await post()).status).toBe(200);
      expect(route.calls).toHaveLength(1);
    });
  }, 15_000);

  it('answers before the claim is settled: the response does not wait for the store', async () => {
    const route = new RouteSpy();
    await withStore(build, {}, route, async (post, store) => {
      let open!: () => void;
      let opened = false;
      store.gate = new Promise((resolve) => (open = resolve));
      // If the adapter waited for the store, the response would come only after this.
      const fallback = setTimeout(() => {
        opened = true;
        open();
      }, 8_000);
      try {
        expect((await post()).status).toBe(204);
        expect(opened).toBe(false);
        expect(store.completeCalls).toBe(1);
      } finally {
        clearTimeout(fallback);
        open();
      }
      await expect.poll(async () => (await post()).status).toBe(200);
    });
  }, 15_000);

  it.each([
    ['throws', () => {
      throw new Error('callback bug');
    }],
    ['rejects', () => Promise.reject(new Error('callback bug'))],
  ])('keeps the 2xx and the process when the store fails after the route and dedup.onError %s', async (_name, failing) => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    const onStoreFailure = vi.fn(failing);
    const route = new RouteSpy();
    try {
      await withStore(build, { leaseMs: 100, onError: onStoreFailure }, route, async (post, store) => {
        store.failing = true;
        expect((await post()).status).toBe(204);
        await expect.poll(() => onStoreFailure.mock.calls.length, { timeout: 5_000 }).toBe(1);
        expect(store.completeCalls).toBeGreaterThan(1);
        await expect.poll(() => logged.mock.calls.length, { timeout: 5_000 }).toBe(1);
        expect(logged.mock.calls[0]).toEqual([expect.stringContaining('dedup.onError threw (callback bug)')]);
        // Still serving; and the claim that could not be completed was left to its lease, so the retry runs the route.
        store.failing = false;
        await expect.poll(async () => (await post()).status, { timeout: 5_000 }).toBe(204);
        expect(route.calls).toHaveLength(2);
      });
    } finally {
      logged.mockRestore();
    }
  }, 15_000);
}

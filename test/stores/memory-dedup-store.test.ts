import { verifyAndClaim } from '../helpers/receiver-steps.js';
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createReceiver } from '../../src/receive/receiver.js';
import { MemoryDedupStore, type MemoryDedupStoreOptions } from '../../src/stores/memory-dedup-store.js';
import { claim, describeDedupContract, manualClock } from '../helpers/dedup-store-contract.js';
import { claimInOrder, describeOrderingContract } from '../helpers/ordering-store-contract.js';
import { now as signedAt, SECRET, signedRequest } from '../helpers/signed-request.js';

const open: MemoryDedupStore[] = [];
afterEach(() => {
  for (const store of open.splice(0)) store.close();
});

/** A store on a clock the test moves by hand. */
function manualStore(options: MemoryDedupStoreOptions = {}): { store: MemoryDedupStore; advance(ms: number): Promise<void> } {
  const { now, advance } = manualClock();
  const store = new MemoryDedupStore({ ...options, now });
  open.push(store);
  return { store, advance };
}

describeDedupContract('MemoryDedupStore', async () => manualStore());
describeOrderingContract('MemoryDedupStore', async () => manualStore());

describe('MemoryDedupStore: bounded memory of objects', () => {
  it('forgets the oldest object without a live lease when full, and refuses when every object is leased', async () => {
    const { store } = manualStore({ maxEntries: 2 });
    const first = await claimInOrder(store, 'evt_1', { key: 's:a', version: 5 });
    await store.completeInOrder('evt_1', { key: 's:a', version: 5 }, first.token, 60_000);
    await claimInOrder(store, 'evt_2', { key: 's:b', version: 1 });
    // 'a' is forgotten for 'c': a retry of an older event of 'a' is no longer told stale.
    const third = await claimInOrder(store, 'evt_3', { key: 's:c', version: 1 });
    expect(third.stale).toBe(false);
    await expect(store.beginInOrder('evt_4', { key: 's:d', version: 1 }, 60_000)).rejects.toMatchObject({ code: 'dedup_unavailable' });
  });

  it('sweeps an object whose lease ran out and whose version expired, and keeps one whose version lives', async () => {
    const { store, advance } = manualStore({ maxEntries: 10, sweepIntervalMs: 1000 });
    const kept = await claimInOrder(store, 'evt_1', { key: 's:kept', version: 5 });
    await store.completeInOrder('evt_1', { key: 's:kept', version: 5 }, kept.token, 10_000);
    const gone = await claimInOrder(store, 'evt_2', { key: 's:gone', version: 5 });
    await store.completeInOrder('evt_2', { key: 's:gone', version: 5 }, gone.token, 2_000);
    await advance(5_000);
    await store.begin('evt_sweep', 60_000);
    expect((await claimInOrder(store, 'evt_3', { key: 's:kept', version: 4 })).stale).toBe(true);
    expect((await claimInOrder(store, 'evt_4', { key: 's:gone', version: 4 })).stale).toBe(false);
  });
});

describe('MemoryDedupStore: bounded memory', () => {
  it('forgets the oldest done id first when full', async () => {
    const { store } = manualStore({ maxEntries: 3 });
    for (const id of ['a', 'b', 'c']) await store.complete(id, await claim(store, id), 60_000);
    expect(store.size).toBe(3);
    await claim(store, 'd');
    expect(store.size).toBe(3);
    expect(await store.begin('b', 60_000)).toEqual({ state: 'done' });
    expect(await store.begin('c', 60_000)).toEqual({ state: 'done' });
    // 'a' was forgotten; claiming it again evicts 'b', the next oldest done id.
    expect((await store.begin('a', 60_000)).state).toBe('claimed');
    expect((await store.begin('b', 60_000)).state).toBe('claimed');
  });

  it('keeps forgetting done ids in the order they were completed through many evictions, releases and renewals', async () => {
    const { store } = manualStore({ maxEntries: 100 });
    const live = await claim(store, 'live');
    let completed = 0;
    for (let round = 0; round < 30; round++) {
      // A released claim and a renewal leave stale entries behind; neither changes the order.
      await store.release('gone', await claim(store, 'gone'));
      expect(await store.renew('live', live, 60_000)).toBe(true);
      for (let i = 0; i < 50; i++) {
        const id = `done_${completed++}`;
        await store.complete(id, await claim(store, id), 60_000);
      }
    }
    expect(store.size).toBe(100);
    expect(await store.begin('live', 60_000)).toEqual({ state: 'in_progress' });
    // The 99 done ids held are the last 99 completed.
    expect(await store.begin(`done_${completed - 99}`, 60_000)).toEqual({ state: 'done' });
    expect(await store.begin(`done_${completed - 1}`, 60_000)).toEqual({ state: 'done' });
    expect((await store.begin(`done_${completed - 100}`, 60_000)).state).toBe('claimed');
  });

  it('evicts a done id rather than a live lease', async () => {
    const { store } = manualStore({ maxEntries: 3 });
    await claim(store, 'x');
    await store.complete('a', await claim(store, 'a'), 60_000);
    await claim(store, 'y');
    await claim(store, 'z');
    expect(store.size).toBe(3);
    for (const id of ['x', 'y', 'z']) expect(await store.begin(id, 60_000)).toEqual({ state: 'in_progress' });
  });

  it('refuses a claim with dedup_unavailable when full of live leases, and recovers as leases end', async () => {
    const { store, advance } = manualStore({ maxEntries: 2 });
    const x = await claim(store, 'x', 1_000);
    await claim(store, 'y', 5_000);
    await expect(store.begin('z', 1_000)).rejects.toMatchObject({ code: 'dedup_unavailable', status: 503 });
    expect(await store.begin('x', 1_000)).toEqual({ state: 'in_progress' });
    expect(await store.complete('x', x, 60_000)).toBe(true);
    expect((await store.begin('z', 60_000)).state).toBe('claimed');
    await expect(store.begin('w', 1_000)).rejects.toMatchObject({ code: 'dedup_unavailable' });
    // The oldest lease ('y') running out frees its slot without touching 'z'.
    await advance(5_000);
    expect((await store.begin('w', 1_000)).state).toBe('claimed');
    expect(await store.begin('z', 1_000)).toEqual({ state: 'in_progress' });
  });

  it('takes the slot of a lease that ran out, past an older lease renewed since', async () => {
    const { store, advance } = manualStore({ maxEntries: 2 });
    const renewed = await claim(store, 'renewed', 100);
    await claim(store, 'lapsed', 100);
    await advance(50);
    expect(await store.renew('renewed', renewed, 100)).toBe(true);
    await advance(70);
    // 'lapsed' ran out at 100 ms; 'renewed', claimed first, lives until 150 ms.
    expect((await store.begin('new', 1_000)).state).toBe('claimed');
    expect(await store.begin('renewed', 1_000)).toEqual({ state: 'in_progress' });
  });

  it('makes the receiver answer 503 when full of live leases', async () => {
    const { store } = manualStore({ maxEntries: 1 });
    await claim(store, 'evt_busy');
    const receiver = createReceiver({ secret: SECRET, now: signedAt, dedup: { store: store } });
    const { body, headers } = signedRequest({ id: 'evt_new' });
    const reception = await verifyAndClaim(receiver, body, headers);
    expect(reception.action === 'respond' && reception.response.status).toBe(503);
  });
});

describe('MemoryDedupStore: sweep', () => {
  it('drops expired ids at the first begin once sweepIntervalMs has passed', async () => {
    const { store, advance } = manualStore({ sweepIntervalMs: 5_000 });
    await claim(store, 'leased', 1_000);
    await store.complete('done', await claim(store, 'done'), 1_000);
    await claim(store, 'live', 60_000);
    await advance(1_000);
    await claim(store, 'early');
    // Both have expired, but the last sweep was less than sweepIntervalMs ago.
    expect(store.size).toBe(4);
    await advance(4_000);
    await claim(store, 'late');
    expect(store.size).toBe(3);
    expect(await store.begin('live', 1_000)).toEqual({ state: 'in_progress' });
  });

  it('starts no timer, so that it may be created at module scope (a Worker refuses timers there)', async () => {
    const timers = [vi.spyOn(globalThis, 'setInterval'), vi.spyOn(globalThis, 'setTimeout')];
    try {
      const { store } = manualStore({ sweepIntervalMs: 5 });
      await claim(store, 'evt_1');
      for (const timer of timers) expect(timer).not.toHaveBeenCalled();
    } finally {
      for (const timer of timers) timer.mockRestore();
    }
  });

  it('does not keep the process alive', async () => {
    const script = [
      "import { MemoryDedupStore } from './src/stores/memory-dedup-store.ts';",
      'const store = new MemoryDedupStore({ sweepIntervalMs: 10 });',
      "await store.begin('evt_1', 60000);",
    ].join('\n');
    const { code, signal } = await runNode(['--import', 'tsx', '--input-type=module', '-e', script], 10_000);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
  }, 15_000);
});

describe('MemoryDedupStore: options', () => {
  it('throws a TypeError on bad options', () => {
    for (const bad of [{ maxEntries: 0 }, { maxEntries: 1.5 }, { sweepIntervalMs: 0 }, { sweepIntervalMs: 2 ** 31 }, { now: 5 }]) {
      expect(() => new MemoryDedupStore(bad as MemoryDedupStoreOptions)).toThrow(TypeError);
    }
    expect(() => new MemoryDedupStore(null as unknown as MemoryDedupStoreOptions)).toThrow(TypeError);
  });

  it('leaves the caller options untouched', () => {
    // Frozen: any write to them would throw here.
    const options = Object.freeze({ maxEntries: 10 });
    expect(() => new MemoryDedupStore(options).close()).not.toThrow();
  });
});

/** Runs node in the package root; kills it if it outlives `timeoutMs`, which then shows as a signal. */
function runNode(args: string[], timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: 'inherit', timeout: timeoutMs });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
}

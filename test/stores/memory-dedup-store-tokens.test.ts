/**
 * MemoryDedupStore's lease tokens: unique within a store and between stores,
 * from one random draw per store, made at its first claim (a Worker refuses
 * random values at global scope, where the store may be created), never one
 * per claim.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryDedupStore } from '../../src/stores/memory-dedup-store.js';
import { claim } from '../helpers/dedup-store-contract.js';

// Web Crypto's, which every runtime has: the store imports no node:crypto, so it loads where that is missing.
const getRandomValues = vi.spyOn(globalThis.crypto, 'getRandomValues');
const randomUUID = vi.spyOn(globalThis.crypto, 'randomUUID');

afterEach(() => {
  getRandomValues.mockClear();
  randomUUID.mockClear();
});

describe('MemoryDedupStore tokens', () => {
  it('draws no random value when created, one at the first claim, and none for later claims', async () => {
    const store = new MemoryDedupStore();
    expect(getRandomValues).not.toHaveBeenCalled();
    await claim(store, 'evt_0');
    expect(getRandomValues).toHaveBeenCalledTimes(1);
    expect(getRandomValues.mock.calls[0]![0]).toHaveLength(16);
    for (let i = 1; i < 100; i++) await claim(store, `evt_${i}`);
    expect(getRandomValues).toHaveBeenCalledTimes(1);
    expect(randomUUID).not.toHaveBeenCalled();
  });

  it('gives every claim of a store a token of its own, also for the same id claimed again', async () => {
    const store = new MemoryDedupStore();
    const tokens = new Set<string>();
    for (let i = 0; i < 1_000; i++) tokens.add(await claim(store, `evt_${i}`));
    for (let i = 0; i < 100; i++) {
      const token = await claim(store, 'evt_again');
      tokens.add(token);
      await store.release('evt_again', token);
    }
    expect(tokens.size).toBe(1_100);
  });

  it('never lets the token of one store act on another store holding the same id', async () => {
    const first = new MemoryDedupStore();
    const second = new MemoryDedupStore();
    const firstToken = await claim(first, 'evt_1');
    const secondToken = await claim(second, 'evt_1');
    expect(firstToken).not.toBe(secondToken);
    expect(await second.complete('evt_1', firstToken, 60_000)).toBe(false);
    expect(await second.renew('evt_1', firstToken, 60_000)).toBe(false);
    expect(await second.release('evt_1', firstToken)).toBe(false);
    expect(await second.complete('evt_1', secondToken, 60_000)).toBe(true);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { MemoryDedupStore, type MemoryDedupStoreOptions } from '../../src/memory-dedup-store.js';
import { claim, describeDedupContract } from './contract.js';

const open: MemoryDedupStore[] = [];
afterEach(() => {
  for (const store of open.splice(0)) store.close();
});

/** A store on a clock the test moves by hand. */
function manualStore(options: MemoryDedupStoreOptions = {}): { store: MemoryDedupStore; advance(ms: number): Promise<void> } {
  let now = 1_700_000_000_000;
  const store = new MemoryDedupStore({ ...options, now: () => now });
  open.push(store);
  return {
    store,
    advance: async (ms) => {
      now += ms;
    },
  };
}

describeDedupContract('MemoryDedupStore', async () => manualStore());

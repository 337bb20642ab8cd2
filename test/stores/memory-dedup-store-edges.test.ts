/** MemoryDedupStore: what its TypeErrors name, and what a sweep keeps. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryDedupStore } from '../../src/stores/memory-dedup-store.js';
import { claim } from '../helpers/dedup-store-contract.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

const open: MemoryDedupStore[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const store of open.splice(0)) store.close();
});

function store(options?: ConstructorParameters<typeof MemoryDedupStore>[0]): MemoryDedupStore {
  const created = new MemoryDedupStore(options);
  open.push(created);
  return created;
}

describe('MemoryDedupStore option checks', () => {
  it.each([
    ['null options', null, 'MemoryDedupStore options must be an object'],
    ['options that are a string', 'small', 'MemoryDedupStore options must be an object'],
    ['a zero maxEntries', { maxEntries: 0 }, 'maxEntries must be a positive integer'],
    ['a zero sweep interval', { sweepIntervalMs: 0 }, 'sweepIntervalMs must be a whole number of milliseconds from 1 to 2147483647'],
    ['a clock that is no function', { now: 1 }, 'now must be a function'],
  ])('refuses %s, naming it', (_name, options, says) => {
    expect(() => store(options as never)).toThrow(new WebhookOptionsError(`svc-webhooks: ${says}`));
  });

  it('refuses a zero lease, renewal or retention, naming it', async () => {
    const memory = store();
    await expect(memory.begin('evt_1', 0)).rejects.toThrow(new WebhookOptionsError('svc-webhooks: leaseMs must be a whole number of milliseconds from 1 to 9007199254740991'));
    const token = await claim(memory, 'evt_1');
    await expect(memory.complete('evt_1', token, 0)).rejects.toThrow(
      new WebhookOptionsError('svc-webhooks: retentionMs must be a whole number of milliseconds from 1 to 9007199254740991'),
    );
    await expect(memory.renew('evt_1', token, 0)).rejects.toThrow(
      new WebhookOptionsError('svc-webhooks: leaseMs must be a whole number of milliseconds from 1 to 9007199254740991'),
    );
  });

  it('says why it refuses a claim when full of live leases', async () => {
    const memory = store({ maxEntries: 1 });
    await claim(memory, 'evt_1');
    await expect(memory.begin('evt_2', 1_000)).rejects.toThrow('the memory dedup store is full of live leases; retry later');
  });
});

describe('MemoryDedupStore expiry', () => {
  it('ends a lease and a done id at exactly their end', async () => {
    let now = 1_700_000_000_000;
    const memory = store({ now: () => now });
    const token = await claim(memory, 'leased', 1_000);
    await memory.complete('done', await claim(memory, 'done'), 1_000);
    now += 999;
    expect(await memory.begin('leased', 1_000)).toEqual({ state: 'in_progress' });
    expect(await memory.begin('done', 1_000)).toEqual({ state: 'done' });
    now += 1;
    // The lease ran out: its token completes nothing, and the id is claimable again.
    expect(await memory.complete('leased', token, 60_000)).toBe(false);
    expect((await memory.begin('leased', 1_000)).state).toBe('claimed');
    expect((await memory.begin('done', 1_000)).state).toBe('claimed');
  });
});

describe('MemoryDedupStore sweep', () => {
  it('keeps done ids and leases that have not expired', async () => {
    let now = 1_700_000_000_000;
    const memory = store({ sweepIntervalMs: 5, now: () => now });
    await memory.complete('expired', await claim(memory, 'expired'), 1_000);
    await memory.complete('kept', await claim(memory, 'kept'), 60_000);
    await claim(memory, 'leased', 60_000);
    now += 1_000;
    // The sweep runs on use: this claim triggers it.
    await claim(memory, 'trigger', 60_000);
    expect(memory.size).toBe(3);
    expect(await memory.begin('kept', 1_000)).toEqual({ state: 'done' });
    expect(await memory.begin('leased', 1_000)).toEqual({ state: 'in_progress' });
  });
});

describe('MemoryDedupStore failures', () => {
  it('rejects, never throws, when its clock throws', async () => {
    let broken = false;
    const memory = store({
      now: () => {
        if (broken) throw new Error('clock unavailable');
        return 1_700_000_000_000;
      },
    });
    const token = await claim(memory, 'evt_1');
    broken = true;
    const answers = [memory.begin('evt_2', 1_000), memory.complete('evt_1', token, 1_000), memory.release('evt_1', token), memory.renew('evt_1', token, 1_000)];
    for (const answer of answers) await expect(answer).rejects.toThrow('clock unavailable');
  });
});

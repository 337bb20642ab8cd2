/**
 * Renewal lives in the process that holds the lease: while it runs, a
 * claim outlives many leases; once it dies, its lease runs out within
 * leaseMs and a retry takes the event. Checked with a real process on Redis,
 * killed with SIGKILL.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisDedupStore } from '../../src/stores/redis/index.js';
import { keyOf } from '../helpers/signed-request.js';
import { connectIoredis, randomPrefix, redisUrl } from '../helpers/redis-clients.js';

const LEASE_MS = 1_000;
/** Time for Redis to expire a key and for the process to be gone, over the lease. */
const MARGIN_MS = 300;

let client: Redis;
beforeAll(async () => {
  client = await connectIoredis(redisUrl());
});
afterAll(() => client?.disconnect());

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('a lease held by a process', () => {
  it('is renewed while the process lives, and runs out within leaseMs once it is killed', async () => {
    const keyPrefix = randomPrefix();
    const store = new RedisDedupStore(client, { keyPrefix });
    const holder = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/lease-holder-process.ts', redisUrl(), keyPrefix, String(LEASE_MS)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const [line] = (await once(createInterface({ input: holder.stdout! }), 'line')) as [string];
      expect(line).toBe('claimed');
      const deadline = Date.now() + 3 * LEASE_MS;
      while (Date.now() < deadline) {
        expect(await store.begin(keyOf('evt_1'), LEASE_MS)).toEqual({ state: 'in_progress' });
        await sleep(LEASE_MS / 4);
      }
    } finally {
      holder.kill('SIGKILL');
      await once(holder, 'exit');
    }
    await sleep(LEASE_MS + MARGIN_MS);
    expect((await store.begin(keyOf('evt_1'), LEASE_MS)).state).toBe('claimed');
  }, 20_000);
});

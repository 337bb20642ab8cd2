/**
 * Exactly once under load: a sender delivers thousands of events, 35% of
 * them as two copies sent at the same moment, to receivers whose handlers fail
 * at random, and retries every copy on its own until it gets a 2xx. Each
 * event's side effect must happen once: never twice, never lost.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { MemoryDedupStore } from '../../src/stores/memory-dedup-store.js';
import { randomPrefix, redisUrl } from '../helpers/redis-clients.js';
import { buildDeliveries, closeAfterAll, duplicatedCount, expectEachProcessedOnce, report } from '../helpers/load/load-run.js';
import { startReceiverInstance } from '../helpers/load/receiver-instance.js';
import { startReceiversOnRedis } from '../helpers/load/receivers-on-redis.js';
import { deliverAll, type SenderCounts, type SenderOptions } from '../helpers/load/retrying-sender.js';
import { replayableSeed } from '../helpers/load/seeded-random.js';
import { SideEffectLedger } from '../helpers/load/side-effect-ledger.js';

const EVENTS = 2000;
const DUPLICATE_SHARE = 0.35;
/** Longer than any handler run here, short enough that an orphaned lease is not waited on long. */
const LEASE_MS = 2000;
const SENDER: SenderOptions = {
  workers: 32,
  maxAttempts: 200,
  msPerRetryAfterSecond: 5,
  backoffMs: 2,
  // The service's own: no handler here comes near it.
  answerWindowMs: 10_000,
};

const closeAtEnd = closeAfterAll();

/** Sends the run, then checks every event was processed once and each path was taken. */
async function runAndCheck(scenario: string, seed: number, receivers: readonly string[], ledger: SideEffectLedger): Promise<SenderCounts> {
  const deliveries = buildDeliveries(seed, EVENTS, DUPLICATE_SHARE, receivers);
  const started = performance.now();
  const counts = await deliverAll(deliveries, SENDER);
  report(scenario, deliveries, counts, ledger, performance.now() - started);

  expectEachProcessedOnce(deliveries, ledger);
  // The one processing of each event answered 204 to one copy; the other copy of a duplicated event ended on "done".
  expect(counts.processed).toBe(EVENTS);
  expect(counts.doneAnswers).toBe(duplicatedCount(deliveries));
  expect(counts.inProgress).toBeGreaterThan(0);
  expect(counts.handlerFailures).toBe(ledger.handlerFailures);
  expect(ledger.handlerFailures / ledger.handlerCalls).toBeGreaterThanOrEqual(0.1);
  return counts;
}

describe('exactly once under load', () => {
  it(`Express, Hono and Fastify instances sharing one Redis, ${EVENTS} events`, async () => {
    const seed = replayableSeed();
    const url = redisUrl();
    const keyPrefix = randomPrefix();
    const ledger = new SideEffectLedger();
    const instance = { ledger, seed, leaseMs: LEASE_MS };
    const receivers = await startReceiversOnRedis(url, { store: { keyPrefix }, instance }, closeAtEnd);

    const counts = await runAndCheck('three instances on Redis', seed, receivers, ledger);
    expect(counts.unavailable).toBe(0);
  }, 120_000);

  it(`one Express instance on MemoryDedupStore, ${EVENTS} events`, async () => {
    const seed = replayableSeed();
    const ledger = new SideEffectLedger();
    const store = new MemoryDedupStore();
    closeAtEnd(() => store.close());
    const instance = await startReceiverInstance({ dedup: store, ledger, seed, leaseMs: LEASE_MS });
    closeAtEnd(() => instance.close());

    const counts = await runAndCheck('one instance on MemoryDedupStore', seed, [instance.url], ledger);
    expect(counts.unavailable).toBe(0);
  }, 120_000);
});

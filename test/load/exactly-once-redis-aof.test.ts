/**
 * Exactly once across a Redis crash: the receivers' Redis keeps an
 * append-only file fsync'd on every write, is killed with SIGKILL mid-run
 * and restarted from that file. Every copy of every event is retried on its
 * own until it gets a 2xx, as the service does, so a claim that was not
 * completed, or a done mark that was lost, would show as an event processed
 * twice. Settlements and renewals that fail during the outage are retried
 * until their lease is about to end, and the outage is shorter than a lease:
 * every event must be processed exactly once.
 */
import { describe, expect, it } from 'vitest';
import { closeAfterAll, expectEachProcessedOnce } from '../helpers/load/load-run.js';
import { EVENTS, runWithRedisKilled } from '../helpers/load/redis-fault-run.js';

const closeAtEnd = closeAfterAll();

describe('exactly once across a Redis crash, with an append-only file', () => {
  it(`loses no event and processes none twice when Redis is killed and restarted from its file, ${EVENTS} events`, async () => {
    const run = await runWithRedisKilled('three receivers on AOF Redis, killed and restarted', true, closeAtEnd);

    expectEachProcessedOnce(run.deliveries, run.ledger);
    // The outage fell mid-run: claims were refused meanwhile, and settlements failed and were retried.
    expect(run.processedBeforeKill).toBeLessThan(EVENTS);
    expect(run.counts.unavailable).toBeGreaterThan(0);
    expect(run.storeFailures.complete + run.storeFailures.release).toBeGreaterThan(0);
  }, 120_000);
});

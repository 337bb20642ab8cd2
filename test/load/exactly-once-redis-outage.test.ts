/**
 * The documented limit: a Redis without persistence, killed mid-run and
 * started again empty. It has forgotten every id marked done and every
 * lease held before the kill, and the sender, like the service, retries
 * each copy until it gets its own 2xx: so an event whose handler ran before
 * the restart may run once more after it. Nothing may be lost, and nothing
 * else may run twice: only an event whose handler was first called before
 * the restart, and at most twice.
 */
import { describe, expect, it } from 'vitest';
import { closeAfterAll } from '../helpers/load/load-run.js';
import { EVENTS, runWithRedisKilled } from '../helpers/load/redis-fault-run.js';

const closeAtEnd = closeAfterAll();

describe('a Redis outage without persistence', () => {
  it(`loses no event, and runs twice only events first handled before the empty restart, ${EVENTS} events`, async () => {
    const run = await runWithRedisKilled('three receivers on Redis without persistence, killed and restarted empty', false, closeAtEnd);
    const { deliveries, ledger, restartedAt } = run;

    const twice = deliveries.filter(({ id }) => ledger.timesProcessed(id) > 1);
    console.info(`empty restart: ${twice.length} of ${deliveries.length} events processed twice`);
    expect(deliveries.filter(({ id }) => ledger.timesProcessed(id) === 0)).toEqual([]);
    expect(twice.filter(({ id }) => ledger.timesProcessed(id) > 2)).toEqual([]);
    expect(twice.filter(({ id }) => ledger.firstCallAt(id)! >= restartedAt)).toEqual([]);
    expect(run.processedBeforeKill).toBeLessThan(EVENTS);
    expect(run.counts.unavailable).toBeGreaterThan(0);
  }, 120_000);
});

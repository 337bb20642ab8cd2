/**
 * pg-boss across a database crash: the receivers, the queue and the worker
 * processes run on a private Postgres, which is killed with SIGKILL, every
 * backend with it, while the sender delivers, and started again on the same
 * data directory. Meanwhile enqueue answers 503 and the sender retries each
 * copy; handlers fail, and their workers may die with them (they are started
 * again). An enqueue transaction cut off by the crash is rolled back in
 * recovery, its record with its job; a committed one survives with both. So
 * no event may be lost, none queued twice, and no side effect doubled.
 *
 * CI size by default (600 events, handlers of 1 s); LOAD_SIZE=full
 * runs 2,000.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { buildDeliveries, closeAfterAll, duplicatedCount, expectEachProcessedOnce, midRun } from '../../helpers/load/load-run.js';
import { uniqueApplicationName } from '../../helpers/load/postgres-receivers.js';
import { deliverAll } from '../../helpers/load/retrying-sender.js';
import { replayableSeed } from '../../helpers/load/seeded-random.js';
import { startPgBossRun } from '../../helpers/pg-boss-load-run.js';
import { quantile } from '../../helpers/load/quantile.js';
import { PG_BOSS_MAJORS } from '../../helpers/pg-boss-majors.js';
import { PrivatePostgres } from '../../helpers/private-postgres.js';
import { FULL_SIZE } from '../../helpers/load/load-size.js';

const FULL = FULL_SIZE;
const EVENTS = FULL ? 2000 : 600;
const OUTAGE_MS = 1000;

const closeAtEnd = closeAfterAll();

describe('pg-boss: exactly once across a Postgres crash', () => {
  it.each(PG_BOSS_MAJORS)(`${EVENTS} events on $name, Postgres killed with SIGKILL mid-run and restarted`, async (major) => {
    const seed = replayableSeed();
    const server = await PrivatePostgres.start();
    closeAtEnd(() => server.destroy());
    const run = await startPgBossRun({
      major,
      url: server.url,
      applicationName: uniqueApplicationName(),
      workers: 2,
      batchSize: 50,
      handlerMs: 1000,
      expireInSeconds: 5,
    });
    closeAtEnd(() => run.close());

    const deliveries = buildDeliveries(seed, EVENTS, 0.35, run.urls);
    const started = performance.now();
    const sending = deliverAll(deliveries, { workers: 32, maxAttempts: 400, msPerRetryAfterSecond: 5, backoffMs: 5, answerWindowMs: 10_000 });
    await midRun(sending, () => run.answerMs.length >= EVENTS / 3);
    const answersAtCrash = run.answerMs.length;
    await server.kill();
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    await server.start();
    const counts = await sending;
    const states = await run.drained(FULL ? 300_000 : 120_000);

    const rows = await run.rows();
    const jobsPerEvent = await run.jobsPerEvent();
    const executions = await run.executions();
    const lost = deliveries.filter(({ id }) => rows.timesProcessed(id) === 0).length;
    const doubled = deliveries.filter(({ id }) => rows.timesProcessed(id) > 1).length;
    const queuedTwice = deliveries.filter(({ id }) => (jobsPerEvent.get(id) ?? 0) > 1).length;
    console.info(
      `${major.name} crash: SIGKILL after ${answersAtCrash} answers, restarted ${OUTAGE_MS} ms later; ${EVENTS} events ` +
        `(${duplicatedCount(deliveries)} as two copies), ${counts.requests} requests: ${counts.processed} queued (202), ` +
        `${counts.doneAnswers} duplicates (200), ${counts.unavailable} unavailable (503), ${counts.late} not answered within 10 s; ` +
        `answer p99 ${quantile(run.answerMs, 0.99).toFixed(1)} ms, max ${Math.max(...run.answerMs).toFixed(1)} ms. ` +
        `Workers ended by themselves: ${run.fleet.exits}. Drained after ${Math.round(performance.now() - started)} ms: ${JSON.stringify(states)}; ` +
        `${executions} handler executions; side effects: ${lost} lost, ${doubled} doubled; ${queuedTwice} events queued twice`,
    );

    expect(counts.processed + counts.doneAnswers).toBe(EVENTS + duplicatedCount(deliveries));
    expect(counts.late).toBe(0);
    expect(queuedTwice).toBe(0);
    expect(jobsPerEvent.size).toBe(EVENTS);
    expect(states).toEqual({ completed: EVENTS });
    expectEachProcessedOnce(deliveries, rows);
    // The crash fell mid-run, and failed requests of its own.
    expect(answersAtCrash).toBeLessThan(run.answerMs.length);
    expect(counts.unavailable).toBeGreaterThan(0);
  }, FULL ? 600_000 : 240_000);
});

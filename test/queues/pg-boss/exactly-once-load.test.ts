/**
 * Slow handlers behind pg-boss, under load: two receivers hand every event
 * to a pg-boss queue with enqueue, and worker processes run handlers that
 * take 15 s, far past the sender's 10 s, with their side effect halfway. A sender delivers the events, 35%
 * of them as two copies sent at the same moment, and retries every copy on
 * its own until it gets its own 2xx. Meanwhile, every few seconds, a worker
 * holding a handler whose effect has committed is killed with SIGKILL and
 * started again, and connections are
 * terminated mid-transaction (pg_terminate_backend), in the receivers'
 * enqueue transactions and in the handlers' own.
 *
 * What the library guarantees, and what is asserted: every event is queued
 * exactly once (one job per event), nothing is lost (every job completes),
 * every answer comes well within 10 s; and a side effect written in the
 * handler's transaction with markProcessed happens exactly once, although
 * the handler itself runs again for the jobs of a killed worker (every
 * execution is counted, outside the transaction, and reported), also after
 * its effect committed: without markProcessed, those runs double it.
 *
 * CI size by default (300 events, a minute or two); LOAD_SIZE=full runs
 * the full size of the issue: 2,000 events.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { closeAfterAll, duplicatedCount, expectEachProcessedOnce, buildDeliveries } from '../../helpers/load/load-run.js';
import { startBackendKiller } from '../../helpers/load/backend-killer.js';
import { uniqueApplicationName } from '../../helpers/load/postgres-receivers.js';
import { deliverAll } from '../../helpers/load/retrying-sender.js';
import { draw, replayableSeed } from '../../helpers/load/seeded-random.js';
import { startPgBossRun } from '../../helpers/pg-boss-load-run.js';
import { quantile } from '../../helpers/load/quantile.js';
import { PG_BOSS_MAJORS } from '../../helpers/pg-boss-majors.js';
import { pgPool } from '../../helpers/postgres-clients.js';
import { testDatabase } from '../../helpers/test-database.js';
import { FULL_SIZE } from '../../helpers/load/load-size.js';

const FULL = FULL_SIZE;
const EVENTS = FULL ? 2000 : 300;
const WORKERS = FULL ? 4 : 3;
const BATCH_SIZE = FULL ? 150 : 60;
const HANDLER_MS = 15_000;
const EXPIRE_IN_SECONDS = 25;
const KILL_WORKER_EVERY_MS = 3000;
/** Workers are killed this long; after it, the queue drains. */
const KILLING_MS = FULL ? 60_000 : 30_000;
/** Workers killed with a committed effect in hand, at least, however slow the machine. */
const MIN_KILLS = 2;
const KILL_BACKEND_EVERY_MS = 20;

const closeAtEnd = closeAfterAll();

describe('pg-boss: slow handlers, each event queued once and its side effect once', () => {
  it.each(PG_BOSS_MAJORS)(`${EVENTS} events on $name, 15 s handlers, workers killed with SIGKILL and connections terminated`, async (major) => {
    const seed = replayableSeed();
    const database = await testDatabase();
    closeAtEnd(() => database.close());
    const applicationName = uniqueApplicationName();
    const run = await startPgBossRun({
      major,
      url: database.url,
      applicationName,
      workers: WORKERS,
      batchSize: BATCH_SIZE,
      handlerMs: HANDLER_MS,
      expireInSeconds: EXPIRE_IN_SECONDS,
    });
    closeAtEnd(() => run.close());
    const admin = pgPool(database.url, { max: 1 });
    closeAtEnd(() => admin.end());

    const deliveries = buildDeliveries(seed, EVENTS, 0.35, run.urls);
    const started = performance.now();
    const backendKiller = startBackendKiller(admin, applicationName, KILL_BACKEND_EVERY_MS);
    const killing = (async () => {
      // Every few seconds, a worker holding a handler whose effect committed dies: its jobs run again and
      // find the effect done. Killing goes on past KILLING_MS until MIN_KILLS such workers died, as long as
      // the queue still holds work for one.
      const goOn = (): boolean => performance.now() - started < KILLING_MS || (run.fleet.kills < MIN_KILLS && performance.now() - started < 3 * KILLING_MS);
      for (let attempt = 0; goOn(); attempt++) {
        await new Promise((resolve) => setTimeout(resolve, KILL_WORKER_EVERY_MS));
        run.fleet.killOne(draw(seed, 'worker', attempt));
      }
    })();
    const counts = await deliverAll(deliveries, { workers: 32, maxAttempts: 200, msPerRetryAfterSecond: 5, backoffMs: 5, answerWindowMs: 10_000 });
    const sentMs = performance.now() - started;
    await killing;
    const backendsKilled = await backendKiller.stop();
    const states = await run.drained(FULL ? 600_000 : 240_000);
    const drainedMs = performance.now() - started;

    const rows = await run.rows();
    const executions = await run.executions();
    const skips = await run.skips();
    const jobsPerEvent = await run.jobsPerEvent();
    const { answerMs } = run;
    const lost = deliveries.filter(({ id }) => rows.timesProcessed(id) === 0).length;
    const doubled = deliveries.filter(({ id }) => rows.timesProcessed(id) > 1).length;
    console.info(
      `${major.name} load: ${EVENTS} events (${duplicatedCount(deliveries)} sent as two copies), ${counts.requests} requests, all answered in ` +
        `${Math.round(sentMs)} ms: ${counts.processed} queued (202), ${counts.doneAnswers} duplicates (200), ${counts.unavailable} unavailable (503), ` +
        `${counts.late} not answered within 10 s; answer p50 ${quantile(answerMs, 0.5).toFixed(1)} ms, p99 ${quantile(answerMs, 0.99).toFixed(1)} ms, ` +
        `max ${Math.max(...answerMs).toFixed(1)} ms. Workers: ${run.fleet.kills} killed with SIGKILL, ${run.fleet.exits} ended by themselves; ` +
        `${backendsKilled} connections terminated mid-transaction. Queue drained after ${Math.round(drainedMs)} ms: ${JSON.stringify(states)}; ` +
        `${executions} handler executions for ${EVENTS} events (${executions - EVENTS} re-runs, ${skips} of them after the effect committed, which markProcessed skipped); ` +
        `side effects: ${lost} lost, ${doubled} doubled`,
    );

    // Every copy got its own 2xx, within the sender's 10 s.
    expect(counts.processed + counts.doneAnswers).toBe(EVENTS + duplicatedCount(deliveries));
    expect(counts.late).toBe(0);
    expect(answerMs.length).toBe(counts.requests);
    // Each event queued exactly once, and each job completed.
    const notOnce = deliveries.filter(({ id }) => jobsPerEvent.get(id) !== 1).map(({ id }) => [id, jobsPerEvent.get(id) ?? 0]);
    expect(notOnce.slice(0, 10), `${notOnce.length} events not queued exactly once`).toEqual([]);
    expect(jobsPerEvent.size).toBe(EVENTS);
    expect(states).toEqual({ completed: EVENTS });
    // The side effect, in the handler's transaction with markProcessed: once each.
    expectEachProcessedOnce(deliveries, rows);
    // The faults happened: workers died mid-handler, so handlers ran again, some after their effect had
    // committed; and enqueue transactions were cut.
    expect(run.fleet.kills).toBeGreaterThanOrEqual(MIN_KILLS);
    expect(executions).toBeGreaterThan(EVENTS);
    expect(skips).toBeGreaterThan(0);
    expect(backendsKilled).toBeGreaterThan(0);
    expect(counts.unavailable).toBeGreaterThan(0);
  }, FULL ? 900_000 : 360_000);
});

/**
 * Exactly once across a database crash: the two transactional receivers (pg
 * and postgres.js) run on a private Postgres, which is killed with SIGKILL,
 * every backend with it, while a sender delivers events, and started again
 * on the same data directory some time later. Meanwhile requests fail and
 * the sender retries each copy until it gets a 2xx. A transaction cut off by
 * the crash is rolled back in recovery, its record with its side effect; a
 * committed one survives, its record with its side effect. So no event may
 * be lost and none doubled, even though copies keep coming after a 2xx.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { PrivatePostgres } from '../helpers/private-postgres.js';
import { buildDeliveries, closeAfterAll, duplicatedCount, expectEachProcessedOnce, midRun, report } from '../helpers/load/load-run.js';
import { startPostgresReceivers, uniqueApplicationName } from '../helpers/load/postgres-receivers.js';
import { deliverAll } from '../helpers/load/retrying-sender.js';
import { replayableSeed } from '../helpers/load/seeded-random.js';
import { SideEffectLedger } from '../helpers/load/side-effect-ledger.js';

const EVENTS = 2000;
const OUTAGE_MS = 500;

const closeAtEnd = closeAfterAll();

describe('exactly once in the transaction, across a Postgres crash', () => {
  it('fails requests while Postgres is down and has each event processed once after it recovered', async () => {
    const seed = replayableSeed();
    const server = await PrivatePostgres.start();
    closeAtEnd(() => server.destroy());
    const ledger = new SideEffectLedger();
    const receivers = await startPostgresReceivers(server.url, { seed, ledger, applicationName: uniqueApplicationName() });
    closeAtEnd(() => receivers.close());

    const deliveries = buildDeliveries(seed, EVENTS, 0.35, receivers.urls);
    const started = performance.now();
    const sending = deliverAll(deliveries, { workers: 32, maxAttempts: 400, msPerRetryAfterSecond: 5, backoffMs: 5, answerWindowMs: 10_000 });
    await midRun(sending, () => ledger.handlerCalls >= EVENTS / 3);
    await server.kill();
    const callsAtCrash = ledger.handlerCalls;
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    await server.start();
    const counts = await sending;
    report('pg and postgres.js in the transaction, Postgres killed and restarted', deliveries, counts, ledger, performance.now() - started);
    const rows = await receivers.rows();
    const lost = EVENTS - rows.eventsProcessed;
    const doubled = deliveries.filter(({ id }) => rows.timesProcessed(id) > 1).length;
    console.info(`crash: SIGKILL after ${callsAtCrash} handler calls; side-effect rows: ${lost} lost, ${doubled} doubled`);

    expectEachProcessedOnce(deliveries, rows);
    expect(counts.processed + counts.doneAnswers).toBe(EVENTS + duplicatedCount(deliveries));
    // The crash fell mid-run, and requests failed because of it, beyond the deliberate failures.
    expect(callsAtCrash).toBeLessThan(ledger.handlerCalls);
    expect(counts.handlerFailures).toBeGreaterThan(ledger.handlerFailures);
  }, 120_000);
});

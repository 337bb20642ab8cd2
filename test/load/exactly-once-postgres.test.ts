/**
 * Exactly once when the side effect is a database write, under load: two
 * receivers, one on pg and one on postgres.js, record each event with
 * markProcessed in the same transaction as its side-effect row, with no
 * lease store in front. A sender delivers thousands of events, 35% of them
 * as two copies sent at the same moment (one to each receiver), and retries
 * every copy on its own until it gets a 2xx. Handlers fail at random before
 * commit, by throwing or by rolling back, and connections are killed
 * mid-transaction. Every event must have exactly one side-effect row.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { pgPool } from '../helpers/postgres-clients.js';
import { testDatabase } from '../helpers/test-database.js';
import { startBackendKiller } from '../helpers/load/backend-killer.js';
import { buildDeliveries, closeAfterAll, duplicatedCount, expectEachProcessedOnce, report } from '../helpers/load/load-run.js';
import { startPostgresReceivers, uniqueApplicationName } from '../helpers/load/postgres-receivers.js';
import { deliverAll } from '../helpers/load/retrying-sender.js';
import { replayableSeed } from '../helpers/load/seeded-random.js';
import { SideEffectLedger } from '../helpers/load/side-effect-ledger.js';

const EVENTS = 2000;
const DUPLICATE_SHARE = 0.35;
const KILL_EVERY_MS = 20;

const closeAtEnd = closeAfterAll();

describe('exactly once in the transaction, under load', () => {
  it(`pg and postgres.js receivers on one table, ${EVENTS} events, connections killed mid-transaction`, async () => {
    const seed = replayableSeed();
    const database = await testDatabase();
    closeAtEnd(() => database.close());
    const applicationName = uniqueApplicationName();
    const ledger = new SideEffectLedger();
    const receivers = await startPostgresReceivers(database.url, { seed, ledger, applicationName });
    closeAtEnd(() => receivers.close());
    const admin = pgPool(database.url, { max: 1 });
    closeAtEnd(() => admin.end());

    const deliveries = buildDeliveries(seed, EVENTS, DUPLICATE_SHARE, receivers.urls);
    const killer = startBackendKiller(admin, applicationName, KILL_EVERY_MS);
    const started = performance.now();
    const counts = await deliverAll(deliveries, { workers: 32, maxAttempts: 200, msPerRetryAfterSecond: 5, backoffMs: 2, answerWindowMs: 10_000 });
    const killed = await killer.stop();
    report('pg and postgres.js in the transaction', deliveries, counts, ledger, performance.now() - started);
    const rows = await receivers.rows();
    console.info(
      `transactions: ${killed} connections killed mid-transaction, ${receivers.postgresJs.replaced} postgres.js instances replaced; ` +
        `side-effect rows: ${EVENTS - rows.eventsProcessed} events without one (lost), ` +
        `${deliveries.filter(({ id }) => rows.timesProcessed(id) > 1).length} with more than one (doubled)`,
    );

    expectEachProcessedOnce(deliveries, rows);
    // Every copy ended on a 2xx: one 204 per event whose commit was answered, "done" for the rest.
    expect(counts.processed + counts.doneAnswers).toBe(EVENTS + duplicatedCount(deliveries));
    expect(counts.processed).toBeLessThanOrEqual(EVENTS);
    expect(counts.inProgress).toBe(0);
    // Each path was taken: both kinds of deliberate failure, and kills that failed requests of their own.
    expect(ledger.thrown).toBeGreaterThan(0);
    expect(ledger.answered500).toBeGreaterThan(0);
    expect(killed).toBeGreaterThan(0);
    expect(counts.handlerFailures).toBeGreaterThan(ledger.handlerFailures);
    expect(receivers.postgresJs.replaced).toBeGreaterThan(0);
  }, 120_000);
});

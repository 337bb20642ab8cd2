/**
 * BullMQ across a Redis crash: the queue, the receivers' dedup store and
 * the workers' all live on one private Redis that keeps an append-only
 * file fsync'd on every write; it is SIGKILLed a third of the way in and
 * restarted from that file. Meanwhile adds fail (503, and the sender
 * retries each copy on its own), jobs cannot complete, and claims cannot be
 * settled: the library retries those within the lease, and BullMQ runs
 * again the jobs it finds stalled, whose events the workers' store already
 * marks done. Workers on BullMQ 6 and 5 run in this process, counting every
 * execution of the side effect: each event must run exactly once.
 */
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { work, type BullMQWorker } from '../../../src/queues/bullmq/index.js';
import { RedisDedupStore } from '../../../src/stores/redis/index.js';
import { PrivateRedis } from '../../helpers/private-redis.js';
import { buildDeliveries, closeAfterAll, duplicatedCount, expectEachProcessedOnce, midRun } from '../../helpers/load/load-run.js';
import { replayableSeed } from '../../helpers/load/seeded-random.js';
import { SideEffectLedger } from '../../helpers/load/side-effect-ledger.js';
import { BULLMQ_MAJORS, connectionTo, uniqueQueueName } from '../../helpers/bullmq-majors.js';
import { startHandoffReceivers } from '../../helpers/bullmq-handoff-receivers.js';
import { quantile } from '../../helpers/load/quantile.js';
import { sendAll } from '../../helpers/bullmq-handoff-sender.js';

const EVENTS = 600;
const HANDLER_MS = 500;
/** Longer than the outage, so that every settlement pending at the kill lands after the restart. */
const LEASE_MS = 6_000;
/** Longer than the receivers' 2 s for an add or a claim, so that some are answered 503. */
const OUTAGE_MS = 3_000;

const closeAtEnd = closeAfterAll();

describe('BullMQ handoff across a Redis crash, with an append-only file', () => {
  it(`loses no event and runs none twice when Redis is killed and restarted from its file, ${EVENTS} events`, async () => {
    const seed = replayableSeed();
    const redis = await PrivateRedis.start({ appendOnly: true });
    closeAtEnd(() => redis.close());
    const queueName = uniqueQueueName('crash');
    const urls = await startHandoffReceivers(redis.url, queueName, { dedup: 'redis' }, closeAtEnd);
    const ledger = new SideEffectLedger();
    let storeErrors = 0;
    const workers: BullMQWorker[] = [];
    for (const major of BULLMQ_MAJORS) {
      const client = new Redis(redis.url, { maxRetriesPerRequest: null, retryStrategy: () => 50 });
      client.on('error', () => {});
      closeAtEnd(() => client.disconnect());
      const worker = await work(queueName, {
        bullmq: major.classes,
        dedup: { store: new RedisDedupStore(client, { keyPrefix: 'workers:', commandTimeoutMs: 500 }), leaseMs: LEASE_MS, onError: () => void storeErrors++ },
        on: {
          'message.received': async (_event, { id }) => {
            ledger.call(id);
            await new Promise((resolve) => setTimeout(resolve, HANDLER_MS));
            ledger.process(id);
          },
        },
        worker: { connection: { ...connectionTo(redis.url), retryStrategy: () => 50 }, concurrency: 50, lockDuration: 2_000, stalledInterval: 2_000, maxStalledCount: 1_000 },
      });
      worker.on('error', () => {});
      closeAtEnd(() => worker.close(true));
      workers.push(worker);
    }

    const deliveries = buildDeliveries(seed, EVENTS, 0.35, urls);
    const started = performance.now();
    const sending = sendAll(deliveries, { workers: 32, maxAttempts: 300, msPerRetryAfterSecond: 20, backoffMs: 20, answerWindowMs: 10_000 });
    await midRun(sending, () => ledger.eventsProcessed >= EVENTS / 3);
    const processedBeforeKill = ledger.eventsProcessed;
    await redis.kill();
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    await redis.start();
    const answers = await sending;
    while (ledger.eventsProcessed < EVENTS && performance.now() - started < 90_000) await new Promise((resolve) => setTimeout(resolve, 200));
    // Long enough for a job re-run after the outage to show, were it to run its handler again.
    await new Promise((resolve) => setTimeout(resolve, 2 * LEASE_MS));
    const queue = BULLMQ_MAJORS[0]!.queue(queueName, redis.url);
    const jobs = await queue.getJobCounts('completed', 'failed', 'wait', 'active', 'delayed');
    await queue.close();
    const doubled = deliveries.filter(({ id }) => ledger.timesProcessed(id) > 1).length;
    console.info(
      `bullmq crash: ${EVENTS} events (${duplicatedCount(deliveries)} sent as two copies), Redis killed after ${processedBeforeKill} were processed, ` +
        `down ${OUTAGE_MS} ms; answers ${JSON.stringify(Object.fromEntries(answers.byStatus))}, p99 ${quantile(answers.latencies, 0.99).toFixed(1)} ms; ` +
        `${ledger.handlerCalls} handler calls, ${EVENTS - ledger.eventsProcessed} lost, ${doubled} doubled; ` +
        `onStoreError ${storeErrors} times; jobs ${JSON.stringify(jobs)}`,
    );

    expectEachProcessedOnce(deliveries, ledger);
    expect(ledger.handlerCalls).toBe(EVENTS);
    expect(jobs).toMatchObject({ completed: EVENTS, failed: 0 });
    // The outage fell mid-run: adds were refused meanwhile.
    expect(processedBeforeKill).toBeLessThan(EVENTS);
    expect(answers.byStatus.get(503)).toBeGreaterThan(0);
  }, 180_000);
});

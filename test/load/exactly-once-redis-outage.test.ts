/**
 * Exactly once across a Redis outage: two receiver instances share a private
 * redis-server, which is killed while a sender delivers events and started
 * again, empty, some time later. Meanwhile the receivers answer 503 and the
 * sender retries; afterwards every event must have been processed once.
 *
 * What "once" can mean here: the restarted server keeps nothing, so it has
 * forgotten every id marked done before the kill. That is safe only because
 * such an event was answered 2xx and the sender, like the service, sends no
 * more copies of an event it has a 2xx for (`retryUntil: 'event'`). A copy
 * already in flight at the kill cannot slip through either: its claim fails
 * with 503 before the server is back, because the outage outlasts the
 * store's command timeout. A sender that retried after a 2xx would have such
 * an event processed again; a Redis with persistence is what prevents that.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { RedisDedupStore } from '../../src/stores/redis-dedup-store.js';
import { PrivateRedis } from '../dedup/private-redis.js';
import { connectIoredis, connectNodeRedis, randomPrefix } from '../dedup/redis-clients.js';
import { buildDeliveries, closeAfterAll, expectEachProcessedOnce, midRun, report } from './load-run.js';
import { startReceiverInstance } from './receiver-instance.js';
import { deliverAll } from './retrying-sender.js';
import { replayableSeed } from './seeded-random.js';
import { SideEffectLedger } from './side-effect-ledger.js';

const EVENTS = 2000;
const COMMAND_TIMEOUT_MS = 200;
/** Longer than the command timeout, so no claim sent before the kill is answered by the restarted server. */
const OUTAGE_MS = 4 * COMMAND_TIMEOUT_MS;

const closeAtEnd = closeAfterAll();

describe('exactly once across a Redis outage', () => {
  it('answers 503 while Redis is down and processes every event once after it is back', async () => {
    const seed = replayableSeed();
    const redis = await PrivateRedis.start();
    closeAtEnd(() => redis.kill());
    const keyPrefix = randomPrefix();
    const ledger = new SideEffectLedger();
    let storeErrorsAfterHandler = 0;
    // ioredis queues commands while disconnected (the store's timeout answers them); node-redis refuses them at once.
    const ioredis = await connectIoredis(redis.url, { retryStrategy: () => 50, maxRetriesPerRequest: null });
    closeAtEnd(() => ioredis.disconnect());
    const nodeRedis = await connectNodeRedis(redis.url, { disableOfflineQueue: true, socket: { reconnectStrategy: () => 50 } });
    closeAtEnd(() => nodeRedis.destroy());
    const receivers = [];
    for (const connection of [ioredis, nodeRedis]) {
      const dedup = new RedisDedupStore(connection, { keyPrefix, commandTimeoutMs: COMMAND_TIMEOUT_MS });
      const onStoreError = (): void => {
        storeErrorsAfterHandler += 1;
      };
      const instance = await startReceiverInstance({ dedup, ledger, seed, onStoreError });
      closeAtEnd(() => instance.close());
      receivers.push(instance.url);
    }

    const deliveries = buildDeliveries(seed, EVENTS, 0.35, receivers);
    const started = performance.now();
    const sending = deliverAll(deliveries, {
      workers: 32,
      maxAttempts: 200,
      // ioredis sends the claims it queued during the outage to the restarted server once the
      // receiver has answered them 503; nobody holds those leases, so their events get 409 until
      // the leases expire. Slower Retry-After seconds keep that wait well inside maxAttempts.
      msPerRetryAfterSecond: 20,
      backoffMs: 5,
      retryUntil: 'event',
    });
    await midRun(sending, () => ledger.eventsProcessed >= EVENTS / 3);
    await redis.kill();
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    const processedBeforeRestart = ledger.eventsProcessed;
    await redis.start();
    const counts = await sending;
    report('two instances on Redis, killed and restarted', deliveries, counts, ledger, performance.now() - started);
    console.info(`outage: ${processedBeforeRestart} events processed before the restart, ${storeErrorsAfterHandler} complete/release calls failed`);

    expectEachProcessedOnce(deliveries, ledger);
    expect(counts.processed).toBe(EVENTS);
    // The outage really fell mid-run, and the receivers refused meanwhile.
    expect(processedBeforeRestart).toBeLessThan(EVENTS);
    expect(counts.unavailable).toBeGreaterThan(0);
  }, 60_000);
});

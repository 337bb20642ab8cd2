/**
 * A delivery run during which the receivers' Redis is killed with SIGKILL
 * and started again: three receivers (Express over ioredis, Hono over
 * node-redis, Fastify over ioredis) share a private redis-server, the
 * sender retries every copy of every event on its own, handlers fail at
 * random and a few run for three leases. The kill falls a third of the way
 * in; the server is down for less than a lease, then restarts from its
 * append-only file or, without one, empty.
 */
import { performance } from 'node:perf_hooks';
import type { DedupStore } from '../../../src/stores/dedup-store.js';
import { PrivateRedis } from '../private-redis.js';
import { randomPrefix } from '../redis-clients.js';
import { buildDeliveries, midRun, report } from './load-run.js';
import { startReceiversOnRedis } from './receivers-on-redis.js';
import { deliverAll, type Delivery, type SenderCounts } from './retrying-sender.js';
import { replayableSeed } from './seeded-random.js';
import { SideEffectLedger } from './side-effect-ledger.js';

export const EVENTS = 1000;
const DUPLICATE_SHARE = 0.4;
/** The receivers' lease: a route marked slow runs three of them. */
const LEASE_MS = 2_500;
const SLOW_SHARE = 0.01;
const COMMAND_TIMEOUT_MS = 200;
/**
 * How long Redis stays down: longer than the command timeout, so claims
 * sent before the kill fail, and with the restart well inside a lease, so
 * every settlement and renewal pending at the kill can still land.
 */
const OUTAGE_MS = 400;

export interface FaultRun {
  readonly deliveries: readonly Delivery[];
  readonly counts: SenderCounts;
  readonly ledger: SideEffectLedger;
  /** When Redis answered again, by `performance.now()`. */
  readonly restartedAt: number;
  /** Events processed before the kill. */
  readonly processedBeforeKill: number;
  /** Store operations that failed, by operation: the outage's reach. */
  readonly storeFailures: Readonly<Record<'begin' | 'complete' | 'release' | 'renew', number>>;
  /** Calls of onStoreError: settlements or renewals that still failed when their lease was about to end. */
  readonly storeErrors: number;
}

/** Runs the deliveries, killing and restarting Redis a third of the way in; `closeAtEnd` gets what to close. */
export async function runWithRedisKilled(
  scenario: string,
  appendOnly: boolean,
  closeAtEnd: (close: () => unknown) => void,
): Promise<FaultRun> {
  const seed = replayableSeed();
  const redis = await PrivateRedis.start({ appendOnly });
  closeAtEnd(() => redis.close());
  const keyPrefix = randomPrefix();
  const ledger = new SideEffectLedger();
  const storeFailures = { begin: 0, complete: 0, release: 0, renew: 0 };
  let storeErrors = 0;
  const receivers = await startReceiversOnRedis(
    redis.url,
    {
      // ioredis queues commands while disconnected (the store's timeout answers them); node-redis refuses them at once.
      ioredis: { retryStrategy: () => 50, maxRetriesPerRequest: null },
      nodeRedis: { disableOfflineQueue: true, socket: { reconnectStrategy: () => 50 } },
      store: { keyPrefix, commandTimeoutMs: COMMAND_TIMEOUT_MS },
      instance: {
        ledger,
        seed,
        leaseMs: LEASE_MS,
        slowShare: SLOW_SHARE,
        onStoreError: () => {
          storeErrors += 1;
        },
      },
      wrapStore: (store) => countingFailures(store, storeFailures),
    },
    closeAtEnd,
  );

  const deliveries = buildDeliveries(seed, EVENTS, DUPLICATE_SHARE, receivers);
  const started = performance.now();
  const sending = deliverAll(deliveries, {
    workers: 32,
    maxAttempts: 300,
    // ioredis sends the claims it queued during the outage once Redis is back, after the receiver
    // answered them 503: nobody holds those leases, so their events get 409 until the leases end.
    msPerRetryAfterSecond: 20,
    backoffMs: 5,
    // The service's 10 s, compressed: shorter than a slow route, so the sender hangs up on those and retries.
    answerWindowMs: 1_000,
  });
  await midRun(sending, () => ledger.eventsProcessed >= EVENTS / 3);
  const processedBeforeKill = ledger.eventsProcessed;
  const killedAt = performance.now();
  await redis.kill();
  await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
  await redis.start();
  const restartedAt = performance.now();
  const counts = await sending;
  report(scenario, deliveries, counts, ledger, performance.now() - started);
  console.info(
    `${scenario}: Redis down for ${Math.round(restartedAt - killedAt)} ms, ` +
      `${processedBeforeKill} events processed before the kill; store operations failed: ` +
      `${storeFailures.begin} begin, ${storeFailures.complete} complete, ${storeFailures.release} release, ` +
      `${storeFailures.renew} renew; onStoreError called ${storeErrors} times`,
  );
  return { deliveries, counts, ledger, restartedAt, processedBeforeKill, storeFailures, storeErrors };
}

/** The store, counting into `failures` each operation that rejects. */
function countingFailures(store: DedupStore, failures: Record<keyof FaultRun['storeFailures'], number>): DedupStore {
  const counted =
    <A extends unknown[], R>(op: keyof typeof failures, run: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await run(...args);
      } catch (error) {
        failures[op] += 1;
        throw error;
      }
    };
  return {
    begin: counted('begin', (id: string, leaseMs: number) => store.begin(id, leaseMs)),
    complete: counted('complete', (id: string, token: string, retentionMs: number) => store.complete(id, token, retentionMs)),
    release: counted('release', (id: string, token: string) => store.release(id, token)),
    renew: counted('renew', (id: string, token: string, leaseMs: number) => store.renew(id, token, leaseMs)),
  };
}

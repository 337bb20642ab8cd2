/**
 * Receiver and worker on a Redis Cluster of three masters, on both BullMQ
 * majors: the queue under a hash-tagged prefix (BullMQ keeps a queue's keys
 * in one slot), the stores on ioredis' `Cluster`. Events of several tenants
 * and odd ids, over HTTP, each handled once.
 */
import { Cluster } from 'ioredis';
import { Buffer } from 'node:buffer';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { enqueue, jobIdOf, work } from '../../../src/queues/bullmq/index.js';
import type { WebhookDelivery } from '../../../src/index.js';
import { RedisDedupStore } from '../../../src/stores/redis/index.js';
import { PrivateRedisCluster } from '../../helpers/private-redis-cluster.js';
import { serveExpressHandlers } from '../../helpers/adapter-servers.js';
import { BULLMQ_MAJORS, uniqueQueueName } from '../../helpers/bullmq-majors.js';
import { deliveryOf, now, signedRequest } from '../../helpers/signed-request.js';

const secretOf = (tenant: string): string => `whsec_${Buffer.from(`cluster-secret-of-${tenant}`).toString('base64')}`;

let cluster: PrivateRedisCluster;
const closes: Array<() => Promise<unknown> | unknown> = [];
beforeAll(async () => {
  cluster = await PrivateRedisCluster.start();
}, 60_000);
afterAll(async () => {
  for (const close of closes.reverse()) await close();
  await cluster.close();
});

/** An ioredis `Cluster` over the private nodes; BullMQ's workers want commands never to give up. */
function connect(): Cluster {
  const client = new Cluster(
    cluster.ports.map((port) => ({ host: '127.0.0.1', port })),
    { redisOptions: { maxRetriesPerRequest: null } },
  );
  client.on('error', () => {});
  closes.push(() => client.disconnect());
  return client;
}

describe.each(BULLMQ_MAJORS)('BullMQ handoff on a Redis Cluster, $name', (major) => {
  it('queues each event of each tenant once and runs its handler once', async () => {
    const queue = major.queueWith(uniqueQueueName('cluster'), { connection: connect(), prefix: '{webhooks}' });
    closes.push(() => queue.close());
    const handled: WebhookDelivery[] = [];
    const worker = await work(queue.name, {
      bullmq: major.classes,
      dedup: { store: new RedisDedupStore(connect(), { keyPrefix: `${queue.name}:worked:` }) },
      on: { 'call.missed': (_event, delivery) => void handled.push(delivery) },
      worker: { connection: connect(), prefix: '{webhooks}' },
    });
    worker.on('error', () => {});
    closes.push(() => worker.close());
    const app = await serveExpressHandlers({
      tenants: { of: (req) => req.get('x-tenant'), secret: secretOf },
      now,
      dedup: { store: new RedisDedupStore(connect(), { keyPrefix: `${queue.name}:received:` }) },
      handoff: enqueue(queue),
    });
    closes.push(() => app.close());

    const sent = [
      ['evt_1', 'acme'],
      ['evt_1', 'globex'],
      ['42', 'acme'],
      ['a:b', 'acme:eu'],
    ] as const;
    for (const [id, tenant] of sent) {
      const { body, headers } = signedRequest({ id, secret: secretOf(tenant) });
      // Each twice: the second is the receivers' duplicate.
      for (const expected of [202, 200]) {
        const answer = await fetch(`${app.url}/webhooks`, { method: 'POST', body, headers: { ...headers, 'x-tenant': tenant } });
        expect(answer.status).toBe(expected);
      }
    }

    await vi.waitFor(() => expect(handled).toHaveLength(sent.length), { timeout: 10_000 });
    const byKey = (a: WebhookDelivery, b: WebhookDelivery): number => (a.dedupKey < b.dedupKey ? -1 : a.dedupKey > b.dedupKey ? 1 : 0);
    expect([...handled].sort(byKey)).toEqual(sent.map(([id, tenant]) => deliveryOf({ id, secret: secretOf(tenant), tenant })).sort(byKey));
    for (const { dedupKey } of handled) {
      expect(await (await queue.getJob(jobIdOf(dedupKey)))?.getState()).toBe('completed');
    }
  }, 30_000);
});

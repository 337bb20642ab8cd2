/**
 * `WebhooksModule` beside `@nestjs/bullmq`, on a real Redis: the receiving
 * side's `handoff` on a queue `@nestjs/bullmq` provides, injected through
 * `forRootAsync`, and a `forWorker` given no connection, which takes the one
 * of the app's `@nestjs/bullmq` queue of its name (its prefix too), or of
 * `BullModule.forRoot`.
 */
import 'reflect-metadata';
import { Inject, Injectable, Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OnWebhook, WebhooksModule } from '../../adapters/nestjs.js';
import { enqueue } from '../../src/queues/bullmq/index.js';
import type { CallMissedEvent, WebhookDelivery } from '../../src/index.js';
import { BULLMQ_MAJORS, connectionTo, dropQueue, uniqueQueueName } from '../helpers/bullmq-majors.js';
import { redisUrl } from '../helpers/redis-clients.js';
import { SECRET, now, signedRequest } from '../helpers/signed-request.js';
import { TestDedupStore } from '../helpers/test-dedup-store.js';

@Injectable()
class CallLog {
  readonly seen: string[] = [];
}

@Injectable()
class Callbacks {
  constructor(@Inject(CallLog) private readonly log: CallLog) {}

  @OnWebhook('call.missed')
  missed(_event: CallMissedEvent, { id }: WebhookDelivery): void {
    this.log.seen.push(id);
  }
}

const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** An app of `imports` and the methods that receives and works the queue, listening on 127.0.0.1; answers its URL and its log of calls. */
async function serve(imports: DynamicModule[]): Promise<{ url: string; log: CallLog }> {
  @Module({ imports, providers: [CallLog, Callbacks] })
  class AppModule {}
  const app = await NestFactory.create(AppModule, { rawBody: true, logger: false, abortOnError: false });
  closing.push(() => app.close());
  await app.listen(0, '127.0.0.1');
  return { url: (await app.getUrl()).replace('[::1]', '127.0.0.1'), log: app.get(CallLog) };
}

/** Posts a signed event to `url`; answers the status. */
async function post(url: string, id: string): Promise<number> {
  const { body, headers } = signedRequest({ id });
  return (await fetch(`${url}/webhooks`, { method: 'POST', body, headers })).status;
}

/** Removes what the queue `name` holds under `prefix`, once the app is closed. */
function dropAfter(name: string, prefix?: string): void {
  closing.unshift(async () => {
    const queue = new Queue(name, { connection: connectionTo(redisUrl()), ...(prefix !== undefined && { prefix }) });
    await queue.obliterate({ force: true });
    await queue.close();
  });
}

describe('WebhooksModule beside @nestjs/bullmq', () => {
  it("hands off to the queue @nestjs/bullmq provides, and its worker takes that queue's connection and prefix", async () => {
    const name = uniqueQueueName('nest-bullmq');
    const prefix = '{svc-webhooks-nest}';
    dropAfter(name, prefix);
    const { url, log } = await serve([
      BullModule.forRoot({ connection: { ...connectionTo(redisUrl()), port: 1 } }),
      WebhooksModule.forRootAsync({
        // The queue's own connection and prefix, over forRoot's: a worker on forRoot's would never see its jobs.
        imports: [BullModule.registerQueue({ name, connection: connectionTo(redisUrl()), prefix })],
        inject: [getQueueToken(name)],
        useFactory: (queue: Queue) => ({ secret: SECRET, now, handoff: enqueue(queue) }),
      }),
      WebhooksModule.forWorker({ queue: { engine: 'bullmq', name, dedup: { store: new TestDedupStore() } } }),
    ]);
    expect(await post(url, 'evt_1')).toBe(202);
    await vi.waitFor(() => expect(log.seen).toEqual(['evt_1']), { timeout: 10_000, interval: 50 });
  });

  it("takes the connection and prefix of BullModule.forRoot where the app registered no queue of the worker's name", async () => {
    const name = uniqueQueueName('nest-bullmq');
    const prefix = '{svc-webhooks-nest-root}';
    dropAfter(name, prefix);
    // The sender's own queue, on the same Redis and prefix.
    const sender = new Queue(name, { connection: connectionTo(redisUrl()), prefix });
    closing.push(() => sender.close());
    const { url, log } = await serve([
      BullModule.forRoot({ connection: connectionTo(redisUrl()), prefix }),
      WebhooksModule.forRoot({ secret: SECRET, now, handoff: enqueue(sender) }),
      WebhooksModule.forWorker({ queue: { engine: 'bullmq', name, dedup: { store: new TestDedupStore() } } }),
    ]);
    expect(await post(url, 'evt_1')).toBe(202);
    await vi.waitFor(() => expect(log.seen).toEqual(['evt_1']), { timeout: 10_000, interval: 50 });
  });
});

describe.each(BULLMQ_MAJORS)('WebhooksModule.forWorker beside @nestjs/bullmq, on $name', (major) => {
  it("takes the connection of a BullModule.forRoot that gives no prefix, and runs its worker under BullMQ's default prefix: Redis lists it among the queue's workers", async () => {
    const jobs = major.queue(uniqueQueueName('nest-bullmq'), redisUrl());
    closing.unshift(() => dropQueue(jobs));
    await serve([
      BullModule.forRoot({ connection: connectionTo(redisUrl()) }),
      WebhooksModule.forWorker({ queue: { engine: 'bullmq', name: jobs.name, dedup: { store: new TestDedupStore() }, bullmq: major.classes } }),
    ]);
    await vi.waitFor(async () => expect(await jobs.getWorkers()).toHaveLength(1), { timeout: 5_000, interval: 50 });
  }, 10_000);
});

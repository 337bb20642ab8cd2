/**
 * The worker app: `WebhooksModule.forWorker` works the queue with the
 * connection of @nestjs/bullmq and runs the `@OnWebhook` method for each
 * job, claiming each event in a Redis store of its own. Prints what became
 * of each job, from the package's `svc-webhooks:job` channel.
 */
import 'reflect-metadata';
import { subscribe } from 'node:diagnostics_channel';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BullModule } from '@nestjs/bullmq';
import { Redis } from 'ioredis';
import { JOB_CHANNEL, type JobTrace } from 'svc-webhooks';
import { WebhooksModule } from 'svc-webhooks/nestjs';
import { RedisDedupStore } from 'svc-webhooks/redis';
import { CallsModule, QUEUE, connection } from './calls.js';

subscribe(`tracing:${JOB_CHANNEL}:asyncEnd`, (message) => {
  const { delivery, outcome } = message as JobTrace;
  console.log(`job of ${delivery.id}: ${outcome}`);
});

const store = new RedisDedupStore(new Redis(connection), { keyPrefix: `svc-webhooks-frameworks:${QUEUE}:` });

@Module({
  imports: [
    BullModule.forRoot({ connection }),
    // The run's records leave the shared Redis a minute after it.
    WebhooksModule.forWorker({ queue: { engine: 'bullmq', name: QUEUE, dedup: { store, retentionMs: 60_000 } } }),
    CallsModule,
  ],
})
class WorkerModule {}

const worker = await NestFactory.createApplicationContext(WorkerModule);
worker.enableShutdownHooks();

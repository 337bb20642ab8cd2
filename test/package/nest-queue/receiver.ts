/**
 * The receiving app: verifies each delivery and hands it to the queue
 * @nestjs/bullmq provides, answering 202; its `@OnWebhook` method runs in
 * the worker (worker.ts). Listens on PORT and prints its URL.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BullModule, getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { enqueue } from 'svc-webhooks/bullmq';
import { WebhooksModule } from 'svc-webhooks/nestjs';
import { CallsModule, QUEUE, connection } from './calls.js';

@Module({
  imports: [
    BullModule.forRoot({ connection }),
    WebhooksModule.forRootAsync({
      imports: [BullModule.registerQueue({ name: QUEUE })],
      inject: [getQueueToken(QUEUE)],
      // No store here and each job removed once done: an event sent again is queued again, as one sent to a
      // replica that shares no store would be, and the worker's store alone keeps it from running twice.
      useFactory: (queue: Queue) => ({ secret: process.env.WEBHOOK_SECRET ?? '', dedup: false, handoff: enqueue(queue, { job: { removeOnComplete: true } }) }),
    }),
    CallsModule,
  ],
})
class ReceiverModule {}

const app = await NestFactory.create(ReceiverModule, { rawBody: true, logger: ['error', 'warn'] });
app.enableShutdownHooks();
await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
console.log(`listening on ${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/webhooks`);

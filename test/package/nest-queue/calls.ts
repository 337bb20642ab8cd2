/**
 * The NestJS app of test:frameworks' queue run, as docs/hosts.md lays it
 * out: the `@OnWebhook` method and the service it injects, in one module
 * that the receiving app (receiver.ts) and the worker app (worker.ts) both
 * import, and where both find the queue and Redis.
 */
import { Inject, Injectable, Module } from '@nestjs/common';
import type { CallMissedEvent, WebhookDelivery } from 'svc-webhooks';
import { OnWebhook } from 'svc-webhooks/nestjs';

/** The queue's name: one of its own for each run. */
export const QUEUE = process.env.QUEUE ?? 'webhooks';

const redis = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
/** Where Redis is, for @nestjs/bullmq and the worker's store. */
export const connection = { host: redis.hostname, port: Number(redis.port || 6379) };

/** The side effect: one line for each event it is told of, which the run counts. */
@Injectable()
export class CallsService {
  callBack(eventId: string, callId: string): void {
    console.log(`received call.missed ${eventId} for ${callId}`);
  }
}

/** The handler: run by the worker, with the service Nest injected. */
@Injectable()
export class Callbacks {
  constructor(@Inject(CallsService) private readonly calls: CallsService) {}

  @OnWebhook('call.missed')
  missed(event: CallMissedEvent, { id }: WebhookDelivery): void {
    this.calls.callBack(id, event.data.object.id);
  }
}

/** The methods and what they inject, in both apps. */
@Module({ providers: [Callbacks, CallsService] })
export class CallsModule {}

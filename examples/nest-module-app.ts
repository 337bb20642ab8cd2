/**
 * The NestJS app of examples/nest-module.ts (platform-express) and
 * examples/nest-module-fastify.ts (platform-fastify): svc-webhooks/nestjs
 * registers POST /webhooks and runs the @OnWebhook methods. Set
 * WEBHOOK_SECRET to the endpoint's secret; without it a demo secret is used.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import type { CallMissedEvent, WebhookDelivery } from 'svc-webhooks';
import { OnWebhook, WebhooksModule } from 'svc-webhooks/nestjs';

@Injectable()
export class MissedCalls {
  @OnWebhook('call.missed')
  async missed(event: CallMissedEvent, { id }: WebhookDelivery): Promise<void> {
    console.log(`received ${event.type} ${id}`);
    // Enqueue the real work and return at once: the service waits 10 s at most.
  }
}

@Module({
  imports: [WebhooksModule.forRoot({ secret: process.env.WEBHOOK_SECRET ?? 'whsec_ZXhhbXBsZS1zZWNyZXQtZm9yLWxvY2FsLXRyaWFscw==' })],
  providers: [MissedCalls],
})
export class AppModule {}

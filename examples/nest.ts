/**
 * A NestJS receiver on @nestjs/platform-express: `npx tsx examples/nest.ts`,
 * then point the service at http://127.0.0.1:3000/webhooks. Set
 * WEBHOOK_SECRET to the endpoint's secret; without it a demo secret is used.
 */
import 'reflect-metadata';
import { Controller, HttpCode, Module, Post, Req, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Request } from 'express';
import { verifyWebhook } from 'svc-webhooks/express';

const secret = process.env.WEBHOOK_SECRET ?? 'whsec_ZXhhbXBsZS1zZWNyZXQtZm9yLWxvY2FsLXRyaWFscw==';

@Controller('webhooks')
class WebhooksController {
  @Post()
  @HttpCode(204)
  receive(@Req() req: Request): void {
    console.log(`received ${req.webhook.event.type} ${req.webhook.id}`);
    // Enqueue the real work and return at once: the service waits 10 s at most.
  }
}

@Module({ controllers: [WebhooksController] })
class AppModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(verifyWebhook({ secret })).forRoutes('webhooks');
  }
}

// rawBody: true keeps the bytes as sent in req.rawBody beside Nest's parsed body; verifyWebhook checks those.
const app = await NestFactory.create(AppModule, { rawBody: true });
await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
console.log(`listening on ${await app.getUrl()}/webhooks`);

/**
 * The Express adapter in a NestJS app on @nestjs/platform-express, applied
 * the way Nest users apply middleware: in a module's `configure`, for the
 * webhook controller's path. Nest parses JSON app-wide before any module
 * middleware runs; with `rawBody: true` it keeps the bytes in `req.rawBody`.
 */
import 'reflect-metadata';
import { Controller, HttpCode, Module, Post, Req, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../adapters/express.js';
import { MemoryDedupStore } from '../../src/index.js';
import { RouteSpy, type AdapterHarness } from '../helpers/adapter-contract.js';
import { fetchHarness } from '../helpers/http-harness.js';
import { refusalOf } from '../helpers/refusal.js';
import { SECRET, now, signedRequest } from '../helpers/signed-request.js';

/** A Nest app whose controller hands each verified event to `route`; listening on 127.0.0.1. */
async function nestApp(route: RouteSpy, rawBody: boolean): Promise<AdapterHarness> {
  @Controller('webhooks')
  class WebhooksController {
    @Post()
    @HttpCode(204)
    async receive(@Req() req: Request): Promise<void> {
      await route.handle(req.webhook.event, req.webhook.id);
    }
  }

  @Module({ controllers: [WebhooksController] })
  class AppModule implements NestModule {
    configure(consumer: MiddlewareConsumer): void {
      consumer.apply(verifyWebhook({ secret: SECRET, now, dedup: { store: new MemoryDedupStore() } })).forRoutes('webhooks');
    }
  }

  const app = await NestFactory.create<NestExpressApplication>(AppModule, { rawBody, logger: false });
  await app.listen(0, '127.0.0.1');
  return fetchHarness(await app.getUrl(), () => app.close());
}

describe('express adapter as NestJS module middleware', () => {
  it('verifies the bytes Nest kept with rawBody: true, runs the controller once, refuses tampered bytes', async () => {
    const route = new RouteSpy();
    const app = await nestApp(route, true);
    try {
      expect((await app.post(signedRequest())).status).toBe(204);
      const duplicate = await app.post(signedRequest());
      expect(duplicate.status).toBe(200);
      const request = signedRequest({ id: 'evt_2' });
      const tampered = { ...request, body: request.body.replace('obj_evt_2', 'obj_evt_3') };
      expect(await refusalOf(await app.post(tampered))).toEqual({ status: 400, code: 'invalid_signature' });
      expect(route.calls.map((call) => call.id)).toEqual(['evt_1']);
      expect(route.calls[0]?.event.type).toBe('call.missed');
    } finally {
      await app.close();
    }
  });

  it('answers 500 body_already_parsed naming rawBody: true when Nest kept no raw bytes', async () => {
    const route = new RouteSpy();
    const app = await nestApp(route, false);
    try {
      const response = await app.post(signedRequest());
      expect(response.status).toBe(500);
      const { error } = (await response.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('body_already_parsed');
      expect(error.message).toContain('NestFactory.create(AppModule, { rawBody: true })');
      expect(route.calls).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

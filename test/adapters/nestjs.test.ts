/**
 * svc-webhooks/nestjs over HTTP, on @nestjs/platform-express and
 * @nestjs/platform-fastify: the route the module registers before Nest's body
 * parsers, the `@OnWebhook` methods found at bootstrap and run under the
 * claim (signed, tampered, stale, duplicate, concurrent copies, a throwing
 * method, tenants), `forRootAsync` with injected providers, `handoff`, and the
 * bootstraps that fail with a message naming the fix.
 */
import 'reflect-metadata';
import { Body, Controller, Inject, Injectable, Module, Post, Scope, type DynamicModule, type INestApplication, type Type } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import express from 'express';
import express4 from 'express4';
import { describe, expect, it } from 'vitest';
import { OnWebhook, WebhooksModule, WebhooksRoute, type WebhooksModuleOptions } from '../../adapters/nestjs.js';
import type { CallMissedEvent, DedupStore, Handoff, MessageReceivedEvent, StandardSchema, WebhookDelivery } from '../../src/index.js';
import { hearDeliveries } from '../helpers/heard-traces.js';
import { refusalOf } from '../helpers/refusal.js';
import { keyOf, NOW_SECONDS, now, SECRET, signedRequest, type SignedRequest } from '../helpers/signed-request.js';
import { TestDedupStore } from '../helpers/test-dedup-store.js';

/** What the decorated methods of a test saw, and how the next call goes. */
class Calls {
  readonly seen: Array<[string, string, string | undefined]> = [];
  /** Awaited by each call of `call.missed` before it resolves. */
  hold: Promise<void> = Promise.resolve();
  failNext = false;
}

const calls = new Calls();

@Injectable()
class MissedCalls {
  @OnWebhook('call.missed')
  async missed(event: CallMissedEvent, delivery: WebhookDelivery): Promise<void> {
    calls.seen.push([event.type, delivery.id, delivery.tenant]);
    await calls.hold;
    if (calls.failNext) {
      calls.failNext = false;
      throw new Error('the database is down');
    }
  }
}

@Injectable()
class Messages {
  @OnWebhook('message.received')
  received(event: MessageReceivedEvent, { id }: WebhookDelivery): void {
    calls.seen.push([event.type, id, undefined]);
  }
}

/** A provider of the app that injects the route the module exports. */
@Injectable()
class Injected {
  constructor(@Inject(WebhooksRoute) readonly route: WebhooksRoute) {}
}

/** A controller beside the webhook route, whose JSON body Nest still parses. */
@Controller('echo')
class EchoController {
  @Post()
  echo(@Body() body: unknown): unknown {
    return body;
  }
}

const PLATFORMS = {
  express: () => new ExpressAdapter(),
  fastify: () => new FastifyAdapter(),
} as const;
type PlatformName = keyof typeof PLATFORMS;

/** An app of `webhooks` and `providers` on `platform`, listening on 127.0.0.1; answers its URL and the app. */
async function serve(platform: PlatformName, webhooks: DynamicModule, providers: Type[] = [MissedCalls, Messages]): Promise<{ url: string; app: INestApplication }> {
  @Module({ imports: [webhooks], providers, controllers: [EchoController] })
  class AppModule {}
  const app = await NestFactory.create(AppModule, PLATFORMS[platform](), { logger: false, abortOnError: false });
  await app.listen(0, '127.0.0.1');
  return { url: (await app.getUrl()).replace('[::1]', '127.0.0.1'), app };
}

/** Whether bootstrapping an app of `webhooks` and `providers` on `platform` fails; answers its error's message. */
async function bootstrapError(platform: PlatformName, webhooks: DynamicModule, providers: Type[]): Promise<string> {
  @Module({ imports: [webhooks], providers })
  class AppModule {}
  const app = await NestFactory.create(AppModule, PLATFORMS[platform](), { logger: false, abortOnError: false }).catch((error: unknown) => error);
  if (!(app instanceof Error)) {
    await (app as INestApplication).close();
    return 'bootstrapped';
  }
  expect(app).toBeInstanceOf(TypeError);
  return app.message;
}

/** A Standard Schema that passes a value through, or fails at the path `failing` gives. */
function standardSchema(failing: (value: unknown) => readonly string[] | undefined): StandardSchema {
  return {
    '~standard': {
      version: 1,
      vendor: 'test',
      validate: (value) => {
        const path = failing(value);
        return path === undefined ? { value } : { issues: [{ message: 'no', path }] };
      },
    },
  };
}

const post = (url: string, { body, headers }: SignedRequest): Promise<Response> => fetch(url, { method: 'POST', body, headers });
const options: WebhooksModuleOptions = { secret: SECRET, now };

describe.each(Object.keys(PLATFORMS) as PlatformName[])('WebhooksModule on platform-%s, over HTTP', (platform) => {
  it('takes its options from a forRootAsync factory that injects nothing, and its route is a provider the app can inject', async () => {
    const { url, app } = await serve(platform, WebhooksModule.forRootAsync({ useFactory: () => options }), [MissedCalls, Injected]);
    try {
      expect((await post(`${url}/webhooks`, signedRequest({ id: 'evt_async' }))).status).toBe(204);
      expect(app.get(Injected).route.types).toEqual(['call.missed']);
    } finally {
      await app.close();
    }
  });

  it('runs the @OnWebhook method of each type once, refuses tampered and stale requests, and answers a duplicate 200', async () => {
    calls.seen.length = 0;
    const dedup = new TestDedupStore();
    const { url, app } = await serve(platform, WebhooksModule.forRoot({ ...options, dedup: { store: dedup } }));
    try {
      expect(app.get(WebhooksRoute)).toMatchObject({ path: '/webhooks', types: ['call.missed', 'message.received'] });
      expect((await post(`${url}/webhooks`, signedRequest())).status).toBe(204);
      expect((await post(`${url}/webhooks`, signedRequest({ id: 'evt_2', type: 'message.received' }))).status).toBe(204);
      expect((await post(`${url}/webhooks`, signedRequest())).status).toBe(200);
      const tampered = { ...signedRequest({ id: 'evt_3' }), body: signedRequest({ id: 'evt_3' }).body.replace('obj_evt_3', 'obj_evt_4') };
      expect(await refusalOf(await post(`${url}/webhooks`, tampered))).toEqual({ status: 400, code: 'invalid_signature' });
      expect(await refusalOf(await post(`${url}/webhooks`, signedRequest({ id: 'evt_5', timestamp: NOW_SECONDS - 3600 })))).toEqual({ status: 400, code: 'timestamp_too_old' });
      expect(calls.seen).toEqual([
        ['call.missed', 'evt_1', undefined],
        ['message.received', 'evt_2', undefined],
      ]);
      expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');
    } finally {
      await app.close();
    }
  });

  it('runs concurrent copies once (the other answered 409), and a method that throws answers 500 and runs again on the retry', async () => {
    calls.seen.length = 0;
    const { url, app } = await serve(platform, WebhooksModule.forRoot({ ...options, onHandlerError: () => undefined }));
    try {
      let release!: () => void;
      calls.hold = new Promise((resolve) => (release = resolve));
      const first = post(`${url}/webhooks`, signedRequest());
      await expect.poll(() => calls.seen.length).toBe(1);
      expect(await refusalOf(await post(`${url}/webhooks`, signedRequest()))).toEqual({ status: 409, code: 'delivery_in_progress' });
      release();
      expect((await first).status).toBe(204);
      calls.failNext = true;
      expect(await refusalOf(await post(`${url}/webhooks`, signedRequest({ id: 'evt_2' })))).toEqual({ status: 500, code: 'handler_failed' });
      expect((await post(`${url}/webhooks`, signedRequest({ id: 'evt_2' }))).status).toBe(204);
      expect(calls.seen.map(([, id]) => id)).toEqual(['evt_1', 'evt_2', 'evt_2']);
    } finally {
      await app.close();
    }
  });

  it("serves many tenants at <path>/:tenant with each tenant's secret, and leaves Nest's JSON parsing to the app's other routes", async () => {
    calls.seen.length = 0;
    const secretOf = (tenant: string): string => (tenant === 'acme' ? SECRET : SECRET.replace('w', 'W'));
    const { url, app } = await serve(platform, WebhooksModule.forRoot({ tenants: { secret: secretOf }, now, path: '/hooks/' }));
    try {
      expect((await post(`${url}/hooks/acme`, signedRequest())).status).toBe(204);
      expect(await refusalOf(await post(`${url}/hooks/globex`, signedRequest()))).toEqual({ status: 400, code: 'invalid_signature' });
      expect(calls.seen).toEqual([['call.missed', 'evt_1', 'acme']]);
      const echoed = await fetch(`${url}/echo`, { method: 'POST', body: '{"parsed":true}', headers: { 'content-type': 'application/json' } });
      expect(await echoed.json()).toEqual({ parsed: true });
    } finally {
      await app.close();
    }
  });

  it("takes its options from forRootAsync, the secret from Nest's ConfigService and the store a provider of the app's", async () => {
    const STORE = Symbol('store');
    const dedup = new TestDedupStore();
    @Module({ providers: [{ provide: STORE, useValue: dedup }], exports: [STORE] })
    class StoreModule {}
    const webhooks = WebhooksModule.forRootAsync({
      imports: [ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => ({ WEBHOOK_SECRET: SECRET })] }), StoreModule],
      useFactory: async (config: ConfigService, store: DedupStore) => ({ secret: config.getOrThrow<string>('WEBHOOK_SECRET'), now, dedup: { store } }),
      inject: [ConfigService, STORE],
    });
    const { url, app } = await serve(platform, webhooks);
    try {
      expect((await post(`${url}/webhooks`, signedRequest())).status).toBe(204);
      expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');
    } finally {
      await app.close();
    }
  });

  it('checks events against schemas and refuses unknown types as unknownEvents says, as with on', async () => {
    calls.seen.length = 0;
    const schemas = { 'call.missed': standardSchema((value) => ((value as CallMissedEvent).data.object.id === 'obj_evt_1' ? undefined : ['data', 'object', 'id'])) };
    const { url, app } = await serve(platform, WebhooksModule.forRoot({ ...options, schemas, unknownEvents: 'reject', onHandlerError: () => undefined }));
    try {
      expect((await post(`${url}/webhooks`, signedRequest())).status).toBe(204);
      expect(await refusalOf(await post(`${url}/webhooks`, signedRequest({ id: 'evt_2' })))).toEqual({ status: 422, code: 'invalid_event_data' });
      expect(await refusalOf(await post(`${url}/webhooks`, signedRequest({ id: 'evt_3', type: 'voicemail.received' })))).toEqual({ status: 422, code: 'unknown_event_type' });
      expect(calls.seen.map(([, id]) => id)).toEqual(['evt_1']);
    } finally {
      await app.close();
    }
  });

  it('publishes each delivery on the delivery channel, as the entry of its platform', async () => {
    const heard = hearDeliveries();
    const { url, app } = await serve(platform, WebhooksModule.forRoot(options));
    try {
      expect((await post(`${url}/webhooks`, signedRequest({ id: 'evt_traced' }))).status).toBe(204);
      expect(heard.traces).toMatchObject([{ entry: platform, status: 204, outcome: 'processed', delivery: { id: 'evt_traced' } }]);
    } finally {
      heard.stop();
      await app.close();
    }
  });

  it('hands each delivery to the queue with handoff, no @OnWebhook method needed', async () => {
    const handed: string[] = [];
    const handoff: Handoff = { hand: async ({ id }) => void handed.push(id) };
    const { url, app } = await serve(platform, WebhooksModule.forRoot({ ...options, handoff }), []);
    try {
      expect((await post(`${url}/webhooks`, signedRequest())).status).toBe(202);
      expect(handed).toEqual(['evt_1']);
    } finally {
      await app.close();
    }
  });

  it('fails the bootstrap, naming the fix, for two methods of one type, a request-scoped provider, nothing to run, or both handoff and methods', async () => {
    @Injectable()
    class MoreMissedCalls {
      @OnWebhook('call.missed')
      missed(): void {}
    }
    @Injectable({ scope: Scope.REQUEST })
    class PerRequest {
      @OnWebhook('call.missed')
      missed(): void {}
    }
    const handoff: Handoff = { hand: async () => undefined };
    expect(await bootstrapError(platform, WebhooksModule.forRoot(options), [MissedCalls, MoreMissedCalls])).toBe(
      "svc-webhooks: @OnWebhook('call.missed') is on both MissedCalls.missed and MoreMissedCalls.missed: one method per event type",
    );
    expect(await bootstrapError(platform, WebhooksModule.forRoot(options), [PerRequest])).toContain('PerRequest.missed, whose provider is request-scoped or transient');
    expect(await bootstrapError(platform, WebhooksModule.forRoot(options), [])).toContain('found no @OnWebhook method');
    expect(await bootstrapError(platform, WebhooksModule.forRoot({ ...options, handoff }), [MissedCalls, Messages])).toBe(
      'svc-webhooks: WebhooksModule takes handoff or @OnWebhook methods, not both (found @OnWebhook for call.missed, message.received)',
    );
    expect(await bootstrapError(platform, WebhooksModule.forRoot({ ...options, path: 'webhooks' }), [MissedCalls])).toContain('path must be a string that starts with /');
    expect(await bootstrapError(platform, WebhooksModule.forRoot({ ...options, path: 42 as never }), [MissedCalls])).toContain('path must be a string that starts with /');
  });
});

describe('WebhooksModule', () => {
  it.each([
    ['express 5', express],
    ['express 4', express4 as unknown as typeof express],
  ])('fails the bootstrap on an %s app that parses bodies before the route, naming the fix, and boots on one that does not', async (_name, framework) => {
    @Module({ imports: [WebhooksModule.forRoot(options)], providers: [MissedCalls] })
    class AppModule {}
    const failed = await NestFactory.create(AppModule, new ExpressAdapter(framework().use(framework.json())), { logger: false, abortOnError: false }).catch(
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(TypeError);
    expect((failed as Error).message).toContain('runs jsonParser before WebhooksModule');
    expect((failed as Error).message).toContain('add the parser to the app after NestFactory.create (app.use)');
    const app = await NestFactory.create(AppModule, new ExpressAdapter(framework()), { logger: false, abortOnError: false });
    await app.close();
  });

  it('fails the bootstrap on a platform other than Express or Fastify, naming both', async () => {
    @Module({ imports: [WebhooksModule.forRoot(options)], providers: [MissedCalls] })
    class AppModule {}
    const adapter = new ExpressAdapter();
    adapter.getType = () => 'koa';
    const failed = await NestFactory.create(AppModule, adapter, { logger: false, abortOnError: false }).catch((error: unknown) => error);
    expect((failed as Error).message).toBe('svc-webhooks: WebhooksModule runs on @nestjs/platform-express or @nestjs/platform-fastify, not koa');
  });

  it('fails the bootstrap in an application context, which has no HTTP server', async () => {
    @Module({ imports: [WebhooksModule.forRoot(options)], providers: [MissedCalls] })
    class AppModule {}
    const failed = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false }).catch((error: unknown) => error);
    expect((failed as Error).message).toContain('needs an HTTP application');
  });

  it('types @OnWebhook: a known type, and a method that takes its event', () => {
    class Typed {
      @OnWebhook('call.missed')
      missed(_event: CallMissedEvent): void {}

      // @ts-expect-error 'call.mised' is not a known event type
      @OnWebhook('call.mised')
      misspelled(): void {}

      // @ts-expect-error a MessageReceivedEvent method cannot handle call.missed
      @OnWebhook('call.missed')
      other(_event: MessageReceivedEvent): void {}
    }
    expect(new Typed()).toBeInstanceOf(Typed);
  });
});

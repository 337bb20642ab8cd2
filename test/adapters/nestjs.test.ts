/**
 * svc-webhooks/nestjs over HTTP, on @nestjs/platform-express and
 * @nestjs/platform-fastify: the module's controller route, on the raw bytes
 * Nest keeps with `rawBody: true`, behind the app's own pipeline (global
 * guards, interceptors and exception filters; on Express `app.use`
 * middleware and CORS; on Fastify its `bodyLimit`; the global prefix); the
 * `@OnWebhook` methods found at bootstrap and run under the claim (signed,
 * tampered, stale, duplicate, concurrent copies, a throwing method,
 * tenants), `forRootAsync` with injected providers, `handoff` (the
 * methods then left to the worker), the route's line in the app's log, and
 * the bootstraps that fail with a message naming the fix.
 */
import 'reflect-metadata';
import {
  Body,
  Catch,
  Controller,
  HttpException,
  Inject,
  Injectable,
  Module,
  Post,
  RequestMethod,
  Scope,
  type ArgumentsHost,
  type CallHandler,
  type CanActivate,
  type DynamicModule,
  type ExceptionFilter,
  type ExecutionContext,
  type INestApplication,
  type LoggerService,
  type NestInterceptor,
  type Provider,
  type Type,
} from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, HttpAdapterHost, NestFactory, type AbstractHttpAdapter } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import express from 'express';
import express4 from 'express4';
import type { Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { OnWebhook, WebhooksModule, WebhooksRoute, type WebhooksModuleOptions } from '../../adapters/nestjs.js';
import type { CallMissedEvent, DedupStore, Handoff, MessageReceivedEvent, StandardSchema, WebhookDelivery } from '../../src/index.js';
import { expectOptionMistake } from '../helpers/option-mistake.js';
import { hearDeliveries } from '../helpers/heard-traces.js';
import { recordingNestLogger } from '../helpers/nest-logs.js';
import { refusalOf } from '../helpers/refusal.js';
import { envelope, keyOf, NOW_SECONDS, now, OLD_SECRET, SECRET, signedRequest, type SignedRequest } from '../helpers/signed-request.js';
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

/** A global guard of the app that refuses every request. */
@Injectable()
class RefuseAll implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

/** A global guard of the app that throws an HttpException for a request with an `x-throttle` header. */
@Injectable()
class Throttle implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers['x-throttle'] !== undefined) throw new HttpException('slow down', 429);
    return true;
  }
}

/** The URL of each request the app's global interceptor saw. */
const intercepted: string[] = [];

/** A global interceptor of the app that notes each request it sees. */
@Injectable()
class NoteRequests implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    intercepted.push(context.switchToHttp().getRequest<{ url: string }>().url);
    return next.handle();
  }
}

/** A global exception filter of the app that answers each HttpException `{ filtered: status }`, on either platform. */
@Catch(HttpException)
class Filtered implements ExceptionFilter {
  constructor(@Inject(HttpAdapterHost) private readonly host: HttpAdapterHost) {}

  catch(exception: HttpException, context: ArgumentsHost): void {
    this.host.httpAdapter.reply(context.switchToHttp().getResponse(), { filtered: exception.getStatus() }, exception.getStatus());
  }
}

const PLATFORMS = {
  express: () => new ExpressAdapter(),
  fastify: () => new FastifyAdapter(),
} as const;
type PlatformName = keyof typeof PLATFORMS;

/** How `serve` makes the app: its providers besides the module's, its adapter, and what it does before it listens. */
interface Setup {
  /** @default [MissedCalls, Messages] */
  readonly providers?: Provider[];
  /** @default the platform's, as PLATFORMS makes it */
  readonly adapter?: AbstractHttpAdapter;
  readonly before?: (app: INestApplication) => void;
  /** @default false (none) */
  readonly logger?: LoggerService;
}

/** An app of `webhooks` on `platform` with `rawBody: true`, listening on 127.0.0.1; answers its URL and the app. */
async function serve(platform: PlatformName, webhooks: DynamicModule, { providers = [MissedCalls, Messages], adapter, before, logger }: Setup = {}): Promise<{ url: string; app: INestApplication }> {
  @Module({ imports: [webhooks], providers, controllers: [EchoController] })
  class AppModule {}
  const app = await NestFactory.create(AppModule, adapter ?? PLATFORMS[platform](), { rawBody: true, logger: logger ?? false, abortOnError: false });
  before?.(app);
  await app.listen(0, '127.0.0.1');
  return { url: (await app.getUrl()).replace('[::1]', '127.0.0.1'), app };
}

/**
 * Whether bootstrapping an app of `webhooks` and `providers` on `platform`
 * (`NestFactory.create`, then `app.init()`) fails; answers its error's message.
 */
async function bootstrapError(
  platform: PlatformName,
  webhooks: DynamicModule,
  providers: Type[],
  { rawBody = true, adapter, before }: { rawBody?: boolean; adapter?: AbstractHttpAdapter; before?: (app: INestApplication) => void } = {},
): Promise<string> {
  @Module({ imports: [webhooks], providers })
  class AppModule {}
  const failed = await NestFactory.create(AppModule, adapter ?? PLATFORMS[platform](), { rawBody, logger: false, abortOnError: false }).then(
    async (app) => {
      before?.(app);
      const initialized = await app.init().then(
        () => undefined,
        (error: unknown) => error,
      );
      await app.close();
      return initialized;
    },
    (error: unknown) => error,
  );
  if (failed === undefined) return 'bootstrapped';
  expect(failed).toBeInstanceOf(TypeError);
  return (failed as Error).message;
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
const options = { secret: SECRET, now } satisfies WebhooksModuleOptions;

describe.each(Object.keys(PLATFORMS) as PlatformName[])('WebhooksModule on platform-%s, over HTTP', (platform) => {
  it('takes its options from a forRootAsync factory that injects nothing, and its route is a provider the app can inject', async () => {
    const { url, app } = await serve(platform, WebhooksModule.forRootAsync({ useFactory: () => options }), { providers: [MissedCalls, Injected] });
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

  it('takes a list of secrets during a rotation: a delivery signed with either runs its method', async () => {
    calls.seen.length = 0;
    const { url, app } = await serve(platform, WebhooksModule.forRoot({ secret: [OLD_SECRET, SECRET], now }));
    try {
      expect((await post(`${url}/webhooks`, signedRequest({ id: 'evt_old', secret: OLD_SECRET }))).status).toBe(204);
      expect((await post(`${url}/webhooks`, signedRequest({ id: 'evt_new' }))).status).toBe(204);
      expect(calls.seen.map(([, id]) => id)).toEqual(['evt_old', 'evt_new']);
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
    const { url, app } = await serve(platform, WebhooksModule.forRoot({ ...options, handoff }), { providers: [] });
    try {
      expect((await post(`${url}/webhooks`, signedRequest())).status).toBe(202);
      expect(handed).toEqual(['evt_1']);
    } finally {
      await app.close();
    }
  });

  it("leaves the app's @OnWebhook methods to the worker with handoff: the request only queues, and the route still names their types", async () => {
    calls.seen.length = 0;
    const handed: string[] = [];
    const handoff: Handoff = { hand: async ({ id }) => void handed.push(id) };
    const { url, app } = await serve(platform, WebhooksModule.forRoot({ ...options, handoff }));
    try {
      expect((await post(`${url}/webhooks`, signedRequest())).status).toBe(202);
      expect((await post(`${url}/webhooks`, signedRequest({ id: 'evt_2', type: 'message.received' }))).status).toBe(202);
      expect(handed).toEqual(['evt_1', 'evt_2']);
      expect(calls.seen).toEqual([]);
      expect(app.get(WebhooksRoute).types).toEqual(['call.missed', 'message.received']);
    } finally {
      await app.close();
    }
  });

  it("logs its route at bootstrap as Nest logs its own, at the path Nest serves it (the global prefix, or its exclusion), with what it runs", async () => {
    const nest = "Mapped {/api/webhooks, POST} route";
    const prefixed = recordingNestLogger();
    const { app } = await serve(platform, WebhooksModule.forRoot(options), { logger: prefixed.logger, before: (app) => app.setGlobalPrefix('api/') });
    await app.close();
    expect(prefixed.of('RouterExplorer')).toContain(nest);
    expect(prefixed.of('WebhooksModule')).toEqual([`${nest}: call.missed to MissedCalls.missed, message.received to Messages.received`]);

    const excluded = recordingNestLogger();
    const handoff: Handoff = { hand: async () => undefined };
    const other = await serve(platform, WebhooksModule.forRoot({ ...options, handoff }), {
      logger: excluded.logger,
      providers: [MissedCalls],
      before: (app) => app.setGlobalPrefix('api', { exclude: ['webhooks'] }),
    });
    await other.app.close();
    expect(excluded.of('RouterExplorer')).toContain('Mapped {/webhooks, POST} route');
    expect(excluded.of('WebhooksModule')).toEqual([
      'Mapped {/webhooks, POST} route: each delivery to its queue, whose worker (WebhooksModule.forWorker) runs the @OnWebhook methods of call.missed',
    ]);

    // Nest adds a leading slash to the prefix where it has none and drops one trailing slash, keeping any other;
    // an exclusion holds for its own method only.
    for (const [prefix, exclude, path] of [
      ['//api/v1//', [], '//api/v1//webhooks'],
      ['api', [{ path: 'webhooks', method: RequestMethod.GET }], '/api/webhooks'],
      ['api', [{ path: 'webhooks', method: RequestMethod.POST }], '/webhooks'],
    ] as const) {
      const logged = recordingNestLogger();
      const served = await serve(platform, WebhooksModule.forRoot({ ...options, handoff }), {
        logger: logged.logger,
        providers: [],
        before: (app) => app.setGlobalPrefix(prefix, { exclude: [...exclude] }),
      });
      await served.app.close();
      expect(logged.of('RouterExplorer')).toContain(`Mapped {${path}, POST} route`);
      expect(logged.of('WebhooksModule')).toEqual([`Mapped {${path}, POST} route: each delivery to its queue`]);
    }

    const queued = recordingNestLogger();
    const tenants = await serve(platform, WebhooksModule.forRoot({ tenants: { secret: () => SECRET }, now, handoff }), { logger: queued.logger, providers: [] });
    await tenants.app.close();
    expect(queued.of('RouterExplorer')).toContain('Mapped {/webhooks/:tenant, POST} route');
    expect(queued.of('WebhooksModule')).toEqual(['Mapped {/webhooks/:tenant, POST} route: each delivery to its queue']);
  });

  it.each([
    ['a variable the configuration lacks', undefined],
    ['an empty one', ''],
    ['an empty list', []],
    ['null', null],
  ])('fails the bootstrap for a secret from ConfigService that is %s, saying what the secret must be', async (_case, value) => {
    const webhooks = WebhooksModule.forRootAsync({
      imports: [ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => ({ WEBHOOK_SECRET: value })] })],
      useFactory: (config: ConfigService) => ({ secret: config.get('WEBHOOK_SECRET') as string, now }),
      inject: [ConfigService],
    });
    expect(await bootstrapError(platform, webhooks, [MissedCalls])).toBe(
      "svc-webhooks: WebhooksModule needs secret, the endpoint's signing secret: a non-empty string (whsec_…), or a non-empty list of them during a rotation " +
        "(e.g. config.getOrThrow<string>('WEBHOOK_SECRET') of ConfigService, which names a missing variable); or tenants, for many tenants",
    );
  });

  it("runs the app's global guards first: one that refuses every request answers 403, and no method runs nor any claim is taken", async () => {
    calls.seen.length = 0;
    const dedup = new TestDedupStore();
    const { url, app } = await serve(platform, WebhooksModule.forRoot({ ...options, dedup: { store: dedup } }), { providers: [MissedCalls, { provide: APP_GUARD, useClass: RefuseAll }] });
    try {
      expect((await post(`${url}/webhooks`, signedRequest())).status).toBe(403);
      expect(calls.seen).toEqual([]);
      expect(dedup.stateOf(keyOf('evt_1'))).toBe('absent');
    } finally {
      await app.close();
    }
  });

  it("runs the app's global interceptors and exception filters, which see an HttpException but never the module's own refusals", async () => {
    calls.seen.length = 0;
    intercepted.length = 0;
    const providers: Provider[] = [
      MissedCalls,
      { provide: APP_GUARD, useClass: Throttle },
      { provide: APP_INTERCEPTOR, useClass: NoteRequests },
      { provide: APP_FILTER, useClass: Filtered },
    ];
    const { url, app } = await serve(platform, WebhooksModule.forRoot(options), { providers });
    try {
      expect((await post(`${url}/webhooks`, signedRequest())).status).toBe(204);
      expect(intercepted).toEqual(['/webhooks']);
      const throttled = await post(`${url}/webhooks`, { ...signedRequest({ id: 'evt_2' }), headers: { ...signedRequest({ id: 'evt_2' }).headers, 'x-throttle': '1' } });
      expect(throttled.status).toBe(429);
      expect(await throttled.json()).toEqual({ filtered: 429 });
      const tampered = { ...signedRequest({ id: 'evt_3' }), body: signedRequest({ id: 'evt_3' }).body.replace('obj_evt_3', 'obj_evt_4') };
      expect(await refusalOf(await post(`${url}/webhooks`, tampered))).toEqual({ status: 400, code: 'invalid_signature' });
      expect(calls.seen.map(([, id]) => id)).toEqual(['evt_1']);
    } finally {
      await app.close();
    }
  });

  it("answers under the app's global prefix, as every controller route does, and at path itself where the prefix excludes it", async () => {
    const prefixed = await serve(platform, WebhooksModule.forRoot(options), { before: (app) => app.setGlobalPrefix('api') });
    try {
      expect((await post(`${prefixed.url}/api/webhooks`, signedRequest())).status).toBe(204);
    } finally {
      await prefixed.app.close();
    }
    const excluded = await serve(platform, WebhooksModule.forRoot(options), { before: (app) => app.setGlobalPrefix('api', { exclude: ['webhooks'] }) });
    try {
      expect((await post(`${excluded.url}/webhooks`, signedRequest())).status).toBe(204);
    } finally {
      await excluded.app.close();
    }
  });

  it('fails the bootstrap without rawBody: true, naming it', async () => {
    expect(await bootstrapError(platform, WebhooksModule.forRoot(options), [MissedCalls], { rawBody: false })).toBe(
      'svc-webhooks: WebhooksModule verifies the bytes as sent, which Nest keeps beside the parsed body only with rawBody: true: ' +
        'create the app with NestFactory.create(AppModule, { rawBody: true })',
    );
  });

  it('fails the bootstrap, naming the fix, for handlers of on, or no options from a forRootAsync factory', async () => {
    expect(await bootstrapError(platform, WebhooksModule.forRoot({ ...options, on: { 'call.missed': () => undefined } as never }), [MissedCalls])).toBe(
      'svc-webhooks: WebhooksModule.forRoot takes no on: the @OnWebhook methods of the providers are the handlers',
    );
    for (const nothing of [undefined, null]) {
      expect(await bootstrapError(platform, WebhooksModule.forRootAsync({ useFactory: () => nothing as never }), [MissedCalls])).toBe(
        'svc-webhooks: WebhooksModule.forRoot needs options with secret or tenants',
      );
    }
  });

  it('fails the bootstrap, naming the fix, for two methods of one type, a request-scoped provider, nothing to run, or a bad path', async () => {
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
    expect(await bootstrapError(platform, WebhooksModule.forRoot(options), [MissedCalls, MoreMissedCalls])).toBe(
      "svc-webhooks: @OnWebhook('call.missed') is on both MissedCalls.missed and MoreMissedCalls.missed: one method per event type",
    );
    expect(await bootstrapError(platform, WebhooksModule.forRoot(options), [PerRequest])).toContain('PerRequest.missed, whose provider is request-scoped or transient');
    expect(await bootstrapError(platform, WebhooksModule.forRoot(options), [])).toContain('found no @OnWebhook method');
    expect(await bootstrapError(platform, WebhooksModule.forRoot({ ...options, path: 'webhooks' }), [MissedCalls])).toContain('path must be a string that starts with /');
    expect(await bootstrapError(platform, WebhooksModule.forRoot({ ...options, path: 42 as never }), [MissedCalls])).toContain('path must be a string that starts with /');
    expect(await bootstrapError(platform, WebhooksModule.forRoot({ tenants: { secret: () => SECRET, of: () => 'a' } as never }), [MissedCalls])).toBe(
      'svc-webhooks: WebhooksModule reads the tenant from its route (<path>/:tenant): tenants.of is not taken',
    );
  });
});

describe('WebhooksModule', () => {
  it.each([
    ['forRootAsync', (given: unknown) => WebhooksModule.forRootAsync(given as never)],
    ['forWorkerAsync', (given: unknown) => WebhooksModule.forWorkerAsync(given as never)],
  ])('%s refuses options without a useFactory function where they are given, naming it', (method, create) => {
    for (const given of [undefined, null, SECRET, {}, { useFactory: { secret: SECRET } }]) {
      expectOptionMistake(() => create(given), `WebhooksModule.${method} needs options with useFactory, a function that returns the module's options`);
    }
  });

  it("runs the app's own middleware (app.use) and its CORS on platform-express", async () => {
    const origin = 'https://dashboard.example';
    const { url, app } = await serve('express', WebhooksModule.forRoot(options), {
      before: (app) => {
        app.use((_req: unknown, res: { setHeader(name: string, value: string): void }, next: () => void) => {
          res.setHeader('x-app-middleware', 'ran');
          next();
        });
        app.enableCors({ origin });
      },
    });
    try {
      const preflight = await fetch(`${url}/webhooks`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(origin);
      const request = signedRequest();
      const delivered = await post(`${url}/webhooks`, { ...request, headers: { ...request.headers, origin } });
      expect(delivered.status).toBe(204);
      expect(delivered.headers.get('access-control-allow-origin')).toBe(origin);
      expect(delivered.headers.get('x-app-middleware')).toBe('ran');
    } finally {
      await app.close();
    }
  });

  it("applies the limit of Nest's JSON parser on platform-express: 100 kB unless useBodyParser raises it", async () => {
    calls.seen.length = 0;
    const padded = JSON.stringify({ ...(JSON.parse(envelope('evt_big', 'call.missed')) as object), padding: 'x'.repeat(150 * 1024) });
    const big = signedRequest({ id: 'evt_big', body: padded });
    const limited = await serve('express', WebhooksModule.forRoot(options));
    try {
      expect((await post(`${limited.url}/webhooks`, big)).status).toBe(413);
    } finally {
      await limited.app.close();
    }
    const raised = await serve('express', WebhooksModule.forRoot(options), { before: (app) => (app as NestExpressApplication).useBodyParser('json', { limit: '1mb' }) });
    try {
      expect((await post(`${raised.url}/webhooks`, big)).status).toBe(204);
    } finally {
      await raised.app.close();
    }
    expect(calls.seen.map(([, id]) => id)).toEqual(['evt_big']);
  });

  it("applies the platform-fastify app's bodyLimit: a body over it is answered 413, and no method runs", async () => {
    calls.seen.length = 0;
    const { url, app } = await serve('fastify', WebhooksModule.forRoot(options), { adapter: new FastifyAdapter({ bodyLimit: 1024 }) });
    try {
      const padded = JSON.stringify({ ...(JSON.parse(envelope('evt_big', 'call.missed')) as object), padding: 'x'.repeat(2048) });
      expect((await post(`${url}/webhooks`, signedRequest({ id: 'evt_big', body: padded }))).status).toBe(413);
      expect((await post(`${url}/webhooks`, signedRequest())).status).toBe(204);
      expect(calls.seen.map(([, id]) => id)).toEqual(['evt_1']);
    } finally {
      await app.close();
    }
  });

  it.each([
    ['express 5', express],
    ['express 4', express4 as unknown as typeof express],
  ])('fails the bootstrap on an %s app that parses bodies before Nest does, naming the fix, and boots on one that does not', async (_name, framework) => {
    const fix = "let Nest add its own parsers, with app.useBodyParser('json', options) for their options";
    const given = await bootstrapError('express', WebhooksModule.forRoot(options), [MissedCalls], { adapter: new ExpressAdapter(framework().use(framework.json())) });
    expect(given).toContain("runs jsonParser before Nest's own parsers");
    expect(given).toContain(fix);
    // Created, not initialized: NestJS 12's ExpressAdapter initializes on Express 5 alone.
    @Module({ imports: [WebhooksModule.forRoot(options)], providers: [MissedCalls] })
    class AppModule {}
    const app = await NestFactory.create(AppModule, new ExpressAdapter(framework()), { rawBody: true, logger: false, abortOnError: false });
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

/** What svc-webhooks/nestjs requires of the app's HTTP platform at bootstrap: Express or Fastify, with body parsers that keep the bytes as sent. */
import type { HttpAdapterHost } from '@nestjs/core';
import { WebhookOptionsError } from '../src/base/options-error.js';

/** What the module reads of Nest's HTTP adapter. */
interface NestAdapter {
  getType(): string;
  getInstance(): unknown;
  /** Called by Nest at `app.init()` to add its body parsers, which keep the bytes as sent in `req.rawBody` with `rawBody: true`. */
  registerParserMiddleware(prefix?: string, rawBody?: boolean): unknown;
}

/**
 * The app's platform, once it is known to be Express or Fastify with no
 * body parser ahead of Nest's; and Nest's parsers are made to fail the
 * app's `init()` unless they keep the bytes as sent. Throws `WebhookOptionsError`.
 */
export function checkedPlatform(host: HttpAdapterHost): 'express' | 'fastify' {
  // None in an application context: null, or undefined in the majors that leave it unset.
  const adapter = host.httpAdapter as NestAdapter | null | undefined;
  if (adapter == null) throw new WebhookOptionsError('svc-webhooks: WebhooksModule needs an HTTP application (NestFactory.create), not an application context');
  const platform = adapter.getType();
  if (platform !== 'express' && platform !== 'fastify') {
    throw new WebhookOptionsError(`svc-webhooks: WebhooksModule runs on @nestjs/platform-express or @nestjs/platform-fastify, not ${platform}`);
  }
  if (platform === 'express') refuseParsersBefore(adapter.getInstance() as ExpressApp);
  refuseParsersWithoutRawBody(adapter);
  return platform;
}

/**
 * Fails the app's `init()` where Nest adds its body parsers without
 * `rawBody: true`: they would leave the route no bytes as sent to verify.
 */
function refuseParsersWithoutRawBody(adapter: NestAdapter): void {
  // Nest tells its adapter alone whether it keeps the raw body: the module hears it there.
  const register = adapter.registerParserMiddleware;
  adapter.registerParserMiddleware = function (this: NestAdapter, prefix, rawBody) {
    if (rawBody !== true) {
      throw new WebhookOptionsError(
        'svc-webhooks: WebhooksModule verifies the bytes as sent, which Nest keeps beside the parsed body only with rawBody: true: ' +
          'create the app with NestFactory.create(AppModule, { rawBody: true })',
      );
    }
    return register.call(this, prefix, rawBody);
  };
}

/** What the module reads of an Express app: its stack of middleware (`router` in Express 5, `_router` in 4). */
interface ExpressApp {
  /** Express 4's, which makes `_router`; Express 5 has none. */
  readonly lazyrouter?: unknown;
  /** Express 4's router, once it is made. */
  readonly _router?: Router;
  /** Express 5's router; Express 4's getter throws. */
  readonly router: Router;
}

/** The stack of middleware of an Express router, each named for its function. */
interface Router {
  readonly stack: ReadonlyArray<{ readonly name: string }>;
}

const PARSERS = new Set(['jsonParser', 'urlencodedParser', 'textParser', 'rawParser']);

/** Fails the bootstrap where a body parser already runs on the Express app: Nest would add none of its own, which keep the bytes as sent. */
function refuseParsersBefore(app: ExpressApp): void {
  // Express 4 makes its router on first use (NestJS 10 makes none before).
  const stack = typeof app.lazyrouter === 'function' ? (app._router?.stack ?? []) : app.router.stack;
  const parser = stack.find((layer) => PARSERS.has(layer.name));
  if (parser === undefined) return;
  throw new WebhookOptionsError(
    `svc-webhooks: the Express app given to ExpressAdapter runs ${parser.name} before Nest's own parsers, which keep the bytes as sent that WebhooksModule verifies (rawBody: true): ` +
      "let Nest add its own parsers, with app.useBodyParser('json', options) for their options",
  );
}

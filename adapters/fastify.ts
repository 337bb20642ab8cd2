/**
 * svc-webhooks/fastify: `verifyWebhook(options)` is a Fastify plugin with its
 * own encapsulated scope, in which `options.routes` registers the webhook
 * routes. There, and only there, each body is read as raw bytes (whatever its
 * Content-Type) and verified in a preParsing hook, which sets
 * `request.webhook` (the typed event), `request.webhookId` (the verified
 * `webhook-id`) and `request.body` (the raw Buffer) before any later hook
 * runs. Routes elsewhere keep Fastify's JSON parsing. A refused request is
 * answered with `{ error: { code, message } }` and the handler never runs.
 * With `on`, the plugin registers one route at `options.path` in that scope,
 * and the hook answers every request there itself.
 */
import type { Buffer } from 'node:buffer';
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { WebhookVerificationError } from '../src/core/errors.js';
import type { WebhookEvent } from '../src/core/event.js';
import type { EventHandlers, EventSchemas, HandlerErrorCallback, HandlerOptions } from '../src/receive/handler-types.js';
import { answeredOnNode, readNodeBody, statusWhenEnded } from '../src/receive/node-platform.js';
import type { Handoff } from '../src/receive/handoff.js';
import { createPipeline, type EntryOptions } from '../src/receive/pipeline.js';
declare module 'fastify' {
  interface FastifyRequest {
    /** The verified event; set only on routes registered in `verifyWebhook`'s `routes`. */
    webhook: WebhookEvent;
    /** The verified `webhook-id`, the key to deduplicate on; set only there too. */
    webhookId: string;
    /** Which secret verified it (see `KeyedSecret`); set only there too. */
    webhookKeyId: string;
    /** The tenant (see the `tenant` option); set only there, with one. */
    webhookTenant?: string;
  }
}

/** The options of either way to use the plugin: your routes, or handlers at a path. */
export type FastifyWebhookOptions<S extends EventSchemas = {}> = FastifyRoutesOptions | FastifyHandlersOptions<S> | FastifyHandoffOptions;

/** The options the three ways to use the plugin share. */
export interface FastifyCommonOptions extends Omit<EntryOptions, keyof HandlerOptions | 'handoff'> {
  /**
   * Which tenant's endpoint a request is for, where one receiver serves many:
   * `(request) => (request.params as { tenant?: string }).tenant` on a route `/webhooks/:tenant`. With it, `secret` may be a function from the tenant to its secret,
   * and the tenant scopes deduplication and reaches the route as `request.webhookTenant` and the handlers' context.
   * @default undefined (one endpoint)
   */
  readonly tenant?: (request: FastifyRequest) => unknown;
  /**
   * Answers a refused request (it must send a reply, within
   * `onErrorTimeoutMs`) instead of the default JSON response. The handler is
   * not called either way. With `on`, the handlers' refusals
   * (`handler_failed`, `invalid_event_data`, `unknown_event_type`) come here too.
   * @default answers `error.status` with `{ error: { code, message } }`
   */
  readonly onError?: (error: WebhookVerificationError, request: FastifyRequest, reply: FastifyReply) => void | Promise<void>;
}

/** Your routes answer each verified delivery. */
export interface FastifyRoutesOptions extends FastifyCommonOptions, Partial<Record<keyof HandlerOptions | 'path' | 'handoff', undefined>> {
  /**
   * Registers the webhook routes, in the plugin's scope: each of them is
   * verified before its handler runs. Required without `on`.
   */
  readonly routes: (webhooks: FastifyInstance) => void | Promise<void>;
}

/** The plugin answers each delivery at `path` itself, with the handler of its event's type. */
export interface FastifyHandlersOptions<S extends EventSchemas = {}> extends FastifyCommonOptions, HandlerOptions<S> {
  /** Where the plugin registers its webhook route, in its scope (under `register`'s `prefix`). Required with `on`. */
  readonly path: string;
  /** One handler per known event type, as in `HandlerOptions`. Required with `path`. */
  readonly on: EventHandlers<S>;
  readonly routes?: undefined;
  readonly handoff?: undefined;
}

/** The plugin answers each delivery at `path` itself, handing its event to a queue. */
export interface FastifyHandoffOptions extends FastifyCommonOptions, Partial<Record<Exclude<keyof HandlerOptions, 'onHandlerError'> | 'routes', undefined>> {
  /** Where the plugin registers its webhook route, in its scope (under `register`'s `prefix`). */
  readonly path: string;
  /** The queue the plugin hands each event to: see `EntryOptions.handoff`. */
  readonly handoff: Handoff;
  /**
   * Told when the queue failed to record an event (the request is answered
   * 503 `handoff_failed`), with the queue's error.
   * @default logs one line with console.error: the event's type and id, and the error's name
   */
  readonly onHandlerError?: HandlerErrorCallback;
}

/** One request in the plugin's preParsing hook. */
interface FastifyWebhookRequest {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  readonly payload: Readable;
  /** Lets Fastify go on to the route. */
  readonly proceed: () => void;
}

export function verifyWebhook<S extends EventSchemas = {}>(options: FastifyWebhookOptions<S>): FastifyPluginAsync {
  const { routes, path, onError } = options;
  const bodies = new WeakMap<FastifyRequest, Buffer>();
  const receive = createPipeline<FastifyWebhookRequest, void, S>(options, {
    entry: 'fastify',
    async body({ request, payload }, limits) {
      const bytes = await readNodeBody(payload, request.headers['content-length'], limits);
      // For the content-type parser: the route's request.body.
      bodies.set(request, bytes);
      return bytes;
    },
    headers: ({ request }) => request.headers,
    userRequest: ({ request }) => request,
    send({ reply }, { status, headers, body }) {
      // A failed onError may have begun an answer: end it rather than leave the request open.
      if (reply.raw.headersSent) reply.raw.end();
      else reply.headers(headers).code(status).send(body);
    },
    statusOf: ({ reply }) => reply.raw.statusCode,
    // Its sender is gone: nobody is left to answer.
    senderGone: ({ reply }) => void reply.hijack(),
    onError: onError && (({ request, reply }, error, headers) => answeredOnNode(reply.raw, headers, () => onError(error, request, reply))),
    route({ request, reply, proceed }, { event, id, keyId, tenant }) {
      request.webhook = event;
      request.webhookId = id;
      request.webhookKeyId = keyId;
      if (tenant !== undefined) request.webhookTenant = tenant;
      const ended = statusWhenEnded(reply.raw);
      proceed();
      return ended;
    },
  });
  checkMount(options);

  // A plain plugin function: Fastify gives it its own scope, so its parsers and hook stay off the parent's routes.
  return async function svcWebhooks(webhooks) {
    webhooks.decorateRequest('webhook', null as unknown as WebhookEvent);
    webhooks.decorateRequest('webhookId', '');
    webhooks.decorateRequest('webhookKeyId', '');
    webhooks.decorateRequest('webhookTenant', undefined);
    const hiddenTypes = new WeakMap<FastifyRequest, string>();
    // Before Fastify's parsing, so that a refusal is answered here (a user's setErrorHandler in
    // `routes` never sees it), the read deadline holds, and every later hook sees a verified delivery.
    webhooks.addHook(
      'preParsing',
      (request, reply, payload) =>
        new Promise<Readable | undefined>((resolve, reject) => {
          const proceed = (): void => {
            // Fastify answers an empty or malformed Content-Type 415 on its own, before any parser. The
            // signature does not cover that header: hide it from that check, and give it back in preValidation.
            const type = request.headers['content-type'];
            if (type !== undefined && request.mediaType === undefined) {
              hiddenTypes.set(request, type);
              delete request.raw.headers['content-type'];
            }
            resolve(payload);
          };
          // Answered here (reply sent): Fastify goes no further.
          receive({ request, reply, payload, proceed }).then(() => resolve(undefined), reject);
        }),
    );
    // Only this scope loses JSON parsing: the signature is over the bytes as sent. The parser runs past
    // Fastify's check, and for every verified delivery (its body is never empty): the type comes back
    // there, ahead of every hook of yours (Fastify 4 hides every type, lacking request.mediaType).
    webhooks.removeAllContentTypeParsers();
    webhooks.addContentTypeParser('*', (request: FastifyRequest, _payload: unknown, done: (error: null, body: Buffer | undefined) => void) => {
      const hiddenType = hiddenTypes.get(request);
      if (hiddenType !== undefined) request.raw.headers['content-type'] = hiddenType;
      done(null, bodies.get(request));
    });
    if (routes === undefined) webhooks.post(path, answeredInHook);
    else await routes(webhooks);
  };
}

/** The route of `path` with `on`: the preParsing hook answers every request of the scope, so it never runs. */
async function answeredInHook(_request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  return reply;
}

/** Exactly one of `routes` and `path`, and `path` exactly with `on` or `handoff`; throws `TypeError`. */
function checkMount({ routes, path, on, handoff }: { readonly routes?: unknown; readonly path?: unknown; readonly on?: unknown; readonly handoff?: unknown }): void {
  if (handoff !== undefined && path === undefined) throw new TypeError('svc-webhooks: with handoff, give path (the plugin answers there itself) instead of routes');
  if (routes !== undefined && path !== undefined) throw new TypeError('svc-webhooks: give routes or path, not both');
  if (path !== undefined) {
    if (typeof path !== 'string') throw new TypeError('svc-webhooks: path must be a string, the webhook route');
    if (on === undefined && handoff === undefined) throw new TypeError('svc-webhooks: path takes effect only with on; without on, register your routes in routes');
  } else if (on !== undefined) {
    throw new TypeError('svc-webhooks: with on, give path (the plugin answers there itself) instead of routes');
  } else if (typeof routes !== 'function') {
    throw new TypeError('svc-webhooks: routes must be a function that registers the webhook routes (or give path with on)');
  }
}

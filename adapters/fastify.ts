/**
 * svc-webhooks/fastify: `verifyWebhook(options)` is a Fastify (4 or 5)
 * plugin with its own encapsulated scope. With `routes`, that function
 * registers the webhook routes in the scope; with `path` and `on` or
 * `handoff`, the plugin registers one route there and answers it itself.
 * In the scope, and only there, each body is read as raw bytes (whatever
 * its Content-Type) and verified in a preParsing hook, which sets
 * `request.webhook` (the verified delivery) and `request.body` (the raw
 * Buffer) before any later hook runs. Routes elsewhere keep Fastify's JSON
 * parsing. A refused request is answered with `{ error: { code, message } }`
 * and the route never runs.
 * @packageDocumentation
 */
// First: the file's comment goes with its first import into the declarations, and these stay there.
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Buffer } from 'node:buffer';
import type { Readable } from 'node:stream';
import type { WebhookDelivery } from '../src/core/delivery.js';
import type { WebhookError } from '../src/core/errors.js';
import type { EventSchemas } from '../src/process/handler-types.js';
import { answeredOnNode, readNodeBody, statusWhenEnded } from '../src/receive/node-platform.js';
import { createPipeline, type EntryOptions, type PipelineOptions } from '../src/receive/pipeline.js';
import { entryOptions, type SecretOrTenants } from '../src/receive/receiver.js';
import type { HandlersMode, HandoffMode, RouteMode } from '../src/receive/what-runs.js';
import { WebhookOptionsError } from '../src/base/options-error.js';
import { sendOnFastify } from './answers.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified delivery: its event, id, timestamp, keyId, tenant, dedupKey and stale. Set only in `verifyWebhook`'s scope. */
    webhook: WebhookDelivery;
  }
}

/**
 * The options of the Fastify entry besides its secret, what runs and where. Where one receiver
 * serves many tenants, `tenants.of` reads the tenant from the request:
 * `(request) => (request.params as { tenant?: string }).tenant` on a route
 * `/webhooks/:tenant` (the route's parameters are parsed before the
 * plugin's hook runs); the tenant reaches the delivery as
 * `request.webhook.tenant`.
 */
export interface FastifyEntryOptions extends EntryOptions {
  /**
   * Answers a refused request (it must send a reply, within
   * `onErrorTimeoutMs`) instead of the default JSON response. The route is
   * not called either way. With `on`, the handlers' refusals
   * (`handler_failed`, `invalid_event_data`, `unknown_event_type`) come here too.
   * @default answers `error.status` with `{ error: { code, message } }`
   */
  readonly onError?: (error: WebhookError, request: FastifyRequest, reply: FastifyReply) => void | Promise<void>;
}

/** Your routes answer each verified delivery. */
export interface FastifyRoutes {
  /** Registers the webhook routes, in the plugin's scope: each of them is verified before its handler runs. */
  readonly routes: (webhooks: FastifyInstance) => void | Promise<void>;
  /** Not with `routes`: your routes answer. */
  readonly path?: undefined;
}

/** The plugin answers each delivery at `path` itself. */
export interface FastifyPath {
  /** Where the plugin registers its webhook route, in its scope (under `register`'s `prefix`). */
  readonly path: string;
  /** Not with `path`: the plugin answers there itself. */
  readonly routes?: undefined;
}

/**
 * The options of `verifyWebhook`: the entry's, and what runs: your `routes`,
 * or at `path` the handlers of `on` or a `handoff`.
 */
export type FastifyWebhookOptions<S extends EventSchemas = {}> = FastifyEntryOptions & SecretOrTenants<FastifyRequest> &
  ((RouteMode & FastifyRoutes) | ((HandlersMode<S> | HandoffMode) & FastifyPath));

/** One request in the plugin's preParsing hook. */
interface FastifyWebhookRequest {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  readonly payload: Readable;
  /** Lets Fastify go on to the route. */
  readonly proceed: () => void;
  /** The body once read, for the route's `request.body`. */
  bytes: Buffer | undefined;
}

/**
 * A Fastify plugin that verifies each request of its scope in a preParsing
 * hook and answers refusals itself; register it with `app.register`. Throws
 * `WebhookOptionsError` for bad options.
 * @example
 * ```ts
 * import Fastify from 'fastify';
 * import { verifyWebhook } from 'svc-webhooks/fastify';
 *
 * const app = Fastify();
 * await app.register(
 *   verifyWebhook({
 *     secret: process.env.WEBHOOK_SECRET!,
 *     path: '/webhooks',
 *     on: { 'call.missed': async (missed, { id }) => queueCallback(id, missed.data.object.id) },
 *   }),
 * );
 * ```
 */
export function verifyWebhook<S extends EventSchemas = {}>(options: FastifyWebhookOptions<S>): FastifyPluginAsync {
  const { routes, path, onError } = entryOptions(options);
  checkMount(options);
  const receive = createPipeline<FastifyWebhookRequest, void>(
    options as PipelineOptions,
    {
      entry: 'fastify',
      async body(incoming, limits) {
        const bytes = await readNodeBody(incoming.payload, incoming.request.headers['content-length'], limits);
        // Kept on this request's own object, not in a WeakMap keyed by Fastify's: cheaper, and gone with it.
        incoming.bytes = bytes;
        return bytes;
      },
      headers: ({ request }) => request.headers,
      userRequest: ({ request }) => request,
      send: ({ reply }, response) => sendOnFastify(reply, response),
      statusOf: ({ reply }) => reply.raw.statusCode,
      // Its sender is gone: nobody is left to answer, and the hook never calls Fastify on.
      senderGone: () => undefined,
      onError: onError && (({ request, reply }, error, headers) => answeredOnNode(reply.raw, headers, () => onError(error, request, reply))),
    },
    routes === undefined
      ? undefined
      : {
          route({ request, reply, proceed, bytes }, delivery) {
            // Both before any later hook of yours runs; the content-type parser hands Fastify this body again.
            request.webhook = delivery;
            request.body = bytes;
            const ended = statusWhenEnded(reply.raw);
            proceed();
            return ended;
          },
        },
  );

  // A plain plugin function: Fastify gives it its own scope, so its parsers and hook stay off the parent's routes.
  return async function svcWebhooks(webhooks) {
    webhooks.decorateRequest('webhook', null as unknown as WebhookDelivery);
    const hiddenTypes = new WeakMap<FastifyRequest, string>();
    // Before Fastify's parsing, so that a refusal is answered here (a user's setErrorHandler in
    // `routes` never sees it), the read deadline holds, and every later hook sees a verified delivery.
    // A callback, not a promise: `done` goes on to the route at once, in the context the delivery was let
    // through in (an instrumentation's handler span, say), and your hooks and route run in it.
    webhooks.addHook('preParsing', (request, reply, payload, done) => {
      const proceed = (): void => {
        // Fastify answers an empty or malformed Content-Type 415 on its own, before any parser. The
        // signature does not cover that header: hide it from that check, and give it back in preValidation.
        const type = request.headers['content-type'];
        if (type !== undefined && request.mediaType === undefined) {
          hiddenTypes.set(request, type);
          delete request.raw.headers['content-type'];
        }
        done(null, payload);
      };
      // Answered here (reply sent): Fastify goes no further.
      receive({ request, reply, payload, proceed, bytes: undefined }).then(undefined, done);
    });
    // Only this scope loses JSON parsing: the signature is over the bytes as sent. The parser runs past
    // Fastify's check, and for every verified delivery (its body is never empty): the type comes back
    // there, ahead of every hook of yours (Fastify 4 hides every type, lacking request.mediaType).
    webhooks.removeAllContentTypeParsers();
    webhooks.addContentTypeParser('*', (request: FastifyRequest, _payload: unknown, done: (error: null, body: Buffer | undefined) => void) => {
      const hiddenType = hiddenTypes.get(request);
      if (hiddenType !== undefined) request.raw.headers['content-type'] = hiddenType;
      done(null, request.body as Buffer | undefined);
    });
    if (routes === undefined) webhooks.post(path!, answeredInHook);
    else await routes(webhooks);
  };
}

/** The route of `path` with `on`: the preParsing hook answers every request of the scope, so it never runs. */
async function answeredInHook(_request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  return reply;
}

/** Exactly one of `routes` and `path`, and `routes` without `on` or `handoff`; what runs at `path` is the pipeline's to check. Throws `WebhookOptionsError`. */
function checkMount({ routes, path, on, handoff }: { readonly routes?: unknown; readonly path?: unknown; readonly on?: unknown; readonly handoff?: unknown }): void {
  if ((routes === undefined) === (path === undefined)) {
    throw new WebhookOptionsError('svc-webhooks: give routes (a function that registers your webhook routes) or path (with on or handoff), exactly one of them');
  }
  // Your routes would never run: on or handoff answers every request of the scope in its hook.
  if (routes !== undefined && (on !== undefined || handoff !== undefined)) {
    throw new WebhookOptionsError('svc-webhooks: routes take neither on nor handoff: with them, give path, where the plugin answers itself');
  }
  if (path !== undefined && typeof path !== 'string') throw new WebhookOptionsError('svc-webhooks: path must be a string, the webhook route');
  if (routes !== undefined && typeof routes !== 'function') throw new WebhookOptionsError('svc-webhooks: routes must be a function that registers the webhook routes');
}

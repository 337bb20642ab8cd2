/**
 * svc-webhooks/fastify: `verifyWebhook(options)` is a Fastify plugin with its
 * own encapsulated scope, in which `options.routes` registers the webhook
 * routes. There, and only there, bodies are read as raw Buffers (whatever
 * their Content-Type) in a preParsing hook and verified in a preHandler hook, which sets `request.webhook` (the typed event) and
 * `request.webhookId` (the verified `webhook-id`). Routes elsewhere keep
 * Fastify's JSON parsing. A refused request is answered with
 * `{ error: { code, message } }` and the handler never runs. With `on`, the
 * plugin registers one route at `options.path` in that scope, which runs the
 * handler of the event's type and answers every request itself.
 */
import type { Buffer } from 'node:buffer';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { WebhookVerificationError } from '../src/core/errors.js';
import type { WebhookEvent } from '../src/core/event.js';
import { bodyRefusal, SenderGoneError } from '../src/receive/body-limits.js';
import { checkOnErrorOptions, runOnError, type OnErrorOptions } from '../src/receive/on-error.js';
import { readNodeBody } from '../src/receive/read-node-body.js';
import type { EventHandlers, EventSchemas, HandlerOptions } from '../src/receive/event-handlers.js';
import { createHandlingReceiver } from '../src/receive/handling-receiver.js';
import type { ReceiverOptions, WebhookResponse } from '../src/receive/receiver.js';
import { responseEnded } from '../src/receive/response-ended.js';
import { settleWhenEnded } from '../src/receive/settle-when-ended.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified event; set only on routes registered in `verifyWebhook`'s `routes`. */
    webhook: WebhookEvent;
    /** The verified `webhook-id`, the key to deduplicate on; set only there too. */
    webhookId: string;
  }
}

/** The options of either way to use the plugin: your routes, or handlers at a path. */
export type FastifyWebhookOptions<S extends EventSchemas = {}> = FastifyRoutesOptions | FastifyHandlersOptions<S>;

interface FastifyCommonOptions extends ReceiverOptions, OnErrorOptions {
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
export interface FastifyRoutesOptions extends FastifyCommonOptions, Partial<Record<keyof HandlerOptions | 'path', undefined>> {
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
}

export function verifyWebhook<S extends EventSchemas = {}>(options: FastifyWebhookOptions<S>): FastifyPluginAsync {
  const receiver = createHandlingReceiver<S>(options);
  const { routes, path, onError } = options;
  const onErrorTimeoutMs = checkOnErrorOptions(options);
  checkMount(options);

  // Headers such as Retry-After apply whoever writes the body.
  const respond = async (
    response: WebhookResponse,
    error: WebhookVerificationError | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<FastifyReply> => {
    reply.headers(response.headers);
    if (error && onError && (await runOnError(() => onError(error, request, reply), onErrorTimeoutMs, () => responseEnded(reply.raw)))) {
      return reply;
    }
    // A failed onError may have begun an answer: end it rather than leave the request open.
    if (reply.raw.headersSent) reply.raw.end();
    else reply.code(response.status).send(response.body);
    return reply;
  };

  // A plain plugin function: Fastify gives it its own scope, so its parsers and hook stay off the parent's routes.
  return async function svcWebhooks(webhooks) {
    webhooks.decorateRequest('webhook', null as unknown as WebhookEvent);
    webhooks.decorateRequest('webhookId', '');
    const bodies = new WeakMap<FastifyRequest, { readonly bytes: Buffer; readonly hiddenType?: string }>();
    // The body is read here, before Fastify's parsing, so that a refusal is answered here too (a
    // user's setErrorHandler in `routes` never sees it) and the read deadline holds.
    webhooks.addHook('preParsing', async (request, reply, payload) => {
      let bytes: Buffer;
      try {
        bytes = await readNodeBody(payload, request.headers['content-length'], receiver);
      } catch (error) {
        // Its sender is gone: nobody is left to answer.
        if (error instanceof SenderGoneError) reply.hijack();
        else if (error instanceof WebhookVerificationError) await respond(bodyRefusal(error), error, request, reply);
        else throw error;
        return undefined;
      }
      // Fastify answers an empty or malformed Content-Type 415 on its own, before any parser. The
      // signature does not cover that header: hide it from that check, and give it back in preValidation.
      const type = request.headers['content-type'];
      const hidden = type !== undefined && request.mediaType === undefined;
      if (hidden) delete request.raw.headers['content-type'];
      bodies.set(request, { bytes, hiddenType: hidden ? type : undefined });
      return payload;
    });
    // Only this scope loses JSON parsing: the signature is over the bytes as sent.
    webhooks.removeAllContentTypeParsers();
    webhooks.addContentTypeParser('*', async (request: FastifyRequest) => bodies.get(request)?.bytes);
    // Past Fastify's check, ahead of your own preValidation hooks (Fastify 4 hides every type, lacking request.mediaType).
    webhooks.addHook('preValidation', async (request) => {
      const hiddenType = bodies.get(request)?.hiddenType;
      if (hiddenType !== undefined) request.raw.headers['content-type'] = hiddenType;
    });
    // Before your routes' handlers; or, with `on`, as the handler of the one route, since it answers every request.
    const verify = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
      // Set in preParsing, which every request of this scope passes before it gets here.
      const { bytes } = bodies.get(request)!;
      const reception = await receiver.receive(bytes, request.headers);
      if (reception.action === 'respond') return respond(reception.response, reception.error, request, reply);
      request.webhook = reception.delivery.event;
      request.webhookId = reception.delivery.id;
      if (reception.settle) settleWhenEnded(reply.raw, reception.settle);
      return undefined;
    };
    if (routes === undefined) {
      webhooks.post(path, verify);
      return;
    }
    webhooks.addHook('preHandler', verify);
    await routes(webhooks);
  };
}

/** Exactly one of `routes` and `path`, and `path` exactly with `on`; throws `TypeError`. */
function checkMount({ routes, path, on }: { readonly routes?: unknown; readonly path?: unknown; readonly on?: unknown }): void {
  if (routes !== undefined && path !== undefined) throw new TypeError('svc-webhooks: give routes or path, not both');
  if (path !== undefined) {
    if (typeof path !== 'string') throw new TypeError('svc-webhooks: path must be a string, the webhook route');
    if (on === undefined) throw new TypeError('svc-webhooks: path takes effect only with on; without on, register your routes in routes');
  } else if (on !== undefined) {
    throw new TypeError('svc-webhooks: with on, give path (the plugin answers there itself) instead of routes');
  } else if (typeof routes !== 'function') {
    throw new TypeError('svc-webhooks: routes must be a function that registers the webhook routes (or give path with on)');
  }
}

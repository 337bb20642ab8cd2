/**
 * svc-webhooks/fastify: `verifyWebhook(options)` is a Fastify plugin with its
 * own encapsulated scope, in which `options.routes` registers the webhook
 * routes. There, and only there, bodies are read as raw Buffers (whatever
 * their Content-Type) in a preParsing hook and verified in a preHandler hook, which sets `request.webhook` (the typed event) and
 * `request.webhookId` (the verified `webhook-id`). Routes elsewhere keep
 * Fastify's JSON parsing. A refused request is answered with
 * `{ error: { code, message } }` and the handler never runs.
 */
import type { Buffer } from 'node:buffer';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { WebhookVerificationError } from '../src/core/errors.js';
import type { WebhookEvent } from '../src/core/event.js';
import { bodyRefusal, SenderGoneError } from '../src/receive/body-limits.js';
import { checkOnErrorOptions, runOnError, type OnErrorOptions } from '../src/receive/on-error.js';
import { readNodeBody } from '../src/receive/read-node-body.js';
import { createReceiver, type ReceiverOptions, type WebhookResponse } from '../src/receive/receiver.js';
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

export interface FastifyWebhookOptions extends ReceiverOptions, OnErrorOptions {
  /**
   * Registers the webhook routes, in the plugin's scope: each of them is
   * verified before its handler runs. Required.
   */
  readonly routes: (webhooks: FastifyInstance) => void | Promise<void>;
  /**
   * Answers a refused request (it must send a reply, within
   * `onErrorTimeoutMs`) instead of the default JSON response. The handler is
   * not called either way.
   * @default answers `error.status` with `{ error: { code, message } }`
   */
  readonly onError?: (error: WebhookVerificationError, request: FastifyRequest, reply: FastifyReply) => void | Promise<void>;
}

export function verifyWebhook(options: FastifyWebhookOptions): FastifyPluginAsync {
  const receiver = createReceiver(options);
  const { routes, onError } = options;
  const onErrorTimeoutMs = checkOnErrorOptions(options);
  if (typeof routes !== 'function') throw new TypeError('svc-webhooks: routes must be a function that registers the webhook routes');

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
      // signature does not cover that header: hide it from that check, and give it back below.
      const type = request.headers['content-type'];
      const hidden = type !== undefined && request.mediaType === undefined;
      if (hidden) delete request.raw.headers['content-type'];
      bodies.set(request, { bytes, hiddenType: hidden ? type : undefined });
      return payload;
    });
    // Only this scope loses JSON parsing: the signature is over the bytes as sent.
    webhooks.removeAllContentTypeParsers();
    webhooks.addContentTypeParser('*', async (request: FastifyRequest) => bodies.get(request)?.bytes);
    webhooks.addHook('preHandler', async (request, reply) => {
      // Set in preParsing, which every request of this scope passes before it gets here.
      const { bytes, hiddenType } = bodies.get(request)!;
      if (hiddenType !== undefined) request.raw.headers['content-type'] = hiddenType;
      const reception = await receiver.receive(bytes, request.headers);
      if (reception.action === 'respond') return respond(reception.response, reception.error, request, reply);
      request.webhook = reception.delivery.event;
      request.webhookId = reception.delivery.id;
      if (reception.settle) settleWhenEnded(reply.raw, reception.settle);
      return undefined;
    });
    await routes(webhooks);
  };
}

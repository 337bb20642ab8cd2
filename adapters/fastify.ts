/**
 * svc-webhooks/fastify: `verifyWebhook(options)` is a Fastify plugin with its
 * own encapsulated scope, in which `options.routes` registers the webhook
 * routes. There, and only there, bodies are kept as raw Buffers and verified
 * in a preHandler hook, which sets `request.webhook` (the typed event) and
 * `request.webhookId` (the verified `webhook-id`). Routes elsewhere keep
 * Fastify's JSON parsing. A refused request is answered with
 * `{ error: { code, message } }` and the handler never runs.
 */
import type { Buffer } from 'node:buffer';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { WebhookVerificationError } from '../src/core/errors.js';
import type { WebhookEvent } from '../src/core/event.js';
import { tooLarge } from '../src/core/payload.js';
import { checkCallback } from '../src/core/option-checks.js';
import { createReceiver, errorResponse, type ReceiverOptions, type WebhookResponse } from '../src/receive/receiver.js';
import { settleWhenEnded } from '../src/receive/settle-when-ended.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified event; set only on routes registered in `verifyWebhook`'s `routes`. */
    webhook: WebhookEvent;
    /** The verified `webhook-id`, the key to deduplicate on; set only there too. */
    webhookId: string;
  }
}

export interface FastifyWebhookOptions extends ReceiverOptions {
  /**
   * Registers the webhook routes, in the plugin's scope: each of them is
   * verified before its handler runs. Required.
   */
  readonly routes: (webhooks: FastifyInstance) => void | Promise<void>;
  /**
   * Answers a refused request (it must send a reply) instead of the default
   * JSON response. The handler is not called either way.
   * @default answers `error.status` with `{ error: { code, message } }`
   */
  readonly onError?: (error: WebhookVerificationError, request: FastifyRequest, reply: FastifyReply) => void | Promise<void>;
}

export function verifyWebhook(options: FastifyWebhookOptions): FastifyPluginAsync {
  const receiver = createReceiver(options);
  const { maxPayloadBytes } = receiver;
  const { routes, onError } = options;
  checkCallback('onError', onError);
  if (typeof routes !== 'function') throw new TypeError('svc-webhooks: routes must be a function that registers the webhook routes');

  // Headers such as Retry-After apply whoever writes the body.
  const respond = async (
    response: WebhookResponse,
    error: WebhookVerificationError | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<FastifyReply> => {
    reply.headers(response.headers);
    if (error && onError) await onError(error, request, reply);
    else reply.code(response.status).send(response.body);
    return reply;
  };

  // A plain plugin function: Fastify gives it its own scope, so its parsers and hook stay off the parent's routes.
  return async function svcWebhooks(webhooks) {
    webhooks.decorateRequest('webhook', null as unknown as WebhookEvent);
    webhooks.decorateRequest('webhookId', '');
    // Only this scope loses JSON parsing: the signature is over the bytes as sent.
    webhooks.removeAllContentTypeParsers();
    webhooks.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxPayloadBytes }, (_request, body, done) => {
      done(null, body);
    });
    webhooks.setErrorHandler((error, request, reply) => {
      if ((error as { code?: unknown }).code !== 'FST_ERR_CTP_BODY_TOO_LARGE') throw error;
      const refusal = tooLarge(maxPayloadBytes);
      return respond(errorResponse(refusal), refusal, request, reply);
    });
    webhooks.addHook('preHandler', async (request, reply) => {
      // No body at all (no Content-Type) reaches here as undefined: verify it as empty.
      const reception = await receiver.receive((request.body as Buffer | undefined) ?? '', request.headers);
      if (reception.action === 'respond') return respond(reception.response, reception.error, request, reply);
      request.webhook = reception.delivery.event;
      request.webhookId = reception.delivery.id;
      if (reception.settle) settleWhenEnded(reply.raw, reception.settle);
      return undefined;
    });
    await routes(webhooks);
  };
}

/**
 * How the entries on Express and Fastify, their own and NestJS's on either
 * platform, send an answer decided here.
 */
import type { Response } from 'express';
import type { FastifyReply } from 'fastify';
import type { WebhookResponse } from '../src/receive/responses.js';

/** Sends `response` on Express's `res`: its body as JSON, or none. */
export function sendOnExpress(res: Response, { status, headers, body }: WebhookResponse): void {
  // A failed onError may have begun an answer: end it rather than leave the request open.
  if (res.headersSent) res.end();
  else if (body === undefined) res.set(headers).status(status).end();
  else res.set(headers).status(status).json(body);
}

/** Sends `response` on Fastify's `reply`: its body as JSON, or none. */
export function sendOnFastify(reply: FastifyReply, { status, headers, body }: WebhookResponse): void {
  // A failed onError may have begun an answer: end it rather than leave the request open.
  if (reply.raw.headersSent) reply.raw.end();
  else reply.headers(headers).code(status).send(body);
}

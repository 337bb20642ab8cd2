/** Requests signed as the service signs them, for tests: the headers alone, or a whole Fetch Request. */
import { sign } from '../core/sign.js';
import type { WebhookSecret } from '../core/secret.js';
import type { WebhookEvent } from '../core/event.js';
import { newId } from './envelope.js';

/** Options of `signedHeaders()`. */
export interface SignedHeadersOptions {
  /** The endpoint's secret, as the receiver is given it. */
  readonly secret: WebhookSecret;
  /**
   * The `webhook-id`.
   * @default the body's `id` when it is a JSON envelope with one, else a fresh `msg_` id
   */
  readonly id?: string;
  /**
   * Seconds since the Unix epoch, or a `Date`.
   * @default now
   */
  readonly timestamp?: number | Date;
}

/** Options of `signedRequest()`: those of `signedHeaders()`, and where the request goes. */
export interface SignedRequestOptions extends SignedHeadersOptions {
  /**
   * Where the request goes.
   * @default 'http://receiver.test/webhooks'
   */
  readonly url?: string;
}

/** The three signature headers for `body`, and `content-type: application/json`: for supertest, Fastify's inject, Hono's app.request. */
export function signedHeaders(body: string, options: SignedHeadersOptions): Record<string, string> {
  const id = options.id ?? idOf(body) ?? newId('msg');
  const headers = sign(body, { id, timestamp: options.timestamp ?? new Date(), secret: options.secret });
  return { 'content-type': 'application/json', ...headers };
}

/** A POST of `event` (sent as compact JSON) or of `body` as it is, signed as the service signs it. */
export function signedRequest(eventOrBody: WebhookEvent | string, options: SignedRequestOptions): Request {
  const body = bodyOf(eventOrBody);
  return new Request(options.url ?? 'http://receiver.test/webhooks', { method: 'POST', body, headers: signedHeaders(body, options) });
}

/** What a request carries: `event` as compact JSON, or `body` as it is. */
export function bodyOf(eventOrBody: WebhookEvent | string): string {
  return typeof eventOrBody === 'string' ? eventOrBody : JSON.stringify(eventOrBody);
}

function idOf(body: string): string | undefined {
  try {
    const { id } = JSON.parse(body) as { id?: unknown };
    return typeof id === 'string' && id !== '' ? id : undefined;
  } catch {
    return undefined;
  }
}

import type { IncomingMessage } from 'node:http';
import { WebhookVerificationError } from '../core/errors.js';

/** A Node request as Connect-style frameworks (Express, NestJS, Cloud Functions) hand it on. */
export interface ParsedNodeRequest extends IncomingMessage {
  /** What a body parser left, if one ran. */
  readonly body?: unknown;
  /** The bytes as received, kept by a parser's `verify` hook (NestJS `rawBody: true`, Cloud Functions). */
  readonly rawBody?: unknown;
}

const PARSED_BODY_MESSAGE =
  'a body parser consumed the request body before verifyWebhook and kept no raw bytes in req.rawBody. ' +
  'NestJS: create the app with NestFactory.create(AppModule, { rawBody: true }). ' +
  'Express: mount verifyWebhook on the webhook route before express.json() (or use express.raw({ type: "*/*" }) there), ' +
  'or keep the bytes with express.json({ verify: (req, _res, buf) => { req.rawBody = buf } })';

/**
 * The raw body a parser that ran before left on the request: the bytes it
 * kept in `req.rawBody` first, since they are exactly what was sent, else a
 * Buffer or string in `req.body` (`express.raw()`, `express.text()`).
 * Undefined when the body stream is still unread: read it then. Throws
 * `body_already_parsed` when a parser read the stream and kept no raw form.
 */
export function rawBodyLeftByParser(request: ParsedNodeRequest): Uint8Array | string | undefined {
  const { rawBody, body } = request;
  if (isBytes(rawBody) || typeof rawBody === 'string') return rawBody;
  if (isBytes(body) || typeof body === 'string') return body;
  // Express 4's parsers set req.body to {} even when they skip a body: the stream tells whether one read it.
  if (!request.readableDidRead) return undefined;
  throw new WebhookVerificationError('body_already_parsed', PARSED_BODY_MESSAGE);
}

// A tag check rather than instanceof: the bytes may come from another realm.
function isBytes(value: unknown): value is Uint8Array {
  return Object.prototype.toString.call(value) === '[object Uint8Array]';
}

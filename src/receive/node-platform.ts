/**
 * What the entries on Node's HTTP server (Express, Fastify) share: reading a
 * request's body within the limits, finding the raw body a parser left, and
 * knowing when the response ended and with which status.
 */
import { Buffer } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { WebhookBodyError } from '../core/errors.js';
import { tooLarge } from '../core/payload.js';
import { bodyTimeout, checkDeclaredLength, SenderGoneError, type BodyLimits } from './body-limits.js';

/**
 * Reads a Node request body (`declaredLength` is its `Content-Length`), at
 * most `maxPayloadBytes` of it and within the read deadline. Past either it
 * stops reading and throws `payload_too_large` or `body_timeout` at once,
 * without buffering the rest: the caller then answers and should close the
 * connection. A connection lost mid-body throws `SenderGoneError`.
 */
export async function readNodeBody(body: Readable, declaredLength: string | undefined, limits: BodyLimits): Promise<Buffer> {
  const { maxPayloadBytes: maxBytes, deadlines } = limits;
  checkDeclaredLength(declaredLength, maxBytes);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (): void => {
      deadline.cancel();
      body.off('data', onData).off('end', onEnd).off('error', onGone).off('close', onGone);
    };
    const fail = (error: unknown): void => {
      stop();
      body.pause();
      reject(error);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.byteLength;
      if (size > maxBytes) fail(tooLarge(maxBytes));
      else chunks.push(chunk);
    };
    const onEnd = (): void => {
      stop();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onGone = (): void => fail(new SenderGoneError());
    const deadline = deadlines.start(() => fail(bodyTimeout(deadlines.ms)));
    body.on('data', onData).on('end', onEnd).on('error', onGone).on('close', onGone);
  });
}

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

const DECODED_BODY_MESSAGE =
  'a text body parser decoded the request body from a charset other than UTF-8 before verifyWebhook, so the bytes that were signed are lost. ' +
  'Express: mount verifyWebhook on the webhook route before express.text() (or use express.raw({ type: "*/*" }) there), ' +
  'or keep the bytes with express.text({ verify: (req, _res, buf) => { req.rawBody = buf } })';

/**
 * The raw body a parser that ran before left on the request: the bytes it
 * kept in `req.rawBody` first, since they are exactly what was sent, else a
 * Buffer or string in `req.body` (`express.raw()`, `express.text()`).
 * Undefined when the body stream is still unread: read it then. Throws
 * `body_already_parsed` when a parser read the stream and kept no raw form,
 * and `body_decoded` for a string in `req.body` that a text parser decoded
 * from another charset than UTF-8: its UTF-8 bytes are not those sent.
 */
export function rawBodyLeftByParser(request: Pick<ParsedNodeRequest, 'rawBody' | 'body' | 'readableDidRead' | 'headers'>): Uint8Array | string | undefined {
  const { rawBody, body } = request;
  if (isBytes(rawBody) || typeof rawBody === 'string') return rawBody;
  if (isBytes(body)) return body;
  if (typeof body === 'string') {
    if (!decodedAsUtf8(request.headers['content-type'])) throw new WebhookBodyError('body_decoded', DECODED_BODY_MESSAGE);
    return body;
  }
  // Express 4's parsers set req.body to {} even when they skip a body: the stream tells whether one read it.
  if (!request.readableDidRead) return undefined;
  throw new WebhookBodyError('body_already_parsed', PARSED_BODY_MESSAGE);
}

/**
 * The charsets a text parser's string gives back as UTF-8 unchanged, named as iconv-lite (Express's body-parser)
 * reads a name: lower case, letters and digits alone. US-ASCII decodes what UTF-8 does of its bytes, and turns
 * the others into U+FFFD as UTF-8 does an invalid byte.
 */
const UTF8_CHARSETS: ReadonlySet<string> = new Set(['utf8', 'usascii', 'ascii']);

/**
 * Whether a text parser decoded a body of `contentType` as UTF-8: with no charset named (body-parser's
 * default), or with every `charset` parameter one of `UTF8_CHARSETS` (of two, Express 5's body-parser takes
 * the first, Express 4's the last). Any other is taken for another.
 */
function decodedAsUtf8(contentType: string | undefined): boolean {
  // A quoted name's quotes and backslashes go with the other signs.
  for (const [, name] of (contentType ?? '').matchAll(/charset\s*=\s*("(?:[^"\\]|\\.)*"?|[^;\s]*)/gi)) {
    if (!UTF8_CHARSETS.has(name!.toLowerCase().replace(/[^0-9a-z]/g, ''))) return false;
  }
  return true;
}

// A tag check rather than instanceof: the bytes may come from another realm.
function isBytes(value: unknown): value is Uint8Array {
  return Object.prototype.toString.call(value) === '[object Uint8Array]';
}

/**
 * Resolves to the status the route chose, once it ends the response. That is
 * the route's outcome whether or not the sender is still connected: a sender
 * that hung up (the service waits 10 s) retries later and must then find the
 * event done or released by that outcome, never released while the route
 * still runs. A route that never ends leaves it pending, and the claim to
 * its lease.
 */
export function statusWhenEnded(response: ServerResponse): Promise<number> {
  return new Promise((resolve) => {
    // 'finish' never fires once the socket is gone, so watch the route's own end() call.
    const end = response.end;
    response.end = function (this: ServerResponse, ...args: unknown[]) {
      response.end = end;
      resolve(response.statusCode);
      return (end as (...endArgs: unknown[]) => ServerResponse).apply(this, args);
    } as ServerResponse['end'];
  });
}

/**
 * Runs a Node framework's `onError` (`call`), which answers by ending the
 * response, and resolves once it has: at once if it has already, else at the
 * response's end or its connection's close. The refusal's `headers` are set
 * first, so they apply unless `onError` sets its own.
 */
export async function answeredOnNode(response: ServerResponse, headers: Readonly<Record<string, string>>, call: () => unknown): Promise<void> {
  for (const name in headers) response.setHeader(name, headers[name]!);
  await call();
  await new Promise<void>((resolve) => {
    if (response.writableEnded || response.destroyed) return resolve();
    response.once('finish', resolve).once('close', resolve);
  });
}

/**
 * What the entries on Fetch `Request`s and `Response`s (Hono, Fetch, h3,
 * Azure's request) share: reading a body stream within the limits, and
 * their answers: knowing a Response from the user's code, making one, and
 * adding a refusal's headers to it.
 */
import { WebhookBodyError } from '../core/errors.js';
import { tooLarge } from '../core/payload.js';
import { bodyTimeout, checkDeclaredLength, SenderGoneError, type BodyLimits } from './body-limits.js';
import { withinDeadline } from '../base/deadlines.js';
import type { HostAnswers } from './platform.js';

/**
 * Reads a request's body, at most `maxPayloadBytes` of it and within the
 * read deadline. Past either it throws `payload_too_large` or
 * `body_timeout`, so a body sent without a length is never buffered whole
 * and a stalled one never holds the request. A body that broke off throws
 * `SenderGoneError`; a body read (or being read) before throws
 * `body_already_parsed` with `usedMessage`.
 */
export function readRequestBody(request: Request, limits: BodyLimits, usedMessage: string): Promise<Uint8Array> {
  // Plain functions and reactions, not async ones: each async frame costs every request a turn.
  try {
    const declared = request.headers.get('content-length');
    checkDeclaredLength(declared, limits.maxPayloadBytes);
    // A length the connection's framing holds the body to: read it whole, the host's own fastest way
    // (@hono/node-server reads it straight from Node's request, where a stream costs four times the CPU).
    if (declared !== null && DECIMAL.test(declared)) return readDeclared(request, limits, usedMessage);
  } catch (error) {
    return Promise.reject(error);
  }
  return readStream(request, limits, usedMessage);
}

const DECIMAL = /^\d{1,15}$/;
const TIMED_OUT = Symbol('timed out');

/** The body of a declared length, whole; a host that lets it run past that length still gets `payload_too_large`. */
function readDeclared(request: Request, { maxPayloadBytes, deadlines }: BodyLimits, usedMessage: string): Promise<Uint8Array> {
  let reading: Promise<ArrayBuffer>;
  try {
    reading = request.arrayBuffer();
  } catch (error) {
    reading = Promise.reject(error);
  }
  return withinDeadline(deadlines, reading, (): typeof TIMED_OUT => TIMED_OUT).then(
    (body) => {
      if (body === TIMED_OUT) throw bodyTimeout(deadlines.ms);
      if (body.byteLength > maxPayloadBytes) throw tooLarge(maxPayloadBytes);
      return new Uint8Array(body);
    },
    (error: unknown) => {
      // A body locked by a reader, or read before or meanwhile: unusable. Anything else broke off.
      throw error instanceof TypeError ? new WebhookBodyError('body_already_parsed', usedMessage) : new SenderGoneError();
    },
  );
}

/** The body as it streams in, cancelled past the limit or the deadline. */
async function readStream(request: Request, { maxPayloadBytes: maxBytes, deadlines }: BodyLimits, usedMessage: string): Promise<Uint8Array> {
  // A body read before may be unlocked and simply empty. (arrayBuffer() refuses a used body itself.)
  if (request.bodyUsed) throw new WebhookBodyError('body_already_parsed', usedMessage);
  const stream = request.body;
  if (stream?.locked) throw new WebhookBodyError('body_already_parsed', usedMessage);
  if (stream === null) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let expired = false;
  // Cancelling ends the pending read at once (done), however stalled the stream: no race per read.
  const deadline = deadlines.start(() => {
    expired = true;
    reader.cancel().catch(() => undefined);
  });
  try {
    for (;;) {
      let read: Awaited<ReturnType<typeof reader.read>>;
      try {
        read = await reader.read();
      } catch {
        throw expired ? bodyTimeout(deadlines.ms) : new SenderGoneError();
      }
      if (expired) throw bodyTimeout(deadlines.ms);
      if (read.done) break;
      size += read.value.byteLength;
      if (size > maxBytes) {
        // Not awaited: a stalled stream may never finish cancelling.
        reader.cancel().catch(() => undefined);
        throw tooLarge(maxBytes);
      }
      chunks.push(read.value);
    }
  } finally {
    deadline.cancel();
  }
  return chunks.length === 1 ? chunks[0]! : joined(chunks, size);
}

function joined(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/**
 * Whether `value` is a Response. Duck-typed, not `instanceof`: a Response of
 * another realm or polyfill is still one, and @hono/node-server swaps in a
 * global Response of which `Response.json()`'s results are no instances.
 */
export function isResponse(value: unknown): value is Response {
  const response = value as Partial<Response> | null;
  return (
    typeof response === 'object' &&
    response !== null &&
    typeof response.status === 'number' &&
    typeof response.headers === 'object' &&
    response.headers !== null &&
    typeof response.headers.has === 'function'
  );
}

/** The answers of the entries on Fetch `Response`s, whatever their request. */
export const WEB_ANSWERS: HostAnswers<unknown, Response> = {
  isAnswer: isResponse,
  described: 'a Response',
  statusOf: (response) => response.status,
  make: (_request, { status, headers, body }) => webResponse(status, headers, body),
  withMissingHeaders(response, headers) {
    // Headers.has() reads names in any letter case.
    const missing = Object.entries(headers).filter(([name]) => !response.headers.has(name));
    if (missing.length === 0) return response;
    // A copy: the headers of a Response from fetch() cannot change. Throws for a body already read.
    const copy = new Response(response.body, response);
    for (const [name, value] of missing) copy.headers.set(name, value);
    return copy;
  },
};

/** The JSON answer for a response decided by svc-webhooks, or none on 204. */
export function webResponse(status: number, headers: Readonly<Record<string, string>>, body: unknown): Response {
  // No headers, no HeadersInit for the host to convert: the same Response, at about half the cost.
  if (body === undefined) return isEmpty(headers) ? new Response(null, { status }) : new Response(null, { status, headers });
  return new Response(JSON.stringify(body), { status, headers: { ...headers, 'content-type': 'application/json' } });
}

function isEmpty(record: Readonly<Record<string, string>>): boolean {
  for (const _ in record) return false;
  return true;
}

/** The raw body as given (string, bytes or ArrayBuffer), read without a copy and within its size bound. */
import { bufferBytes, utf8Length, viewBytes } from './runtime-crypto.js';
import { WebhookBodyError } from './errors.js';
import { WebhookOptionsError } from '../base/options-error.js';

/** The raw request body, exactly as received. */
export type WebhookPayload = string | Uint8Array | ArrayBuffer;

/**
 * The body as something `Hmac.update` and `JSON.parse` take, without copying
 * or re-encoding bytes. Throws `payload_too_large` past `maxBytes`, and
 * `WebhookOptionsError` for a body that is not raw (most often one a JSON parser
 * already turned into an object).
 */
export function rawPayload(payload: WebhookPayload, maxBytes: number): string | Uint8Array {
  if (typeof payload === 'string') {
    // Each UTF-16 unit is 1 to 3 UTF-8 bytes: count only when in doubt. The byte count alone decides; the
    // comparisons before it only spare it, so changing them changes no answer.
    // Stryker disable next-line ConditionalExpression,EqualityOperator
    if (payload.length > maxBytes || (payload.length * 3 > maxBytes && utf8Length(payload) > maxBytes)) {
      throw tooLarge(maxBytes);
    }
    return payload;
  }
  let bytes: Uint8Array;
  // Tag checks rather than instanceof: bodies may come from another realm.
  if (ArrayBuffer.isView(payload)) bytes = viewBytes(payload);
  else if (tagOf(payload) === 'ArrayBuffer') bytes = bufferBytes(payload as ArrayBuffer);
  else {
    throw new WebhookOptionsError(
      `svc-webhooks: the payload must be the raw body (string, Uint8Array or ArrayBuffer), not ${describe(payload)}; ` +
        'verify before any JSON body parser runs',
    );
  }
  if (bytes.byteLength > maxBytes) throw tooLarge(maxBytes);
  return bytes;
}

/** The refusal for a body past `maxBytes`. */
export function tooLarge(maxBytes: number): WebhookBodyError {
  return new WebhookBodyError('payload_too_large', `the body is larger than ${maxBytes} bytes`);
}

function tagOf(value: unknown): string {
  return Object.prototype.toString.call(value).slice(8, -1);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  return typeof value === 'object' ? `an object (${tagOf(value)})` : typeof value;
}

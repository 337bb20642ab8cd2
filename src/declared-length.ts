import type { WebhookVerificationError } from './errors.js';
import { tooLarge } from './payload.js';

/**
 * The `payload_too_large` refusal for a request whose `Content-Length`
 * already says the body is past `maxBytes`, so not one byte of it needs
 * reading; `undefined` when the header allows the body or is absent.
 */
export function declaredLengthRefusal(
  contentLength: string | null | undefined,
  maxBytes: number,
): WebhookVerificationError | undefined {
  if (contentLength === null || contentLength === undefined) return undefined;
  return Number(contentLength) > maxBytes ? tooLarge(maxBytes) : undefined;
}

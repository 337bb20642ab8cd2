import { tooLarge } from '../core/payload.js';

/**
 * Throws `payload_too_large` when a request's `Content-Length` already says
 * the body is past `maxBytes`, so not one byte of it needs reading. An
 * absent header passes: the reader then enforces the limit as it reads.
 */
export function checkDeclaredLength(contentLength: string | null | undefined, maxBytes: number): void {
  // An absent header is Number(undefined) or Number(null): NaN or 0, and either passes.
  if (Number(contentLength) > maxBytes) throw tooLarge(maxBytes);
}

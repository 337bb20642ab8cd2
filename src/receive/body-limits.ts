/** What a body read enforces, and the ways it can end short of a body. */
import { WebhookBodyError, type WebhookError } from '../core/errors.js';
import { tooLarge } from '../core/payload.js';
import type { DeadlineQueue } from '../base/deadlines.js';
import { refused, type DispatchResult } from './responses.js';

/** What a body reader enforces: the receiver's size limit, and its read deadline (`bodyTimeoutMs` after the read starts). */
export interface BodyLimits {
  readonly maxPayloadBytes: number;
  readonly deadlines: DeadlineQueue;
}

/**
 * Throws `payload_too_large` when a request's `Content-Length` already says
 * the body is past `maxBytes`, so not one byte of it needs reading. An
 * absent header passes: the reader then enforces the limit as it reads.
 */
export function checkDeclaredLength(contentLength: string | null | undefined, maxBytes: number): void {
  // An absent header is Number(undefined) or Number(null): NaN or 0, and either passes.
  if (Number(contentLength) > maxBytes) throw tooLarge(maxBytes);
}

/** The refusal for a body that did not arrive whole within `timeoutMs`. */
export function bodyTimeout(timeoutMs: number): WebhookBodyError {
  return new WebhookBodyError('body_timeout', `the body did not arrive within ${timeoutMs} ms`);
}

/**
 * The answer to a refusal met while reading the body. When it left part of
 * the body unread, the answer closes the connection rather than let the
 * server drain it (a stalled sender would hold it, a large body would be
 * read to its end for nothing).
 */
export function bodyRefusal(error: WebhookError): DispatchResult {
  const unread = error.code === 'payload_too_large' || error.code === 'body_timeout';
  return refused(error, unread ? { connection: 'close' } : {});
}

/**
 * A body that broke off before its end: the connection is gone, so nobody is
 * left to answer, and it is no failure worth a log line.
 */
export class SenderGoneError extends Error {
  override readonly name = 'SenderGoneError';

  constructor() {
    super('svc-webhooks: the connection closed before the body ended');
  }
}

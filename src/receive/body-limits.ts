/** The ways a body read can end short of a body: the limits it enforces, and what each answers. */
import { WebhookVerificationError } from '../core/errors.js';
import { errorResponse, type WebhookResponse } from './receiver.js';

/** What a body reader enforces: the receiver's size limit and read deadline. */
export interface BodyLimits {
  readonly maxPayloadBytes: number;
  readonly bodyTimeoutMs: number;
}

/** The refusal for a body that did not arrive whole within `timeoutMs`. */
export function bodyTimeout(timeoutMs: number): WebhookVerificationError {
  return new WebhookVerificationError('body_timeout', `the body did not arrive within ${timeoutMs} ms`);
}

/**
 * The answer to a refusal met while reading the body. When it left part of
 * the body unread, the answer closes the connection rather than let the
 * server drain it (a stalled sender would hold it, a large body would be
 * read to its end for nothing).
 */
export function bodyRefusal(error: WebhookVerificationError): WebhookResponse {
  const unread = error.code === 'payload_too_large' || error.code === 'body_timeout';
  return errorResponse(error, unread ? { connection: 'close' } : {});
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

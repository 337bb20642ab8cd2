/** A platform for the pipeline that answers what was decided as it is: for tests of the flow itself. */
import type { Platform } from '../../src/receive/platform.js';
import type { WebhookResponse } from '../../src/receive/responses.js';
import type { SignedRequest } from './signed-request.js';

/** Takes a signed request's body and headers, and answers the `WebhookResponse` decided. */
export function decidedAnswers(): Platform<SignedRequest, WebhookResponse> {
  return {
    entry: 'fetch',
    body: (request) => request.body,
    headers: (request) => request.headers,
    userRequest: (request) => request,
    send: (_request, response) => response,
    statusOf: (_request, response) => response?.status ?? 0,
  };
}

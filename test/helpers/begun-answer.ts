/**
 * An `onError` on a Node response that begins its answer and then throws, and
 * the check that the sender gets that answer ended, not a second one or a
 * connection reset.
 */
import type { ServerResponse } from 'node:http';
import { expect, vi } from 'vitest';
import type { RouteSpy } from './adapter-contract.js';
import { CUSTOM_ERROR_STATUS } from './adapter-contract.js';
import { SECRET, signedRequest } from './signed-request.js';

const BEGUN_BODY = 'partial';

/** Writes the head and part of a body to `response`, then throws. */
export function beginAnswerThenThrow(response: ServerResponse): never {
  response.writeHead(CUSTOM_ERROR_STATUS, { 'content-type': 'text/plain' });
  response.write(BEGUN_BODY);
  throw new Error('onError broke');
}

/** POSTs a refused delivery to `${url}/webhooks`, whose onError is `beginAnswerThenThrow`. */
export async function expectBegunAnswerEnded(url: string, route: RouteSpy): Promise<void> {
  const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
  try {
    const { body, headers } = signedRequest({ secret: SECRET.replace('w', 'W') });
    const response = await fetch(`${url}/webhooks`, { method: 'POST', body, headers });
    expect([response.status, await response.text()]).toEqual([CUSTOM_ERROR_STATUS, BEGUN_BODY]);
    expect(route.calls).toEqual([]);
    // The refusal's line, then onError's.
    expect(log.mock.calls.map(([line]) => String(line).replace(/ \(.*/, ''))).toEqual([
      'svc-webhooks: the request with webhook-id "evt_1" was refused 400 invalid_signature',
      'svc-webhooks: onError failed',
    ]);
  } finally {
    log.mockRestore();
  }
}

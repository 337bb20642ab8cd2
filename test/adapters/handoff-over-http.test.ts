/**
 * `handoff` on every entry, over a real listening server: 202 with no body
 * once the queue recorded the event, 503 `handoff_failed` with Retry-After
 * when it did not, and a default log line that names the queue, not a
 * handler.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { verifyWebhook as fetchWebhook } from '../../adapters/fetch.js';
import { verifyWebhook as h3Webhook } from '../../adapters/h3.js';
import { verifyWebhook as azureWebhook } from '../../adapters/azure.js';
import { verifyWebhook as lambdaWebhook } from '../../adapters/lambda.js';
import type { Handoff } from '../../src/index.js';
import { serveAzure, serveExpressHandlers, serveFastifyHandlers, serveFetch, serveH3, serveHonoHandlers, serveLambda, type ServedApp } from '../helpers/adapter-servers.js';
import { now, SECRET, signedRequest } from '../helpers/signed-request.js';
import { OUTCOME_HEADER } from '../../src/core/outcome-header.js';

type Serve = (handoff: Handoff, outcomeHeader?: 'on') => Promise<ServedApp>;

const ENTRIES: ReadonlyArray<readonly [string, Serve]> = [
  ['express', (handoff, outcomeHeader) => serveExpressHandlers({ secret: SECRET, now, handoff, outcomeHeader })],
  ['hono', (handoff, outcomeHeader) => serveHonoHandlers({ secret: SECRET, now, handoff, outcomeHeader })],
  ['fastify', (handoff, outcomeHeader) => serveFastifyHandlers({ secret: SECRET, now, handoff, outcomeHeader } as never)],
  ['fetch', (handoff, outcomeHeader) => serveFetch(fetchWebhook({ secret: SECRET, now, handoff, outcomeHeader }))],
  ['lambda', (handoff, outcomeHeader) => serveLambda('http-api', lambdaWebhook({ secret: SECRET, now, handoff, outcomeHeader }))],
  ['azure', (handoff, outcomeHeader) => serveAzure(azureWebhook({ secret: SECRET, now, handoff, outcomeHeader }))],
  ['h3', (handoff, outcomeHeader) => serveH3(h3Webhook({ secret: SECRET, now, handoff, outcomeHeader }))],
];

afterEach(() => {
  vi.restoreAllMocks();
});

describe.each(ENTRIES)('handoff on %s, over HTTP', (_entry, serve) => {
  async function post(handoff: Handoff, outcomeHeader?: 'on'): Promise<Response> {
    const app = await serve(handoff, outcomeHeader);
    try {
      const response = await fetch(`${app.url}/webhooks`, { method: 'POST', ...signedRequest() });
      await response.clone().arrayBuffer();
      return response;
    } finally {
      await app.close();
    }
  }

  it('answers 202 with an empty body and no content-type once the queue recorded the event', async () => {
    const response = await post({ hand: async () => undefined });
    expect(response.status).toBe(202);
    expect(response.headers.get('content-type')).toBeNull();
    expect(await response.text()).toBe('');
  });

  it("says queued, or handoff_failed, in the outcome header with outcomeHeader 'on'", async () => {
    expect((await post({ hand: async () => undefined }, 'on')).headers.get(OUTCOME_HEADER)).toBe('queued; handler-ms=0; key-id=0');
    vi.spyOn(console, 'error').mockImplementation(() => {});
    expect((await post({ hand: () => Promise.reject(new Error('down')) }, 'on')).headers.get(OUTCOME_HEADER)).toBe('handoff_failed; handler-ms=0; key-id=0');
  });

  it('answers 503 handoff_failed with Retry-After, and logs one line naming the queue, not a handler, when the queue failed', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    const response = await post({ hand: () => Promise.reject(new Error('redis down')) });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('handoff_failed');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe('svc-webhooks: event "evt_1" of type "call.missed": the queue did not record it (Error); the sender will retry it');
    expect(lines[0]).not.toContain('handler');
  });
});

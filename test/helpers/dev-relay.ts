/**
 * A relay of `svc-webhooks dev` in this process, in front of an Express
 * receiver built with svc-webhooks (`on` for the spec's five types, its
 * default dedup store, `outcomeHeader: 'on'`), both on free ports.
 */
import { startRelay, type Relay, type RelayOptions } from '../../src/cli/dev/relay.js';
import type { EventHandlers, WebhookEvent } from '../../src/index.js';
import { signedRequest } from '../../src/testing/index.js';
import { serveExpressHandlers, type ServedApp } from './adapter-servers.js';

export const RELAY_SECRET = 'whsec_cmVsYXktc2VjcmV0LW9mLXRoZS1kZXYtY29tbWFuZA==';

export interface RelayRig {
  readonly relay: Relay;
  readonly receiver: ServedApp;
  /** What the receiver's handlers ran for, by event id. */
  readonly handled: string[];
  /** Calls the relay's API with the run's token (and a body, as a POST). */
  api(path: string, body?: unknown): Promise<Response>;
  /** POSTs `event`, signed with RELAY_SECRET (`timestamp` at will), to the relay's /webhooks. */
  deliver(event: WebhookEvent, timestamp?: Date, tamper?: boolean): Promise<Response>;
  close(): Promise<void>;
}

/** Starts the receiver and the relay in front of it; `options` override the relay's. */
export async function startRelayRig(options: Partial<RelayOptions> = {}): Promise<RelayRig> {
  const handled: string[] = [];
  const record = (event: WebhookEvent): void => void handled.push(event.id);
  const on: EventHandlers = { 'call.missed': record, 'message.received': record, 'webhook.test': record, 'transcript.ready': record, 'ai_summary.ready': record };
  const receiver = await serveExpressHandlers({
    secret: RELAY_SECRET,
    outcomeHeader: 'on',
    on,
  });
  const relay = await startRelay({ forward: `${receiver.url}/webhooks`, secrets: [RELAY_SECRET], port: 0, ...options });
  return {
    relay,
    receiver,
    handled,
    api: (path, body) =>
      fetch(new URL(path, relay.webhookUrl), {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${relay.token}`, 'content-type': 'application/json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      }),
    async deliver(event, timestamp = new Date(), tamper = false) {
      const request = signedRequest(event, { secret: RELAY_SECRET, timestamp, url: relay.webhookUrl });
      if (!tamper) return fetch(request);
      const body = (await request.text()).replace('"data":{', '"data":{"forged":true,');
      return fetch(relay.webhookUrl, { method: 'POST', headers: request.headers, body });
    },
    async close() {
      await relay.close();
      await receiver.close();
    },
  };
}

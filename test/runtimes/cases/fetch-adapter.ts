/**
 * The Fetch adapter served by the runtime's own server (Node's HTTP server,
 * Bun.serve, Deno.serve, workerd's fetch) and reached over its transport.
 */
import { MemoryDedupStore, sign, type WebhookEvent } from 'svc-webhooks';
import { verifyWebhook, type FetchWebhook, type FetchHandlerOptions } from 'svc-webhooks/fetch';
import { assert, assertEqual, type ConformanceCase } from '../harness.js';
import { serveFetch, type Served } from '../serve.js';

const SECRET = 'whsec_ZmV0Y2gtYWRhcHRlci1jb25mb3JtYW5jZS1zZWNyZXQ=';
const ID = 'msg_fetch_1';
const BODY = JSON.stringify({ id: ID, type: 'message.received', data: { object: { id: 'txt_1', text: 'hé ✓' } } });
const INVALID_SIGNATURE = { error: { code: 'invalid_signature', message: 'no v1 signature in webhook-signature matches the secret' } };

function signed(body = BODY, secret = SECRET): RequestInit {
  const headers = sign(body, { id: ID, timestamp: new Date(), secret });
  return { method: 'POST', body, headers: { ...headers, 'content-type': 'application/json' } };
}

/** Serves a handler that records each event and answers `answer()`; runs `test`, then closes. */
async function withServed(
  options: Omit<Partial<FetchHandlerOptions>, 'secret' | 'tenants'>,
  answer: () => Response | void,
  test: (served: Served, calls: WebhookEvent[]) => Promise<void>,
): Promise<void> {
  const calls: WebhookEvent[] = [];
  const handler = verifyWebhook({ secret: SECRET, ...options }, (event) => {
    calls.push(event);
    return answer();
  });
  await withHandler(handler, (served) => test(served, calls));
}

/** Serves `handler`; runs `test`, then closes. */
async function withHandler(handler: FetchWebhook, test: (served: Served) => Promise<void>): Promise<void> {
  const served = await serveFetch(handler);
  try {
    await test(served);
  } finally {
    await served.close();
  }
}

async function answerOf(response: Response): Promise<[number, unknown]> {
  const text = await response.text();
  return [response.status, text === '' ? '' : JSON.parse(text)];
}

/** Delivers like the service: a 409 (another delivery holds the claim) is tried again shortly. */
async function deliver(served: Served, init: () => RequestInit): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const response = await served.fetch('/webhooks', init());
    if (response.status !== 409 || attempt === 20) return response;
    await response.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A body of `bytes` spaces sent in chunks, without a length. */
function chunkedBody(bytes: number): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(1024).fill(0x20);
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) return controller.close();
      sent += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
}

export const cases: readonly ConformanceCase[] = [
  {
    name: 'fetch adapter: a signed event reaches the handler once, a tampered one gets 400 invalid_signature',
    run: () =>
      withServed({}, () => undefined, async (served, calls) => {
        assertEqual(await answerOf(await served.fetch('/webhooks', signed())), [204, ''], 'signed');
        assertEqual(calls, [JSON.parse(BODY)], 'handler calls');
        const tampered = { ...signed(), body: BODY.replace('txt_1', 'txt_2') };
        assertEqual(await answerOf(await served.fetch('/webhooks', tampered)), [400, INVALID_SIGNATURE], 'tampered');
        assertEqual(calls.length, 1, 'handler calls after the tampered one');
      }),
  },
  {
    name: "fetch adapter: the handler's Response is sent; a repeat is a duplicate with MemoryDedupStore",
    run: async () => {
      const dedup = new MemoryDedupStore();
      try {
        await withServed({ dedup: { store: dedup } }, () => Response.json({ queued: true }, { status: 202 }), async (served, calls) => {
          assertEqual(await answerOf(await deliver(served, () => signed())), [202, { queued: true }], 'first');
          assertEqual(await answerOf(await deliver(served, () => signed())), [200, { received: true, duplicate: true }], 'repeat');
          assertEqual(calls.length, 1, 'handler calls');
        });
      } finally {
        dedup.close();
      }
    },
  },
  {
    name: 'fetch adapter: a throwing handler gets a fixed 500 and its retry runs the handler again',
    run: async () => {
      const dedup = new MemoryDedupStore();
      let failures = 1;
      const answer = (): void => {
        if (failures-- > 0) throw new Error('secret detail');
      };
      try {
        await withServed({ dedup: { store: dedup }, onHandlerError: () => undefined }, answer, async (served, calls) => {
          const failed = { error: { code: 'handler_failed', message: 'the handler for this event failed; retry later' } };
          assertEqual(await answerOf(await deliver(served, () => signed())), [500, failed], 'failure');
          assertEqual(await answerOf(await deliver(served, () => signed())), [204, ''], 'retry');
          assertEqual(calls.length, 2, 'handler calls');
        });
      } finally {
        dedup.close();
      }
    },
  },
  {
    name: "fetch adapter with on: each type's handler runs once and answers 204, a throwing one 500 until its retry",
    run: async () => {
      const dedup = new MemoryDedupStore();
      const calls: string[] = [];
      let failures = 1;
      const on = {
        'message.received': (event: WebhookEvent) => {
          calls.push(event.id);
          if (failures-- > 0) throw new Error('secret detail');
        },
      };
      try {
        await withHandler(verifyWebhook({ secret: SECRET, dedup: { store: dedup }, on, onHandlerError: () => undefined }), async (served) => {
          assertEqual((await answerOf(await deliver(served, () => signed())))[0], 500, 'failure');
          assertEqual(await answerOf(await deliver(served, () => signed())), [204, ''], 'retry');
          assertEqual(await answerOf(await deliver(served, () => signed())), [200, { received: true, duplicate: true }], 'repeat');
          assertEqual(calls, [ID, ID], 'handler calls');
        });
      } finally {
        dedup.close();
      }
    },
  },
  {
    name: 'fetch adapter: a body past maxPayloadBytes gets 413, with a length or chunked',
    run: () =>
      withServed({ maxPayloadBytes: 4096 }, () => undefined, async (served, calls) => {
        const large = JSON.stringify({ id: ID, pad: 'x'.repeat(8192) });
        const [status] = await answerOf(await served.fetch('/webhooks', signed(large)));
        assertEqual(status, 413, 'with Content-Length');
        const chunked = { ...signed(), body: chunkedBody(64 * 1024), duplex: 'half' } as RequestInit;
        const response = await served.fetch('/webhooks', chunked);
        const body = (await response.json()) as { error: { code: string } };
        assertEqual([response.status, body.error.code], [413, 'payload_too_large'], 'chunked');
        assert(calls.length === 0, 'the handler ran');
      }),
  },
];

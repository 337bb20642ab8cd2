/**
 * verifyAsync on every runtime, those without node:crypto too: the
 * interop fixtures (fixtures/vectors.json) give their event or their error
 * code, errors keep their classes, and the synchronous verify() works where
 * node:crypto is and elsewhere throws a WebhookOptionsError naming
 * verifyAsync.
 */
import { ERROR_CODES, WebhookError, WebhookOptionsError, verify, verifyAsync } from 'svc-webhooks';
import vectors from '../../../fixtures/vectors.json' with { type: 'json' };
import { assert, assertEqual, thrown, type ConformanceCase } from '../harness.js';
import { nowSeconds, webSign, withoutNode } from '../web-sign.js';

const SECRET = 'whsec_dmVyaWZ5LWFzeW5jLWNvbmZvcm1hbmNlLXNlY3JldA==';
const ID = 'msg_async_1';
const BODY = JSON.stringify({ id: ID, type: 'call.missed', data: { object: { id: 'call_1' } } });

function bytesOf(base64: string): Uint8Array {
  return Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
}

/** The event type verifyAsync resolves to, or `{ error: code }` for a WebhookError it rejects with. */
async function outcome(verifying: Promise<{ type: string }>): Promise<unknown> {
  try {
    return { type: (await verifying).type };
  } catch (error) {
    if (!(error instanceof WebhookError)) throw error;
    assertEqual([error.name, error.status], [ERROR_CODES[error.code].errorClass, ERROR_CODES[error.code].status], `class and status of ${error.code}`);
    return { error: error.code };
  }
}

export const cases: readonly ConformanceCase[] = [
  {
    name: 'verifyAsync: every interop vector gives its event type or its error code',
    run: async () => {
      const wrong: string[] = [];
      for (const vector of vectors) {
        const got = await outcome(verifyAsync(bytesOf(vector.payloadBase64), vector.headers, vector.secret, { now: () => vector.nowMs }));
        if (JSON.stringify(got) !== JSON.stringify(vector.expected)) wrong.push(`${vector.name}: ${JSON.stringify(got)}`);
      }
      assertEqual(wrong, [], 'vectors answered otherwise');
      assert(vectors.length > 20, 'the vectors were read');
    },
  },
  {
    name: 'verifyAsync: a body signed with Web Crypto verifies as a string, bytes and an ArrayBuffer; tampered and stale ones are refused',
    run: async () => {
      const headers = await webSign(BODY, ID, nowSeconds(), SECRET);
      const bytes = new TextEncoder().encode(BODY);
      for (const body of [BODY, bytes, bytes.slice().buffer]) assertEqual(await outcome(verifyAsync(body, headers, SECRET)), { type: 'call.missed' }, 'signed');
      assertEqual(await outcome(verifyAsync(BODY.replace('call_1', 'call_2'), headers, SECRET)), { error: 'invalid_signature' }, 'tampered');
      const stale = await webSign(BODY, ID, nowSeconds() - 600, SECRET);
      assertEqual(await outcome(verifyAsync(BODY, stale, SECRET)), { error: 'timestamp_too_old' }, 'stale');
    },
  },
  {
    name: 'verifyAsync: a malformed secret rejects with a WebhookOptionsError',
    run: async () => {
      const error = await verifyAsync(BODY, {}, 'whsec_***').then(
        () => undefined,
        (rejected: unknown) => rejected,
      );
      assert(error instanceof WebhookOptionsError, `expected a WebhookOptionsError, got ${String(error)}`);
    },
  },
  {
    name: 'verify(): synchronous where node:crypto is, else a WebhookOptionsError naming verifyAsync and the entries',
    run: async () => {
      const headers = await webSign(BODY, ID, nowSeconds(), SECRET);
      if (!withoutNode()) {
        assertEqual(verify(BODY, headers, SECRET).id, ID, 'event id');
        return;
      }
      const error = thrown(() => verify(BODY, headers, SECRET), 'verify');
      assert(error instanceof WebhookOptionsError, `expected a WebhookOptionsError, got ${String(error)}`);
      assert(/verifyAsync\(\).*svc-webhooks\/fetch.*svc-webhooks\/hono/.test(error.message), `message: ${error.message}`);
    },
  },
];

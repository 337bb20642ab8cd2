/**
 * The core API on every runtime: signing, verifying over each header shape
 * and body type, each error code, and secret rotation. Imports the built
 * package by name, as a user would.
 */
import {
  ERROR_CODES,
  Webhook,
  WebhookError,
  WebhookOptionsError,
  sign,
  verify,
  verifyDelivery,
  type WebhookErrorCode,
} from 'svc-webhooks';
import { assert, assertEqual, thrown, type ConformanceCase } from '../harness.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NEXT_SECRET = 'whsec_c2Vjb25kLXNlY3JldC1mb3ItY29uZm9ybWFuY2U=';
const LEGACY_SECRET = 'a-legacy-secret-used-as-raw-bytes';
const ID = 'msg_2Lz6bUJN7mG2h7aQyKcW3g';
const NOW_SECONDS = 1_700_000_000;
const now = (): number => NOW_SECONDS * 1000;
const BODY = JSON.stringify({ id: ID, type: 'message.received', data: { object: { id: 'txt_1', text: 'hé ✓' } } });

// The published Standard Webhooks test vector.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  payload: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

function signed(secret: string | readonly string[] = SECRET, timestamp = NOW_SECONDS): Record<string, string> {
  return { ...sign(BODY, { id: ID, timestamp, secret }) };
}

function expectCode(fn: () => unknown, code: WebhookErrorCode): void {
  const error = thrown(fn, code);
  assert(error instanceof WebhookError, `expected a WebhookError, got ${String(error)}`);
  assertEqual([error.code, error.name], [code, ERROR_CODES[code].errorClass], 'code and class');
  assertEqual(error.status, ERROR_CODES[code].status, 'status');
}

function expectOptionsError(fn: () => unknown, what: string): void {
  const error = thrown(fn, what);
  assert(error instanceof WebhookOptionsError && error instanceof TypeError, `expected a WebhookOptionsError, got ${String(error)}`);
  assertEqual((error as WebhookOptionsError).code, 'invalid_option', 'code');
}

function expectVerifies(payload: string | Uint8Array | ArrayBuffer, headers: Parameters<typeof verify>[1]): void {
  const event = verify(payload, headers, SECRET, { now });
  assertEqual(event, JSON.parse(BODY), 'event');
}

const encoded = new TextEncoder().encode(BODY);

export const cases: readonly ConformanceCase[] = [
  {
    name: 'core: sign then verify, whsec_ secret',
    run: () => {
      const delivery = verifyDelivery(BODY, signed(), SECRET, { now });
      assertEqual([delivery.id, delivery.timestamp, delivery.event.type], [ID, NOW_SECONDS, 'message.received'], 'delivery');
    },
  },
  {
    name: 'core: sign then verify, legacy secret',
    run: () => assertEqual(verify(BODY, signed(LEGACY_SECRET), LEGACY_SECRET, { now }).id, ID, 'event id'),
  },
  {
    name: 'core: sign reproduces the Standard Webhooks vector',
    run: () => {
      const headers = sign(VECTOR.payload, { id: VECTOR.id, timestamp: VECTOR.timestamp, secret: VECTOR.secret });
      assertEqual(headers['webhook-signature'], VECTOR.signature, 'signature');
    },
  },
  {
    name: 'core: the vector signature verifies (then fails as a non-envelope)',
    run: () => {
      const headers = { 'webhook-id': VECTOR.id, 'webhook-timestamp': String(VECTOR.timestamp), 'webhook-signature': VECTOR.signature };
      const options = { now: () => VECTOR.timestamp * 1000 };
      expectCode(() => verify(VECTOR.payload, headers, VECTOR.secret, options), 'invalid_payload');
      expectCode(() => verify(VECTOR.payload.replace('2', '3'), headers, VECTOR.secret, options), 'invalid_signature');
    },
  },
  { name: 'headers: Fetch Headers', run: () => expectVerifies(BODY, new Headers(signed())) },
  {
    name: 'headers: plain record in any key case',
    run: () => {
      const headers = signed();
      expectVerifies(BODY, {
        'Webhook-Id': headers['webhook-id'],
        'WEBHOOK-TIMESTAMP': headers['webhook-timestamp'],
        'webhook-signature': headers['webhook-signature'],
      });
    },
  },
  {
    name: 'headers: Node-style repeated signature header',
    run: () => {
      const headers = signed();
      expectVerifies(BODY, { ...headers, 'webhook-signature': ['v1,bm90LXRoaXMtb25l', headers['webhook-signature'] ?? ''] });
    },
  },
  { name: 'body: string', run: () => expectVerifies(BODY, signed()) },
  { name: 'body: Uint8Array', run: () => expectVerifies(encoded, signed()) },
  { name: 'body: ArrayBuffer', run: () => expectVerifies(encoded.slice().buffer, signed()) },
  {
    name: 'body: Uint8Array view into a larger buffer',
    run: () => {
      const padded = new Uint8Array(encoded.length + 16);
      padded.set(encoded, 8);
      expectVerifies(padded.subarray(8, 8 + encoded.length), signed());
    },
  },
  {
    name: 'body: a parsed object is refused with WebhookOptionsError',
    run: () => expectOptionsError(() => verify(JSON.parse(BODY), signed(), SECRET, { now }), 'object'),
  },
  {
    name: 'error: missing_header for each header',
    run: () => {
      for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
        const headers = signed();
        delete headers[name];
        expectCode(() => verify(BODY, headers, SECRET, { now }), 'missing_header');
      }
    },
  },
  {
    name: 'error: invalid_timestamp',
    run: () => expectCode(() => verify(BODY, { ...signed(), 'webhook-timestamp': '1e9' }, SECRET, { now }), 'invalid_timestamp'),
  },
  {
    name: 'error: timestamp_too_old and timestamp_too_new',
    run: () => {
      expectCode(() => verify(BODY, signed(SECRET, NOW_SECONDS - 301), SECRET, { now }), 'timestamp_too_old');
      expectCode(() => verify(BODY, signed(SECRET, NOW_SECONDS + 301), SECRET, { now }), 'timestamp_too_new');
    },
  },
  {
    name: 'error: invalid_signature for a wrong secret and a changed body',
    run: () => {
      expectCode(() => verify(BODY, signed(NEXT_SECRET), SECRET, { now }), 'invalid_signature');
      expectCode(() => verify(`${BODY} `, signed(), SECRET, { now }), 'invalid_signature');
    },
  },
  {
    name: 'error: invalid_payload when the envelope id differs',
    run: () => {
      const body = BODY.replace(ID, 'msg_other');
      const headers = { ...sign(body, { id: ID, timestamp: NOW_SECONDS, secret: SECRET }) };
      expectCode(() => verify(body, headers, SECRET, { now }), 'invalid_payload');
    },
  },
  {
    name: 'error: payload_too_large',
    run: () => expectCode(() => verify(encoded, signed(), SECRET, { now, maxPayloadBytes: encoded.length - 1 }), 'payload_too_large'),
  },
  {
    name: 'error: a malformed secret is a WebhookOptionsError',
    run: () => expectOptionsError(() => new Webhook('whsec_***'), 'secret'),
  },
  {
    name: 'rotation: two signatures, either secret verifies',
    run: () => {
      const headers = signed([SECRET, NEXT_SECRET]);
      assertEqual(headers['webhook-signature']?.split(' ').length, 2, 'signature entries');
      assertEqual(verify(BODY, headers, NEXT_SECRET, { now }).id, ID, 'new secret');
      assertEqual(verify(BODY, signed(SECRET), [NEXT_SECRET, SECRET], { now }).id, ID, 'list of secrets');
    },
  },
  {
    name: 'Webhook: bound secrets sign and verify',
    run: () => {
      const webhook = new Webhook([SECRET, NEXT_SECRET], { now });
      const headers = { ...webhook.sign(encoded, { id: ID, timestamp: new Date(NOW_SECONDS * 1000) }) };
      assertEqual(webhook.verify(BODY, new Headers(headers)).id, ID, 'event id');
      expectCode(() => webhook.verify(BODY, { ...headers, 'webhook-signature': 'v1,AAAA' }), 'invalid_signature');
    },
  },
];

/**
 * What a refusal may say. Its message goes back to whoever sent the request,
 * so it must not carry the secret, the signature received, the body, nor the
 * signature the receiver expected: a message with the latter would sign any
 * body for anyone who asks.
 */
import { Buffer } from 'node:buffer';
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sign, verify, WebhookError, type WebhookErrorCode } from '../../src/index.js';
import { createReceiver } from '../../src/receive/receiver.js';
import { verifyAndClaim } from '../helpers/receiver-steps.js';

const SECRETS = ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'legacy-secret-used-as-utf8'];
const NOW = 1_795_000_000;
const clock = { now: () => NOW * 1000 };
const body = JSON.stringify({ id: 'evt_1', type: 'call.missed', data: { object: { id: 'call_1' } } });
const headers = sign(body, { id: 'evt_1', timestamp: NOW, secret: 'whsec_c2Vjb25kLXNlY3JldC1mb3Itcm90YXRpb24tMzI=' });

interface Request {
  readonly body: string;
  readonly headers: Record<string, string>;
}

const keyOf = (secret: string) => (secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret));

/** Every form in which a secret, a signature or the body could leak. */
function forbiddenIn({ body: sent, headers: received }: Request): string[] {
  const id = received['webhook-id'] ?? '';
  const timestamp = received['webhook-timestamp'] ?? '';
  const expected = SECRETS.map((secret) => createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${sent}`).digest());
  const keys = SECRETS.map(keyOf);
  return [
    ...SECRETS,
    ...SECRETS.map((secret) => secret.replace(/^whsec_/, '')),
    ...[...expected, ...keys].flatMap((bytes) => [bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex')]),
    ...(received['webhook-signature'] ?? '').split(' ').map((entry) => entry.slice(3)).filter((digest) => digest.length > 0),
    sent,
  ];
}

const refusals: ReadonlyArray<[WebhookErrorCode, Request]> = [
  ['missing_header', { body, headers: { 'webhook-id': 'evt_1', 'webhook-timestamp': String(NOW) } }],
  ['invalid_timestamp', { body, headers: { ...headers, 'webhook-timestamp': 'soon' } }],
  ['timestamp_too_old', { body, headers: { ...headers, 'webhook-timestamp': String(NOW - 301) } }],
  ['timestamp_too_new', { body, headers: { ...headers, 'webhook-timestamp': String(NOW + 301) } }],
  ['invalid_signature', { body, headers }],
  ['invalid_signature', { body: body.replace('call_1', 'call_2'), headers: sign(body, { id: 'evt_1', timestamp: NOW, secret: SECRETS[0]! }) }],
  ['invalid_payload', { body: 'not json', headers: sign('not json', { id: 'evt_1', timestamp: NOW, secret: SECRETS }) }],
  ['payload_too_large', { body: `${body} `.repeat(30), headers }],
];

describe('refusal messages', () => {
  it.each(refusals)('%s says neither a secret, a signature nor the body', async (code, request) => {
    let message: string | undefined;
    try {
      verify(request.body, request.headers, SECRETS, { ...clock, maxPayloadBytes: 1000 });
    } catch (error) {
      expect(error).toBeInstanceOf(WebhookError);
      expect((error as WebhookError).code).toBe(code);
      message = (error as Error).message;
    }
    expect(message).toEqual(expect.any(String));
    const receiver = createReceiver({ secret: SECRETS, ...clock, maxPayloadBytes: 1000 });
    const answer = JSON.stringify(await verifyAndClaim(receiver, request.body, request.headers));
    for (const forbidden of forbiddenIn(request)) {
      expect(message).not.toContain(forbidden);
      expect(answer).not.toContain(forbidden);
    }
  });

  it('says which check failed', () => {
    const messages = refusals.map(([, request]) => {
      try {
        verify(request.body, request.headers, SECRETS, { ...clock, maxPayloadBytes: 1000 });
      } catch (error) {
        return (error as Error).message;
      }
      return undefined;
    });
    expect(messages).toEqual([
      'the webhook-signature header is missing or empty',
      'webhook-timestamp must be an integer number of seconds',
      'webhook-timestamp is 301 s in the past; the tolerance is 300 s',
      'webhook-timestamp is 301 s in the future; the tolerance is 300 s',
      'no v1 signature in webhook-signature matches the secret',
      'no v1 signature in webhook-signature matches the secret',
      'the body is not JSON',
      'the body is larger than 1000 bytes',
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import {
  ERROR_CODES,
  sign,
  verify,
  verifyDelivery,
  Webhook,
  WebhookBodyError,
  type WebhookErrorCode,
} from '../../src/index.js';
import { codeOf } from '../helpers/error-code.js';
import { keyOf } from '../helpers/signed-request.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NOW = 1_795_000_000;
const clock = { now: () => NOW * 1000 };
const envelope = (id = 'evt_1', type = 'call.missed') => JSON.stringify({ id, type, data: { object: { id: 'call_1' } } });

function signed<B extends string | Uint8Array = string>(body: B = envelope() as B, id = 'evt_1', timestamp = NOW) {
  return { body, headers: sign(body, { id, timestamp, secret: SECRET }) };
}

describe('error codes of verify()', () => {
  const { body, headers } = signed();
  const cases: [WebhookErrorCode, () => unknown][] = [
    ['missing_header', () => verify(body, { ...headers, 'webhook-timestamp': undefined }, SECRET, clock)],
    ['invalid_timestamp', () => verify(body, { ...headers, 'webhook-timestamp': '17950000OO' }, SECRET, clock)],
    ['timestamp_too_old', () => verify(body, headers, SECRET, { now: () => (NOW + 301) * 1000 })],
    ['timestamp_too_new', () => verify(body, headers, SECRET, { now: () => (NOW - 301) * 1000 })],
    ['invalid_signature', () => verify(`${body} `, headers, SECRET, clock)],
    ['invalid_payload', () => verify(signed('{}').body, signed('{}').headers, SECRET, clock)],
    ['payload_too_large', () => verify(body, headers, SECRET, { ...clock, maxPayloadBytes: body.length - 1 })],
  ];

  it.each(cases)('%s', (code, run) => {
    expect(codeOf(run)).toBe(code);
  });

  it('gives 413 for payload_too_large and 400 for the rest', () => {
    for (const [code] of cases) expect(ERROR_CODES[code].status).toBe(code === 'payload_too_large' ? 413 : 400);
    const error = new WebhookBodyError('payload_too_large', 'x');
    expect([error.status, error.name, error instanceof Error]).toEqual([413, 'WebhookBodyError', true]);
  });

  it('never puts the secret, a signature or the body in a message', () => {
    for (const [, run] of cases) {
      try {
        run();
      } catch (error) {
        const message = (error as Error).message;
        for (const secret of [SECRET, SECRET.slice(6), headers['webhook-signature'].slice(3), body]) {
          expect(message).not.toContain(secret);
        }
      }
    }
  });
});

describe('verify()', () => {
  it('returns the event and, through verifyDelivery, the id and timestamp', () => {
    const { body, headers } = signed();
    expect(verify(body, headers, SECRET, clock)).toEqual(JSON.parse(body));
    const delivery = verifyDelivery(body, headers, SECRET, clock);
    expect([delivery.id, delivery.timestamp, delivery.event.type]).toEqual(['evt_1', NOW, 'call.missed']);
    // No tenant field at all, rather than one set to undefined: a spread of the delivery adds no key.
    expect(Object.keys(delivery).sort()).toEqual(['dedupKey', 'event', 'id', 'keyId', 'timestamp']);
  });

  it('counts a string body in UTF-8 bytes against maxPayloadBytes', () => {
    const body = envelope('evt_1', 'message.received').replace('call_1', 'é'.repeat(100));
    const { headers } = signed(body);
    const bytes = Buffer.byteLength(body);
    expect(verify(body, headers, SECRET, { ...clock, maxPayloadBytes: bytes }).type).toBe('message.received');
    expect(codeOf(() => verify(body, headers, SECRET, { ...clock, maxPayloadBytes: bytes - 1 }))).toBe('payload_too_large');
  });

  it('takes a Uint8Array view into a larger buffer without reading outside it', () => {
    const body = Buffer.from(envelope());
    const backing = new Uint8Array(body.length + 20).fill(32);
    backing.set(body, 10);
    const view = backing.subarray(10, 10 + body.length);
    expect(verify(view, signed(body).headers, SECRET, clock).id).toBe('evt_1');
  });

  it('reads Fetch Headers, Node header records with arrays, and any key case', () => {
    const { body, headers } = signed();
    expect(verify(body, new Headers(headers), SECRET, clock).id).toBe('evt_1');
    const other = sign(body, { id: 'evt_1', timestamp: NOW, secret: 'whsec_AAAAAAAA' })['webhook-signature'];
    const node = { ...headers, 'webhook-signature': [other, headers['webhook-signature']] };
    expect(verify(body, node, SECRET, clock).id).toBe('evt_1');
    expect(verify(body, { 'WEBHOOK-ID': 'evt_1', 'Webhook-Timestamp': String(NOW), 'webhook-Signature': headers['webhook-signature'] }, SECRET, clock).id).toBe('evt_1');
  });

  it('answers missing_header for absent header objects', () => {
    const { body } = signed();
    for (const headers of [null, undefined, {}, new Headers()]) {
      expect(codeOf(() => verify(body, headers as never, SECRET, clock))).toBe('missing_header');
    }
  });

  it('tries at most 8 v1 entries, as SECURITY.md promises', () => {
    const { body, headers } = signed();
    const junk = (n: number) => Array.from({ length: n }, () => `v1,${Buffer.alloc(32, 1).toString('base64')}`);
    const within = [...junk(7), headers['webhook-signature']].join(' ');
    const beyond = [...junk(8), headers['webhook-signature']].join(' ');
    expect(verify(body, { ...headers, 'webhook-signature': within }, SECRET, clock).id).toBe('evt_1');
    expect(codeOf(() => verify(body, { ...headers, 'webhook-signature': beyond }, SECRET, clock))).toBe('invalid_signature');
  });

  it('refuses a valid signature with junk after it, or without its padding', () => {
    const { body, headers } = signed();
    const signature = headers['webhook-signature'];
    for (const variant of [`${signature}!!!`, signature.slice(0, -1), `${signature.slice(0, -1)}!`, `${signature}=`]) {
      expect(codeOf(() => verify(body, { ...headers, 'webhook-signature': variant }, SECRET, clock))).toBe('invalid_signature');
    }
  });

  it('refuses a signature of the wrong length or empty entries', () => {
    const { body, headers } = signed();
    const short = headers['webhook-signature'].slice(0, -8);
    expect(codeOf(() => verify(body, { ...headers, 'webhook-signature': `v1, v1,${short.slice(3)}  v1,` }, SECRET, clock))).toBe('invalid_signature');
  });
});

describe('caller mistakes throw TypeError at once', () => {
  const { body, headers } = signed();
  it.each([
    ['an empty secret', ''],
    ['bad base64 after whsec_', 'whsec_not*base64'],
    ['whsec_ with nothing after it', 'whsec_'],
    ['an empty list', []],
    ['a list with a non-string', [SECRET, 42]],
    ['a number', 42],
  ])('%s', (_name, secret) => {
    expect(() => new Webhook(secret as never)).toThrow(TypeError);
    expect(() => verify(body, headers, secret as never, clock)).toThrow(TypeError);
    expect(() => sign(body, { id: 'evt_1', timestamp: NOW, secret: secret as never })).toThrow(TypeError);
  });

  it.each([
    ['negative tolerance', { toleranceMs: -1 }],
    ['NaN tolerance', { toleranceMs: Number.NaN }],
    ['a clock that is no function', { now: 5 }],
    ['a zero size limit', { maxPayloadBytes: 0 }],
    ['a fractional size limit', { maxPayloadBytes: 1.5 }],
    ['options that are no object', 'fast'],
  ])('%s', (_name, options) => {
    expect(() => new Webhook(SECRET, options as never)).toThrow(TypeError);
  });

  it('a body a JSON parser already turned into an object', () => {
    expect(() => verify(JSON.parse(body as string), headers, SECRET, clock)).toThrow(/raw body.*before any JSON body parser/);
  });

  it('a clock that returns NaN', () => {
    expect(() => verify(body, headers, SECRET, { now: () => Number.NaN })).toThrow(TypeError);
  });

  it('leaves the caller options untouched', () => {
    // Frozen: any write to them would throw here.
    const options = Object.freeze({ toleranceMs: 10_000 });
    expect(() => new Webhook(SECRET, options)).not.toThrow();
  });
});

describe('sign()', () => {
  it('takes a Date and emits one v1 entry per secret', () => {
    const headers = sign('{}', { id: 'evt_1', timestamp: new Date(NOW * 1000 + 999), secret: [SECRET, 'legacy'] });
    expect(headers['webhook-timestamp']).toBe(String(NOW));
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
  });

  it('Webhook#sign matches sign()', () => {
    const webhook = new Webhook(SECRET, clock);
    const body = envelope();
    expect(webhook.sign(body, { id: 'evt_1', timestamp: NOW })).toEqual(sign(body, { id: 'evt_1', timestamp: NOW, secret: SECRET }));
    expect(webhook.verifyDelivery(body, webhook.sign(body, { id: 'evt_1', timestamp: NOW })).id).toBe('evt_1');
  });

  it.each([
    ['an empty id', { id: '', timestamp: NOW }],
    ['fractional seconds', { id: 'evt_1', timestamp: 1.5 }],
    ['an invalid Date', { id: 'evt_1', timestamp: new Date(Number.NaN) }],
  ])('refuses %s', (_name, options) => {
    expect(() => sign('{}', { ...options, secret: SECRET })).toThrow(TypeError);
  });
});

describe('keyId: which secret verified a delivery', () => {
  const body = JSON.stringify({ id: 'evt_k', type: 'call.missed', created_at: '2023-11-14T22:13:20Z', data: { object: { id: 'obj_k' } } });
  const NEW = 'whsec_bmV3LXNlY3JldC1uZXctc2VjcmV0LW5ldy1zZWNyZXQ=';
  const OLD = 'whsec_b2xkLXNlY3JldC1vbGQtc2VjcmV0LW9sZC1zZWNyZXQ=';
  const now = () => 1_700_000_000_000;
  const signedWith = (secret: string | string[]) => sign(body, { id: 'evt_k', timestamp: 1_700_000_000, secret });

  it("is '0' for a lone string, and a plain string's position in a list", () => {
    expect(verifyDelivery(body, signedWith(OLD), OLD, { now }).keyId).toBe('0');
    expect(verifyDelivery(body, signedWith(OLD), [NEW, OLD], { now }).keyId).toBe('1');
    expect(new Webhook([NEW, OLD], { now }).verifyDelivery(body, signedWith(NEW)).keyId).toBe('0');
  });

  it("is a keyed secret's own id, alone or beside plain strings", () => {
    expect(verifyDelivery(body, signedWith(OLD), { id: 'old', secret: OLD }, { now }).keyId).toBe('old');
    expect(verifyDelivery(body, signedWith(OLD), [{ id: 'new', secret: NEW }, OLD], { now }).keyId).toBe('1');
    expect(new Webhook([NEW, { id: 'old', secret: OLD }], { now }).verifyDelivery(body, signedWith(OLD)).keyId).toBe('old');
  });

  it("names the receiver's first listed secret that any entry matches while the sender signs with both, in either order", () => {
    const secrets = [
      { id: 'new', secret: NEW },
      { id: 'old', secret: OLD },
    ];
    for (const both of [signedWith([NEW, OLD]), signedWith([OLD, NEW])]) {
      const delivery = verifyDelivery(body, both, secrets, { now });
      expect([delivery.keyId, delivery.dedupKey]).toEqual(['new', keyOf('evt_k', NEW)]);
    }
    const both = signedWith([NEW, OLD]);
    expect(verifyDelivery(body, both, [secrets[1]!], { now }).keyId).toBe('old');
    expect(() => verifyDelivery(body, signedWith(OLD), [secrets[0]!], { now })).toThrow(expect.objectContaining({ code: 'invalid_signature' }));
  });
});

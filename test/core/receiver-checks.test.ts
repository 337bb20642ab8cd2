/** createReceiver's option checks and what its refusals carry. */
import { describe, expect, it } from 'vitest';
import { bodyRefusal } from '../../src/receive/body-limits.js';
import { createReceiver, errorResponse, WebhookVerificationError, type DedupStore, type ReceiverOptions } from '../../src/index.js';
import { now, SECRET, signedRequest } from '../helpers/signed-request.js';

const methods = { begin: async () => ({ state: 'done' as const }), complete: async () => true, release: async () => true, renew: async () => true };

async function receiveWith(options: Partial<ReceiverOptions>) {
  const receiver = createReceiver({ secret: SECRET, now, ...options });
  const { body, headers } = signedRequest();
  return receiver.receive(body, headers);
}

describe('createReceiver option checks', () => {
  it.each([
    ['no options', undefined, 'options with a secret are required'],
    ['null options', null, 'options with a secret are required'],
    ['options that are a string', 'whsec_QUJD', 'options with a secret are required'],
    ['a zero lease', { secret: SECRET, leaseMs: 0 }, 'leaseMs must be a whole number of milliseconds'],
    ['a fractional retention', { secret: SECRET, retentionMs: 0.5 }, 'retentionMs must be a whole number of milliseconds'],
    ['an unknown onDedupError', { secret: SECRET, onDedupError: 'retry' }, "onDedupError must be 'reject' or 'process'"],
    ['an onStoreError that is no function', { secret: SECRET, onStoreError: 'log' }, 'onStoreError must be a function'],
  ])('refuses %s, naming what is wrong', (_name, options, says) => {
    expect(() => createReceiver(options as never)).toThrow(TypeError);
    expect(() => createReceiver(options as never)).toThrow(says);
  });

  it.each([
    ['a zero body deadline', { bodyTimeoutMs: 0 }, 'bodyTimeoutMs must be a whole number of milliseconds from 1 to 2147483647'],
    ['a zero hold limit', { maxClaimMs: 0 }, 'maxClaimMs must be a whole number of milliseconds from 1 to 9007199254740991'],
    ['a hold limit shorter than the lease', { leaseMs: 2_000, maxClaimMs: 1_999 }, 'maxClaimMs must be at least leaseMs'],
  ])('refuses %s with the whole message', (_name, options, says) => {
    expect(() => createReceiver({ secret: SECRET, ...options })).toThrow(new TypeError(`svc-webhooks: ${says}`));
  });

  it('takes a hold limit equal to the lease', () => {
    expect(() => createReceiver({ secret: SECRET, leaseMs: 2_000, maxClaimMs: 2_000 })).not.toThrow();
  });

  it.each([
    ['null', null],
    ['a function carrying the four methods', Object.assign(() => {}, methods)],
    ['a store without begin', { ...methods, begin: undefined }],
    ['a store without complete', { ...methods, complete: undefined }],
    ['a store without release', { ...methods, release: undefined }],
    ['a store without renew', { ...methods, renew: undefined }],
    ['a store whose release is no function', { ...methods, release: true }],
  ])('refuses as dedup %s', (_name, dedup) => {
    expect(() => createReceiver({ secret: SECRET, dedup: dedup as never })).toThrow(
      new TypeError('svc-webhooks: dedup must be a DedupStore (begin, complete, release and renew) or false'),
    );
  });

  it('exposes the body limit in force', () => {
    expect(createReceiver({ secret: SECRET }).maxPayloadBytes).toBe(1024 * 1024);
    expect(createReceiver({ secret: SECRET, maxPayloadBytes: 10 }).maxPayloadBytes).toBe(10);
  });
});

describe('receive', () => {
  it('answers 503 when begin() answers a function, whatever it carries', async () => {
    const answer = Object.assign(() => {}, { state: 'done' });
    const dedup: DedupStore = { ...methods, begin: async () => answer as never };
    expect(await receiveWith({ dedup })).toMatchObject({ action: 'respond', response: { status: 503 } });
  });

  it('tells the sender to retry later when the store is down or another delivery holds the event', async () => {
    const down: DedupStore = { ...methods, begin: () => Promise.reject(new Error('down')) };
    expect(await receiveWith({ dedup: down })).toMatchObject({
      response: { status: 503, body: { error: { code: 'dedup_unavailable', message: 'the dedup store is unavailable; retry later' } } },
    });
    const held: DedupStore = { ...methods, begin: async () => ({ state: 'in_progress' }) };
    expect(await receiveWith({ dedup: held })).toMatchObject({
      response: { status: 409, body: { error: { code: 'delivery_in_progress', message: 'this event is being processed; retry later' } } },
    });
  });

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['a string', 'claimed'],
    ['a claim without a token', { state: 'claimed' }],
    ['a claim whose token is no string', { state: 'claimed', token: 7 }],
    ['an unknown state', { state: 'leased', token: 'token-1' }],
  ])('answers 503 when begin() answers %s, or processes unguarded if told to', async (_name, answer) => {
    const dedup: DedupStore = { ...methods, begin: async () => answer as never };
    expect(await receiveWith({ dedup })).toMatchObject({ action: 'respond', response: { status: 503 } });
    const processed = await receiveWith({ dedup, onDedupError: 'process' });
    expect(processed).toMatchObject({ action: 'process', delivery: { id: 'evt_1' } });
    expect(processed).not.toHaveProperty('settle');
  });

  it("keeps its own store's leases on the receiver's clock", async () => {
    let clock = now();
    const receiver = createReceiver({ secret: SECRET, now: () => clock, leaseMs: 1_000 });
    const { body, headers } = signedRequest();
    const first = await receiver.receive(body, headers);
    expect(first).toMatchObject({ action: 'process' });
    expect(await receiver.receive(body, headers)).toMatchObject({ response: { status: 409 } });
    clock += 1_000;
    const retry = await receiver.receive(body, headers);
    expect(retry).toMatchObject({ action: 'process' });
    for (const reception of [first, retry]) if (reception.action === 'process') await reception.settle?.(500);
  });

  it('answers a duplicate 200 with no headers', async () => {
    expect(await receiveWith({ dedup: { ...methods } })).toEqual({
      action: 'respond',
      response: { status: 200, headers: {}, body: { received: true, duplicate: true } },
    });
  });
});

describe('errorResponse', () => {
  it('answers the code, message and status, and keeps the headers given', () => {
    const error = new WebhookVerificationError('delivery_in_progress', 'busy');
    expect(errorResponse(error, { 'retry-after': '5' })).toEqual({
      status: 409,
      headers: { 'retry-after': '5' },
      body: { error: { code: 'delivery_in_progress', message: 'busy' } },
    });
    expect(errorResponse(new WebhookVerificationError('invalid_signature', 'no')).headers).toEqual({});
  });

});

describe('bodyRefusal', () => {
  it('closes the connection after a 413 or a 408, whose body is left unread, and only then', () => {
    expect(bodyRefusal(new WebhookVerificationError('payload_too_large', 'big'))).toMatchObject({ status: 413, headers: { connection: 'close' } });
    expect(bodyRefusal(new WebhookVerificationError('body_timeout', 'slow'))).toMatchObject({ status: 408, headers: { connection: 'close' } });
    expect(bodyRefusal(new WebhookVerificationError('body_already_parsed', 'parsed')).headers).toEqual({});
  });
});

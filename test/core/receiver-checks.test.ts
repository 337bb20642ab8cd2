/** createReceiver's option checks and what its refusals carry. */
import { describe, expect, it } from 'vitest';
import { createReceiver, errorResponse, WebhookVerificationError, type DedupStore, type ReceiverOptions } from '../../src/index.js';
import { now, SECRET, signedRequest } from '../helpers/signed-request.js';

const methods = { begin: async () => ({ state: 'done' as const }), complete: async () => true, release: async () => true };

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
    ['null', null],
    ['a function carrying the three methods', Object.assign(() => {}, methods)],
    ['a store without begin', { complete: methods.complete, release: methods.release }],
    ['a store without complete', { begin: methods.begin, release: methods.release }],
    ['a store without release', { begin: methods.begin, complete: methods.complete }],
    ['a store whose release is no function', { ...methods, release: true }],
  ])('refuses as dedup %s', (_name, dedup) => {
    expect(() => createReceiver({ secret: SECRET, dedup: dedup as never })).toThrow(
      new TypeError('svc-webhooks: dedup must be a DedupStore (begin, complete and release)'),
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

  it('closes the connection after a 413: the rest of the body is left unread', () => {
    expect(errorResponse(new WebhookVerificationError('payload_too_large', 'big')).headers).toEqual({ connection: 'close' });
    expect(errorResponse(new WebhookVerificationError('payload_too_large', 'big'), { 'x-a': '1' }).headers).toEqual({
      'x-a': '1',
      connection: 'close',
    });
  });
});

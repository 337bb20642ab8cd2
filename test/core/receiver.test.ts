import { describe, expect, it } from 'vitest';
import { createReceiver, errorResponse, MemoryDedupStore, type DedupStore, type ReceiverOptions } from '../../src/index.js';
import { now, SECRET, signedRequest } from '../helpers/signed-request.js';

/** A real store with some operations replaced. */
function storeWith(overrides: Partial<DedupStore>): DedupStore {
  const store = new MemoryDedupStore({ now });
  return {
    begin: store.begin.bind(store),
    complete: store.complete.bind(store),
    release: store.release.bind(store),
    renew: store.renew.bind(store),
    ...overrides,
  };
}

const refused = async (): Promise<never> => {
  throw new Error('connection refused');
};

async function deliver(options: Partial<ReceiverOptions>, id = 'evt_1') {
  const receiver = createReceiver({ secret: SECRET, now, ...options });
  const request = signedRequest({ id });
  return receiver.receive(request.body, request.headers);
}

describe('createReceiver', () => {
  it.each([
    ['no options', undefined],
    ['no secret', { now }],
    ['a dedup that is no store', { secret: SECRET, dedup: { begin: async () => ({ state: 'done' }) } }],
    ['a zero lease', { secret: SECRET, leaseMs: 0 }],
    ['a fractional retention', { secret: SECRET, retentionMs: 1.5 }],
    ['an unknown onDedupError', { secret: SECRET, onDedupError: 'ignore' }],
    ['an onStoreError that is no function', { secret: SECRET, onStoreError: 'log' }],
    ['a null onStoreError', { secret: SECRET, onStoreError: null }],
    ['a bad tolerance', { secret: SECRET, toleranceSeconds: -5 }],
  ])('throws TypeError for %s', (_name, options) => {
    expect(() => createReceiver(options as never)).toThrow(TypeError);
  });

  it('processes without settling when there is no store', async () => {
    const reception = await deliver({});
    expect(reception.action).toBe('process');
    expect(reception.action === 'process' && reception.settle).toBe(undefined);
  });

  it('completes on 2xx and answers the next delivery as a duplicate', async () => {
    const dedup = new MemoryDedupStore({ now });
    const first = await deliver({ dedup });
    if (first.action !== 'process' || !first.settle) throw new Error('expected a claim');
    expect(first.delivery.id).toBe('evt_1');
    await first.settle(204);
    const again = await deliver({ dedup });
    expect(again).toMatchObject({ action: 'respond', response: { status: 200, body: { received: true, duplicate: true } } });
  });

  it('releases on any other status so the retry is processed', async () => {
    const dedup = new MemoryDedupStore({ now });
    const first = await deliver({ dedup });
    if (first.action !== 'process' || !first.settle) throw new Error('expected a claim');
    await first.settle(500);
    expect((await deliver({ dedup })).action).toBe('process');
  });

  it('answers 409 with Retry-After of the lease while another delivery holds it', async () => {
    const dedup = new MemoryDedupStore({ now });
    await deliver({ dedup, leaseMs: 2500 });
    const second = await deliver({ dedup, leaseMs: 2500 });
    expect(second).toMatchObject({
      action: 'respond',
      response: { status: 409, headers: { 'retry-after': '3' }, body: { error: { code: 'delivery_in_progress' } } },
    });
  });

  it('answers 503 when the store fails, or processes unguarded if told to', async () => {
    const rejected = await deliver({ dedup: storeWith({ begin: refused }) });
    expect(rejected).toMatchObject({ action: 'respond', response: { status: 503, body: { error: { code: 'dedup_unavailable' } } } });
    const processed = await deliver({ dedup: storeWith({ begin: refused }), onDedupError: 'process' });
    expect(processed.action === 'process' && processed.settle).toBe(undefined);
  });

  it.each([
    ['nothing', undefined],
    ['an unknown state', { state: 'maybe' }],
    ['a claim without a token', { state: 'claimed' }],
  ])('answers 503 when a store answers begin() with %s', async (_name, answer) => {
    expect(await deliver({ dedup: storeWith({ begin: async () => answer as never }) })).toMatchObject({ action: 'respond', response: { status: 503 } });
  });

  it('reports a store failure after the handler ran to onStoreError, without throwing', async () => {
    const seen: unknown[] = [];
    const reception = await deliver({ dedup: storeWith({ complete: refused }), onStoreError: (error) => seen.push(error) });
    if (reception.action !== 'process' || !reception.settle) throw new Error('expected a claim');
    await expect(reception.settle(200)).resolves.toBe(undefined);
    expect(seen).toEqual([new Error('connection refused')]);
  });

  it('turns verification failures into JSON responses', async () => {
    const receiver = createReceiver({ secret: SECRET, now });
    const reception = await receiver.receive('{}', {});
    expect(reception).toMatchObject({
      action: 'respond',
      response: { status: 400, body: { error: { code: 'missing_header' } } },
      error: { code: 'missing_header' },
    });
  });

  it('errorResponse re-throws what is not a WebhookVerificationError', () => {
    const bug = new RangeError('bug');
    expect(() => errorResponse(bug)).toThrow(bug);
  });
});

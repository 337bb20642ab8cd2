/**
 * What the receiver asks of its dedup store: a claim for the lease, a
 * completion kept for the retention, and which of complete or release each
 * outcome gets. Asserted on what the store receives, not on how often.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createReceiver, type BeginResult, type DedupStore, type ReceiverOptions } from '../../src/index.js';
import { now, SECRET, signedRequest } from '../helpers/signed-request.js';

type Call =
  | { readonly op: 'begin'; readonly id: string; readonly leaseMs: number }
  | { readonly op: 'complete'; readonly id: string; readonly token: string; readonly ttlMs: number }
  | { readonly op: 'release'; readonly id: string; readonly token: string }
  | { readonly op: 'renew'; readonly id: string; readonly token: string; readonly leaseMs: number };

/** A store that claims every id under a token of its own and records each call. */
class RecordingStore implements DedupStore {
  readonly calls: Call[] = [];
  readonly tokens = new Map<string, string>();

  async begin(id: string, leaseMs: number): Promise<BeginResult> {
    this.calls.push({ op: 'begin', id, leaseMs });
    const token = `token-of-${id}`;
    this.tokens.set(id, token);
    return { state: 'claimed', token };
  }

  async complete(id: string, token: string, ttlMs: number): Promise<boolean> {
    this.calls.push({ op: 'complete', id, token, ttlMs });
    return true;
  }

  async release(id: string, token: string): Promise<boolean> {
    this.calls.push({ op: 'release', id, token });
    return true;
  }

  async renew(id: string, token: string, leaseMs: number): Promise<boolean> {
    this.calls.push({ op: 'renew', id, token, leaseMs });
    return true;
  }

  /** The distinct complete and release calls made for `id`. */
  settlementsOf(id: string): Call[] {
    const seen = new Map(this.calls.filter((call) => call.id === id && (call.op === 'complete' || call.op === 'release')).map((call) => [JSON.stringify(call), call]));
    return [...seen.values()];
  }
}

/** Receives a signed delivery of `id`, runs the route to `status`, and settles. */
async function handled(store: RecordingStore, options: Partial<ReceiverOptions>, id: string, status: number): Promise<void> {
  const receiver = createReceiver({ secret: SECRET, now, dedup: store, ...options });
  const request = signedRequest({ id });
  const reception = await receiver.receive(request.body, request.headers);
  if (reception.action !== 'process' || reception.settle === undefined) throw new Error(`expected a claim, got ${reception.action}`);
  await reception.settle(status);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the durations the store receives', () => {
  it('claims for leaseMs and completes for retentionMs, each with its own value', async () => {
    const store = new RecordingStore();
    await handled(store, { leaseMs: 12_345, retentionMs: 98_765_000 }, 'evt_1', 204);
    expect(store.calls.filter((call) => call.op === 'begin')).toEqual([{ op: 'begin', id: 'evt_1', leaseMs: 12_345 }]);
    expect(store.settlementsOf('evt_1')).toEqual([{ op: 'complete', id: 'evt_1', token: 'token-of-evt_1', ttlMs: 98_765_000 }]);
  });

  it('defaults to a lease of 60 s and a retention of four days', async () => {
    const store = new RecordingStore();
    await handled(store, {}, 'evt_1', 200);
    expect(store.calls.filter((call) => call.op === 'begin')).toEqual([{ op: 'begin', id: 'evt_1', leaseMs: 60_000 }]);
    expect(store.settlementsOf('evt_1')).toEqual([{ op: 'complete', id: 'evt_1', token: 'token-of-evt_1', ttlMs: 4 * 24 * 3600 * 1000 }]);
  });

  it('answers Retry-After in whole seconds of the lease, rounded up', async () => {
    for (const [leaseMs, retryAfter] of [
      [undefined, '60'],
      [1, '1'],
      [1000, '1'],
      [2001, '3'],
    ] as const) {
      const held: DedupStore = {
        begin: async () => ({ state: 'in_progress' }),
        complete: async () => false,
        release: async () => false,
        renew: async () => false,
      };
      const receiver = createReceiver({ secret: SECRET, now, leaseMs, dedup: held });
      const request = signedRequest();
      expect(await receiver.receive(request.body, request.headers)).toMatchObject({
        action: 'respond',
        response: { status: 409, headers: { 'retry-after': retryAfter } },
      });
    }
  });
});

describe('complete or release', () => {
  it.each([200, 201, 202, 204, 299])('completes after %s', async (status) => {
    const store = new RecordingStore();
    await handled(store, { retentionMs: 5_000 }, `evt_${status}`, status);
    expect(store.settlementsOf(`evt_${status}`)).toEqual([{ op: 'complete', id: `evt_${status}`, token: `token-of-evt_${status}`, ttlMs: 5_000 }]);
  });

  // Only a 2xx makes the sender stop: after anything else its retry must run the handler again.
  it.each([100, 199, 300, 301, 304, 400, 404, 409, 413, 499, 500, 503])('releases after %s', async (status) => {
    const store = new RecordingStore();
    await handled(store, {}, `evt_${status}`, status);
    expect(store.settlementsOf(`evt_${status}`)).toEqual([{ op: 'release', id: `evt_${status}`, token: `token-of-evt_${status}` }]);
  });
});

describe('a store failure after the handler ran', () => {
  const failing = (method: 'complete' | 'release', reason: unknown): DedupStore => {
    const store = new RecordingStore();
    return {
      begin: store.begin.bind(store),
      complete: method === 'complete' ? () => Promise.reject(reason) : store.complete.bind(store),
      release: method === 'release' ? () => Promise.reject(reason) : store.release.bind(store),
      renew: store.renew.bind(store),
    };
  };

  it.each([
    ['complete', 200],
    ['release', 500],
  ] as const)('goes to onStoreError when %s fails', async (method, status) => {
    const seen: unknown[] = [];
    // A short lease: settling retries the store until just before it ends.
    const receiver = createReceiver({ secret: SECRET, now, leaseMs: 200, dedup: failing(method, new Error('down')), onStoreError: (error) => seen.push(error) });
    const request = signedRequest();
    const reception = await receiver.receive(request.body, request.headers);
    if (reception.action !== 'process' || reception.settle === undefined) throw new Error('expected a claim');
    await expect(reception.settle(status)).resolves.toBe(undefined);
    expect(seen).toContainEqual(new Error('down'));
  });

  it.each([
    ['an Error', new Error('connection reset'), 'connection reset'],
    ['a string', 'timeout', 'timeout'],
  ])('is logged by default with its reason when the store rejects with %s', async (_name, reason, said) => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const receiver = createReceiver({ secret: SECRET, now, leaseMs: 200, dedup: failing('complete', reason) });
    const request = signedRequest();
    const reception = await receiver.receive(request.body, request.headers);
    if (reception.action !== 'process' || reception.settle === undefined) throw new Error('expected a claim');
    await reception.settle(200);
    expect(log).toHaveBeenCalledWith(expect.stringMatching(/^svc-webhooks: the dedup store failed/));
    expect(log).toHaveBeenCalledWith(expect.stringContaining(`(${said})`));
    expect(log).toHaveBeenCalledWith(expect.stringMatching(/a retry of that event may run the route again$/));
  });
});

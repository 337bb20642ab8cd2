/**
 * createReceiver, the pipeline's verify and claim steps: its option checks,
 * what its refusals carry, what it asks of its dedup store (a claim for the
 * lease, a completion kept for the retention) and how a failing store is
 * answered and reported.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryDedupStore, WebhookBodyError, type WebhookEvent, type DedupOptions, WebhookDedupError, WebhookVerificationError, type BeginResult, type DedupStore, type ReceiverOptions } from '../../src/index.js';
import { bodyRefusal } from '../../src/receive/body-limits.js';
import { createReceiver } from '../../src/receive/receiver.js';
import { refused } from '../../src/receive/responses.js';
import { failingBothWays } from '../helpers/failing-callbacks.js';
import { verifyAndClaim } from '../helpers/receiver-steps.js';
import { createPipeline } from '../../src/receive/pipeline.js';
import type { WebhookResponse } from '../../src/receive/responses.js';
import { decidedAnswers } from '../helpers/decided-answers.js';
import { keyOf, now, SECRET, signedRequest } from '../helpers/signed-request.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

describe('createReceiver', () => {
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

  const connectionRefused = async (): Promise<never> => {
    throw new Error('connection refused');
  };

  async function deliver(options: Partial<ReceiverOptions>, id = 'evt_1') {
    const receiver = createReceiver({ secret: SECRET, now, ...options });
    const request = signedRequest({ id });
    return verifyAndClaim(receiver, request.body, request.headers);
  }

  describe('createReceiver', () => {
    it.each([
      ['no options', undefined],
      ['no secret', { now }],
      ['a secret and tenants', { secret: SECRET, tenants: { of: () => 'acme', secret: () => SECRET } }],
      ['dedup options that are a store without renew', { secret: SECRET, dedup: { begin: connectionRefused, complete: connectionRefused, release: connectionRefused } }],
      ['a dedup.store that is no store', { secret: SECRET, dedup: { store: { begin: async () => ({ state: 'done' }) } } }],
      ['a null dedup', { secret: SECRET, dedup: null }],
      ['a dedup of true', { secret: SECRET, dedup: true }],
      ['a zero body timeout', { secret: SECRET, bodyTimeoutMs: 0 }],
      ['a body timeout past the longest timer', { secret: SECRET, bodyTimeoutMs: 2 ** 31 }],
      ['a zero lease', { secret: SECRET, dedup: { leaseMs: 0 } }],
      ['a lease past the longest timer', { secret: SECRET, dedup: { leaseMs: 2 ** 31 } }],
      ['a maxClaimMs shorter than the lease', { secret: SECRET, dedup: { leaseMs: 60_000, maxClaimMs: 59_999 } }],
      ['a fractional maxClaimMs', { secret: SECRET, dedup: { maxClaimMs: 600_000.5 } }],
      ['a fractional retention', { secret: SECRET, dedup: { retentionMs: 1.5 } }],
      ['an unknown whenUnavailable', { secret: SECRET, dedup: { whenUnavailable: 'ignore' } }],
      ['an onError that is no function', { secret: SECRET, dedup: { onError: 'log' } }],
      ['a null onError', { secret: SECRET, dedup: { onError: null } }],
      ['a bad tolerance', { secret: SECRET, toleranceMs: -5 }],
    ])('throws TypeError for %s', (_name, options) => {
      expect(() => createReceiver(options as never)).toThrow(TypeError);
    });

    it('names the policy and its values when dedup.whenUnavailable is neither', () => {
      expect(() => createReceiver({ secret: SECRET, dedup: { whenUnavailable: 'ignore' } } as never)).toThrow(
        new WebhookOptionsError("svc-webhooks: dedup.whenUnavailable must be 'reject' or 'process'"),
      );
    });

    it('processes without settling with dedup: false', async () => {
      const reception = await deliver({ dedup: false });
      expect(reception.action).toBe('process');
      expect(reception.action === 'process' && reception.settle).toBe(undefined);
    });

    it('deduplicates with a store of its own when given none', async () => {
      const receiver = createReceiver({ secret: SECRET, now });
      const { body, headers } = signedRequest();
      const first = await verifyAndClaim(receiver, body, headers);
      if (first.action !== 'process' || !first.settle) throw new Error('expected a claim');
      await first.settle(true);
      expect(await verifyAndClaim(receiver, body, headers)).toMatchObject({ action: 'respond', response: { status: 200, body: { duplicate: true } } });
      // Another receiver has a store of its own.
      expect((await verifyAndClaim(createReceiver({ secret: SECRET, now }), body, headers)).action).toBe('process');
    });

    it('exposes the body limits adapters enforce, with their defaults', () => {
      expect(createReceiver({ secret: SECRET }).limits).toMatchObject({ maxPayloadBytes: 1024 * 1024, deadlines: { ms: 10_000 } });
      expect(createReceiver({ secret: SECRET, maxPayloadBytes: 10, bodyTimeoutMs: 250 }).limits).toMatchObject({ maxPayloadBytes: 10, deadlines: { ms: 250 } });
    });

    it('completes on 2xx and answers the next delivery as a duplicate', async () => {
      const dedup = new MemoryDedupStore({ now });
      const first = await deliver({ dedup: { store: dedup } });
      if (first.action !== 'process' || !first.settle) throw new Error('expected a claim');
      expect(first.delivery.id).toBe('evt_1');
      await first.settle(true);
      const again = await deliver({ dedup: { store: dedup } });
      expect(again).toMatchObject({ action: 'respond', response: { status: 200, body: { received: true, duplicate: true } } });
    });

    it('releases on any other status so the retry is processed', async () => {
      const dedup = new MemoryDedupStore({ now });
      const first = await deliver({ dedup: { store: dedup } });
      if (first.action !== 'process' || !first.settle) throw new Error('expected a claim');
      await first.settle(false);
      expect((await deliver({ dedup: { store: dedup } })).action).toBe('process');
    });

    it('answers 409 with Retry-After of the lease while another delivery holds it', async () => {
      const dedup = new MemoryDedupStore({ now });
      await deliver({ dedup: { store: dedup, leaseMs: 2500 } });
      const second = await deliver({ dedup: { store: dedup, leaseMs: 2500 } });
      expect(second).toMatchObject({
        action: 'respond',
        response: { status: 409, headers: { 'retry-after': '3' }, body: { error: { code: 'delivery_in_progress' } } },
      });
    });

    it('answers 503 when the store fails, or processes unguarded if told to', async () => {
      const rejected = await deliver({ dedup: { store: storeWith({ begin: connectionRefused }) } });
      expect(rejected).toMatchObject({ action: 'respond', response: { status: 503, body: { error: { code: 'dedup_unavailable' } } } });
      const processed = await deliver({ dedup: { store: storeWith({ begin: connectionRefused }), whenUnavailable: 'process' } });
      expect(processed.action === 'process' && processed.settle).toBe(undefined);
    });

    it("reports a failing begin to dedup.onError, and answers 503 with Retry-After and the store's error as cause", async () => {
      const down = Object.assign(new Error('relation "processed_webhooks" does not exist'), { code: '42P01' });
      const heard: unknown[][] = [];
      const reception = await deliver({ dedup: { store: storeWith({ begin: () => Promise.reject(down) }), onError: (...args) => void heard.push(args) } });
      expect(heard).toEqual([[down, { operation: 'begin', key: keyOf('evt_1'), id: 'evt_1', type: 'call.missed' }]]);
      expect(reception).toMatchObject({ action: 'respond', response: { status: 503, headers: { 'retry-after': '5' } } });
      const response = reception.action === 'respond' ? reception.response : undefined;
      expect(response?.error).toMatchObject({ code: 'dedup_unavailable' });
      expect(response?.error?.cause).toBe(down);
      expect(JSON.stringify(response?.body)).not.toContain('processed_webhooks');
    });

    it('reports a failing begin under dedupUnavailable: process too, and runs unguarded', async () => {
      const heard: unknown[] = [];
      const down = new Error('down');
      await deliver({ dedup: { store: storeWith({ begin: () => Promise.reject(down) }), whenUnavailable: 'process', onError: (error) => void heard.push(error) } });
      expect(heard).toEqual([down]);
    });

    it('logs a failing begin by default: one line per store while it stays down, naming what to do', async () => {
      const log = vi.spyOn(console, 'error').mockImplementation(() => {});
      const missing = Object.assign(new Error('relation "processed_webhooks" does not exist'), { code: '42P01' });
      const dedup = storeWith({ begin: () => Promise.reject(missing) });
      for (let i = 0; i < 5; i++) await deliver({ dedup: { store: dedup } });
      expect(log).toHaveBeenCalledTimes(1);
      expect(log.mock.calls[0]![0]).toMatch(new RegExp(`^svc-webhooks: the dedup store failed to begin event "${keyOf('evt_1')}" \\(Error 42P01: .*answered 503.*migrate\\(\\)`));
      log.mockRestore();
    });

    it.each([
      ['nothing', undefined],
      ['an unknown state', { state: 'maybe' }],
      ['a claim without a token', { state: 'claimed' }],
    ])('answers 503 when a store answers begin() with %s', async (_name, answer) => {
      expect(await deliver({ dedup: { store: storeWith({ begin: async () => answer as never }) } })).toMatchObject({ action: 'respond', response: { status: 503 } });
    });

    it('reports a store failure after the handler ran to dedup.onError once the lease is about to end, without throwing', async () => {
      const seen: unknown[] = [];
      const options = { dedup: { store: storeWith({ complete: connectionRefused }), leaseMs: 200, onError: (error: unknown) => seen.push(error) } };
      const reception = await deliver(options);
      if (reception.action !== 'process' || !reception.settle) throw new Error('expected a claim');
      await expect(reception.settle(true)).resolves.toBe(undefined);
      expect(seen).toEqual([new Error('connection refused')]);
    });

    it.each(failingBothWays(new Error('reporter down')))('settles without rejecting when dedup.onError %s', async (_name, onStoreError) => {
      const reception = await deliver({ dedup: { store: storeWith({ release: connectionRefused }), leaseMs: 200, onError: onStoreError } });
      if (reception.action !== 'process' || !reception.settle) throw new Error('expected a claim');
      await expect(reception.settle(false)).resolves.toBe(undefined);
    });

    it('turns verification failures into JSON responses', async () => {
      const receiver = createReceiver({ secret: SECRET, now });
      const reception = await verifyAndClaim(receiver, '{}', {});
      expect(reception).toMatchObject({
        action: 'respond',
        response: { status: 400, body: { error: { code: 'missing_header' } }, error: { code: 'missing_header' } },
      });
    });

    it('refused re-throws what is not a WebhookVerificationError', () => {
      const bug = new RangeError('bug');
      expect(() => refused(bug)).toThrow(bug);
    });
  });
});

describe('createReceiver: option checks and refusals', () => {
  const methods = { begin: async () => ({ state: 'done' as const }), complete: async () => true, release: async () => true, renew: async () => true };

  async function receiveWith(options: Partial<ReceiverOptions>) {
    const receiver = createReceiver({ secret: SECRET, now, ...options });
    const { body, headers } = signedRequest();
    return verifyAndClaim(receiver, body, headers);
  }

  describe('createReceiver option checks', () => {
    it.each([
      ['no options', undefined, 'options with a secret (or tenants) are required'],
      ['null options', null, 'options with a secret (or tenants) are required'],
      ['options that are a string', 'whsec_QUJD', 'options with a secret (or tenants) are required'],
      ['a zero lease', { secret: SECRET, dedup: { leaseMs: 0 } }, 'dedup.leaseMs must be a whole number of milliseconds'],
      ['a fractional retention', { secret: SECRET, dedup: { retentionMs: 0.5 } }, 'dedup.retentionMs must be a whole number of milliseconds'],
      ['an unknown whenUnavailable', { secret: SECRET, dedup: { whenUnavailable: 'retry' } }, "dedup.whenUnavailable must be 'reject' or 'process'"],
      ['an onError that is no function', { secret: SECRET, dedup: { onError: 'log' } }, 'dedup.onError must be a function'],
    ])('refuses %s, naming what is wrong', (_name, options, says) => {
      expect(() => createReceiver(options as never)).toThrow(TypeError);
      expect(() => createReceiver(options as never)).toThrow(says);
    });

    it.each([
      ['leaseMs', { leaseMs: 2_000 }, 'dedup.leaseMs'],
      ['maxClaimMs', { maxClaimMs: 2_000 }, 'dedup.maxClaimMs'],
      ['retentionMs', { retentionMs: 2_000 }, 'dedup.retentionMs'],
      ['dedupUnavailable', { dedupUnavailable: 'process' }, "dedup.whenUnavailable ('reject' or 'process')"],
      ['onStoreError', { onStoreError: () => undefined }, "dedup.onError, and tenants.onLookupError for a tenant's secret"],
      ['tenant', { tenant: () => 'acme' }, 'tenants.of, beside tenants.secret'],
      ['secretCacheMs', { secretCacheMs: 2_000 }, 'tenants.cacheMs'],
      ['secretLookupTimeoutMs', { secretLookupTimeoutMs: 2_000 }, 'tenants.lookupTimeoutMs'],
      ['secretCacheSize', { secretCacheSize: 10 }, 'tenants.cacheSize'],
    ])('refuses the option %s of rc.1 at the top level, naming its new place', (name, moved, place) => {
      expect(() => createReceiver({ secret: SECRET, ...moved } as never)).toThrow(new WebhookOptionsError(`svc-webhooks: the option ${name} is now ${place}`));
    });

    it('refuses a store given as dedup, naming dedup: { store }, rather than read it as options', () => {
      const store = new MemoryDedupStore({ now });
      expect(() => createReceiver({ secret: SECRET, dedup: store as never })).toThrow(
        new WebhookOptionsError('svc-webhooks: dedup takes options, not the store: give the store as dedup: { store }'),
      );
    });

    it('refuses a secret looked up per tenant given as secret, naming tenants.secret', () => {
      expect(() => createReceiver({ secret: (() => SECRET) as never })).toThrow(
        new WebhookOptionsError('svc-webhooks: a secret looked up per tenant is now tenants.secret, beside tenants.of, which reads the tenant from the request'),
      );
    });

    it.each([
      ['neither', {}],
      ['both', { secret: SECRET, tenants: { of: () => 'acme', secret: () => SECRET } }],
    ])('refuses %s of secret and tenants', (_name, options) => {
      expect(() => createReceiver(options as never)).toThrow(
        new WebhookOptionsError('svc-webhooks: give secret (one endpoint) or tenants (many tenants, each with its own secret): exactly one of them'),
      );
    });

    it('takes dedup: false alone, and neither reads nor mutates the options it is given', () => {
      const options = Object.freeze({ secret: SECRET, now, dedup: Object.freeze({ leaseMs: 2_000 }) });
      expect(() => createReceiver({ secret: SECRET, dedup: false })).not.toThrow();
      expect(() => createReceiver(options)).not.toThrow();
    });

    it.each([
      ['a zero body deadline', { bodyTimeoutMs: 0 }, 'bodyTimeoutMs must be a whole number of milliseconds from 1 to 2147483647'],
      ['a zero hold limit', { dedup: { maxClaimMs: 0 } }, 'dedup.maxClaimMs must be a whole number of milliseconds from 1 to 9007199254740991'],
      ['a hold limit shorter than the lease', { dedup: { leaseMs: 2_000, maxClaimMs: 1_999 } }, 'dedup.maxClaimMs must be at least dedup.leaseMs'],
    ])('refuses %s with the whole message', (_name, options, says) => {
      expect(() => createReceiver({ secret: SECRET, ...options })).toThrow(new WebhookOptionsError(`svc-webhooks: ${says}`));
    });

    it('takes a hold limit equal to the lease', () => {
      expect(() => createReceiver({ secret: SECRET, dedup: { leaseMs: 2_000, maxClaimMs: 2_000 } })).not.toThrow();
    });

    it.each([
      ['null', null],
      ['a function carrying the four methods', Object.assign(() => {}, methods)],
      ['a store without begin', { ...methods, begin: undefined }],
      ['a store without complete', { ...methods, complete: undefined }],
      ['a store without release', { ...methods, release: undefined }],
      ['a store without renew', { ...methods, renew: undefined }],
      ['a store whose release is no function', { ...methods, release: true }],
    ])('refuses as dedup.store %s', (_name, store) => {
      expect(() => createReceiver({ secret: SECRET, dedup: { store: store as never } })).toThrow(
        new WebhookOptionsError('svc-webhooks: dedup.store must be a DedupStore (begin, complete, release and renew)'),
      );
    });

    it.each([
      ['null', null],
      ['true', true],
      ['a string', 'redis'],
    ])('refuses as dedup %s', (_name, dedup) => {
      expect(() => createReceiver({ secret: SECRET, dedup: dedup as never })).toThrow(
        new WebhookOptionsError('svc-webhooks: dedup must be an object of options ({ store, leaseMs, … }) or false'),
      );
    });

    it('exposes the body limit in force', () => {
      expect(createReceiver({ secret: SECRET }).limits.maxPayloadBytes).toBe(1024 * 1024);
      expect(createReceiver({ secret: SECRET, maxPayloadBytes: 10 }).limits.maxPayloadBytes).toBe(10);
    });
  });

  describe('receive', () => {
    it('answers 503 when begin() answers a function, whatever it carries', async () => {
      const answer = Object.assign(() => {}, { state: 'done' });
      const dedup: DedupStore = { ...methods, begin: async () => answer as never };
      expect(await receiveWith({ dedup: { store: dedup } })).toMatchObject({ action: 'respond', response: { status: 503 } });
    });

    it('tells the sender to retry later when the store is down or another delivery holds the event', async () => {
      const down: DedupStore = { ...methods, begin: () => Promise.reject(new Error('down')) };
      expect(await receiveWith({ dedup: { store: down } })).toMatchObject({
        response: { status: 503, body: { error: { code: 'dedup_unavailable', message: 'the dedup store is unavailable; retry later' } } },
      });
      const held: DedupStore = { ...methods, begin: async () => ({ state: 'in_progress' }) };
      expect(await receiveWith({ dedup: { store: held } })).toMatchObject({
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
      expect(await receiveWith({ dedup: { store: dedup } })).toMatchObject({ action: 'respond', response: { status: 503 } });
      const processed = await receiveWith({ dedup: { store: dedup, whenUnavailable: 'process' } });
      expect(processed).toMatchObject({ action: 'process', delivery: { id: 'evt_1' } });
      expect(processed).not.toHaveProperty('settle');
    });

    it("keeps its own store's leases on the receiver's clock", async () => {
      let clock = now();
      const receiver = createReceiver({ secret: SECRET, now: () => clock, dedup: { leaseMs: 1_000 } });
      const { body, headers } = signedRequest();
      const first = await verifyAndClaim(receiver, body, headers);
      expect(first).toMatchObject({ action: 'process' });
      expect(await verifyAndClaim(receiver, body, headers)).toMatchObject({ response: { status: 409 } });
      clock += 1_000;
      const retry = await verifyAndClaim(receiver, body, headers);
      expect(retry).toMatchObject({ action: 'process' });
      for (const reception of [first, retry]) if (reception.action === 'process') await reception.settle?.(false);
    });

    it('answers a duplicate 200 with no headers', async () => {
      expect(await receiveWith({ dedup: { store: { ...methods } } })).toEqual({
        action: 'respond',
        response: { status: 200, headers: {}, body: { received: true, duplicate: true } },
      });
    });
  });

  describe('refused', () => {
    it('answers the code, message and status, and keeps the headers given', () => {
      const error = new WebhookDedupError('delivery_in_progress', 'busy');
      expect(refused(error, { 'retry-after': '5' })).toEqual({
        status: 409,
        headers: { 'retry-after': '5' },
        body: { error: { code: 'delivery_in_progress', message: 'busy' } },
        error,
      });
      expect(refused(new WebhookVerificationError('invalid_signature', 'no')).headers).toEqual({});
    });

  });

  describe('bodyRefusal', () => {
    it('closes the connection after a 413 or a 408, whose body is left unread, and only then', () => {
      expect(bodyRefusal(new WebhookBodyError('payload_too_large', 'big'))).toMatchObject({ status: 413, headers: { connection: 'close' } });
      expect(bodyRefusal(new WebhookBodyError('body_timeout', 'slow'))).toMatchObject({ status: 408, headers: { connection: 'close' } });
      expect(bodyRefusal(new WebhookBodyError('body_already_parsed', 'parsed')).headers).toEqual({});
    });
  });
});

describe('createReceiver: what the store is asked', () => {
  type Call =
    | { readonly op: 'begin'; readonly id: string; readonly leaseMs: number }
    | { readonly op: 'complete'; readonly id: string; readonly token: string; readonly retentionMs: number }
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

    async complete(id: string, token: string, retentionMs: number): Promise<boolean> {
      this.calls.push({ op: 'complete', id, token, retentionMs });
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

  /** Receives a signed delivery of `id` through a pipeline whose route answers `status`, which settles the claim. */
  async function handled(store: RecordingStore, dedup: DedupOptions, id: string, status: number): Promise<void> {
    const platform = { ...decidedAnswers(), statusOf: () => status };
    const receive = createPipeline<ReturnType<typeof signedRequest>, WebhookResponse>({ secret: SECRET, now, dedup: { store, ...dedup } }, platform, {
      route: async () => status,
    });
    await receive(signedRequest({ id }));
  }

  afterEach(() => {
    vi.restoreAllMocks();
  });

  describe('the durations the store receives', () => {
    it('claims for leaseMs and completes for retentionMs, each with its own value', async () => {
      const store = new RecordingStore();
      await handled(store, { leaseMs: 12_345, retentionMs: 98_765_000 }, 'evt_1', 204);
      expect(store.calls.filter((call) => call.op === 'begin')).toEqual([{ op: 'begin', id: keyOf('evt_1'), leaseMs: 12_345 }]);
      expect(store.settlementsOf(keyOf('evt_1'))).toEqual([{ op: 'complete', id: keyOf('evt_1'), token: `token-of-${keyOf('evt_1')}`, retentionMs: 98_765_000 }]);
    });

    it('defaults to a lease of 60 s and a retention of four days', async () => {
      const store = new RecordingStore();
      await handled(store, {}, 'evt_1', 200);
      expect(store.calls.filter((call) => call.op === 'begin')).toEqual([{ op: 'begin', id: keyOf('evt_1'), leaseMs: 60_000 }]);
      expect(store.settlementsOf(keyOf('evt_1'))).toEqual([
        { op: 'complete', id: keyOf('evt_1'), token: `token-of-${keyOf('evt_1')}`, retentionMs: 4 * 24 * 3600 * 1000 },
      ]);
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
        const receiver = createReceiver({ secret: SECRET, now, dedup: { store: held, leaseMs } });
        const request = signedRequest();
        expect(await verifyAndClaim(receiver, request.body, request.headers)).toMatchObject({
          action: 'respond',
          response: { status: 409, headers: { 'retry-after': retryAfter } },
        });
      }
    });
  });

  describe('complete or release, by the status answered', () => {
    it.each([200, 201, 202, 204, 299])('completes after %s', async (status) => {
      const store = new RecordingStore();
      const key = keyOf(`evt_${status}`);
      await handled(store, { retentionMs: 5_000 }, `evt_${status}`, status);
      expect(store.settlementsOf(key)).toEqual([{ op: 'complete', id: key, token: `token-of-${key}`, retentionMs: 5_000 }]);
    });

    // Only a 2xx makes the sender stop: after anything else its retry must run the handler again.
    it.each([100, 199, 300, 301, 304, 400, 404, 409, 413, 499, 500, 503])('releases after %s', async (status) => {
      const store = new RecordingStore();
      const key = keyOf(`evt_${status}`);
      await handled(store, {}, `evt_${status}`, status);
      expect(store.settlementsOf(key)).toEqual([{ op: 'release', id: key, token: `token-of-${key}` }]);
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
      const taken = status < 300;
      const seen: unknown[] = [];
      // A short lease: settling retries the store until just before it ends.
      const receiver = createReceiver({ secret: SECRET, now, dedup: { store: failing(method, new Error('down')), leaseMs: 200, onError: (error) => seen.push(error) } });
      const request = signedRequest();
      const reception = await verifyAndClaim(receiver, request.body, request.headers);
      if (reception.action !== 'process' || reception.settle === undefined) throw new Error('expected a claim');
      await expect(reception.settle(taken)).resolves.toBe(undefined);
      expect(seen).toContainEqual(new Error('down'));
    });

    it.each([
      ['an Error', new Error('connection reset'), 'Error: connection reset'],
      ['a string', 'timeout', 'string: timeout'],
    ])('is logged by default with its reason when the store rejects with %s', async (_name, reason, said) => {
      const log = vi.spyOn(console, 'error').mockImplementation(() => {});
      const receiver = createReceiver({ secret: SECRET, now, dedup: { store: failing('complete', reason), leaseMs: 200 } });
      const request = signedRequest();
      const reception = await verifyAndClaim(receiver, request.body, request.headers);
      if (reception.action !== 'process' || reception.settle === undefined) throw new Error('expected a claim');
      await reception.settle(true);
      expect(log.mock.calls).toEqual([
        [
          `svc-webhooks: the dedup store failed to complete event "${keyOf('evt_1')}" (${said}); ` +
            'the lease ran out first, so a retry of that event may run the handler again.',
        ],
      ]);
    });
  });
});

describe('createReceiver: ordering options', () => {
  const version = (event: WebhookEvent): unknown => event.timestamp;

  it('refuses ordering without dedup, with a store that cannot order, without version, and beside a handoff', () => {
    expect(() => createReceiver({ secret: SECRET, dedup: false, ordering: { version } })).toThrow(
      new WebhookOptionsError("svc-webhooks: ordering needs dedup: the store records each object's version; give dedup (or leave it out for a memory store), not false"),
    );
    const plain: DedupStore = { begin: async () => ({ state: 'in_progress' }), complete: async () => true, release: async () => true, renew: async () => true };
    expect(() => createReceiver({ secret: SECRET, dedup: { store: plain }, ordering: { version } })).toThrow(
      new WebhookOptionsError('svc-webhooks: ordering needs a dedup store that orders events (an OrderingDedupStore); this one lacks beginInOrder, completeInOrder, releaseInOrder, renewInOrder'),
    );
    expect(() => createReceiver({ secret: SECRET, ordering: {} as never })).toThrow(WebhookOptionsError);
    expect(() => createReceiver({ secret: SECRET, ordering: { version, key: 'id' } as never })).toThrow(new WebhookOptionsError('svc-webhooks: ordering.key must be a function'));
    expect(() => createReceiver({ secret: SECRET, ordering: { version, staleEvents: 'drop' } as never })).toThrow(WebhookOptionsError);
    expect(() => createPipeline({ secret: SECRET, handoff: { hand: async () => undefined }, ordering: { version } } as never, {} as never)).toThrow(
      new WebhookOptionsError("svc-webhooks: ordering does not apply to a handoff, whose queue runs jobs in an order of its own: give ordering to the queue's worker (work({ ordering }))"),
    );
  });

  it('takes a memory store of its own by default, and copies the options: a later change to them has no effect', async () => {
    const ordering = { version, staleEvents: 'run' as 'run' | 'skip' };
    const receiver = createReceiver({ secret: SECRET, now, ordering });
    ordering.staleEvents = 'skip';
    const deliver = async (id: string, timestamp: string) => {
      const body = JSON.stringify({ id, type: 'message.received', timestamp, data: { object: { id: 'msg_1' } } });
      const reception = await verifyAndClaim(receiver, Buffer.from(body), signedRequest({ id, body }).headers);
      if (reception.action === 'process') await reception.settle?.(true);
      return reception;
    };
    await deliver('evt_2', '2026-11-29T12:00:02Z');
    const older = await deliver('evt_1', '2026-11-29T12:00:01Z');
    expect(older.action === 'process' && older.delivery.stale).toBe(true);
  });
});

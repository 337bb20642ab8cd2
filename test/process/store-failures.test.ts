/**
 * Telling the operator of a failed store: an onStoreError that cannot change
 * anything by throwing, or the default log line, written at most once per
 * store per interval, naming what failed and what it leads to; and the
 * channels a subscriber hears each failure on.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SECRET_LOOKUP_CHANNEL, STORE_CHANNEL } from '../../src/process/diagnostics.js';
import { storeErrorLog, storeErrorReporter, tellLookupFailure, tellStoreFailure } from '../../src/process/store-failures.js';
import { storeFailureHint } from '../../src/stores/store-failure-hint.js';
import { failingBothWays } from '../helpers/failing-callbacks.js';
import { recordingLogger } from '../helpers/recording-logger.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('storeErrorReporter', () => {
  it('hands the error to dedup.onError, and resolves only once its promise has', async () => {
    const heard: unknown[] = [];
    let finish!: () => void;
    const report = storeErrorReporter((error, context) => {
      heard.push([error, context]);
      return new Promise<void>((resolve) => (finish = resolve));
    });
    let reported = false;
    const reporting = report(new Error('renew failed'), { operation: 'renew', key: 'evt_1' }).then(() => (reported = true));
    expect(heard).toEqual([[new Error('renew failed'), { operation: 'renew', key: 'evt_1' }]]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(reported).toBe(false);
    finish();
    await reporting;
    expect(reported).toBe(true);
  });

  it('logs nothing when dedup.onError succeeds', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    await storeErrorReporter(() => undefined)(new Error('complete failed'), { operation: 'complete', key: 'evt_1' });
    expect(log).not.toHaveBeenCalled();
  });

  it.each(failingBothWays(new Error('pager down')))('logs one line and resolves when dedup.onError %s', async (_how, onStoreError) => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    await expect(storeErrorReporter(onStoreError)(new Error('complete failed'), { operation: 'complete', key: 'evt_1' })).resolves.toBe(undefined);
    expect(log.mock.calls).toEqual([['svc-webhooks: dedup.onError threw (pager down) on a failed complete']]);
  });
});

describe('storeErrorLog', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_700_000_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const lines = (log: { mock: { calls: unknown[][] } }) => log.mock.calls.map(([line]) => line);

  it('logs one line naming the store error, what it led to, and what to do where the cause is known', () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const missingTable = Object.assign(new Error('relation "processed_webhooks" does not exist'), { code: '42P01' });
    storeErrorLog({})(missingTable, { operation: 'begin', key: 'evt_1' });
    expect(lines(log)).toEqual([
      'svc-webhooks: the dedup store failed to begin event "evt_1" (Error 42P01: relation "processed_webhooks" does not exist); ' +
        'the request was answered 503 and the sender will retry it. ' +
        storeFailureHint(missingTable),
    ]);
    expect(storeFailureHint(missingTable)).toMatch(/migrate\(\)/);
  });

  it.each([
    ['complete', 'may run the handler again'],
    ['release', 'waits for the lease to end'],
    ['renew', 'may run the handler again while it still runs'],
  ] as const)('says what a failed %s leads to', (operation, consequence) => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    storeErrorLog({})(new Error('connection refused'), { operation, key: 'evt_1' });
    expect(lines(log)).toEqual([expect.stringContaining(consequence)]);
  });

  it('writes at most one line per store per 5 s while it stays down, then counts the failures it left out', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const store = {};
    const first = storeErrorLog(store);
    const second = storeErrorLog(store);
    for (let i = 0; i < 3; i++) first(new Error('down'), { operation: 'begin', key: `evt_${i}` });
    second(new Error('down'), { operation: 'begin', key: 'evt_3' });
    storeErrorLog({})(new Error('other store down'), { operation: 'begin', key: 'evt_4' });
    expect(log).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(4_999);
    first(new Error('down'), { operation: 'begin', key: 'evt_5' });
    expect(log).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1);
    first(new Error('down'), { operation: 'begin', key: 'evt_6' });
    expect(log).toHaveBeenCalledTimes(3);
    expect(lines(log)[2]).toMatch(/ \(4 more store failures since the last line\)$/);
    await vi.advanceTimersByTimeAsync(5_000);
    first(new Error('down'), { operation: 'begin', key: 'evt_7' });
    expect(lines(log)[3]).not.toMatch(/more store failures/);
  });

  it("gives a logger the fields of each line: the code, what failed, the delivery's id and type, the tenant, the error, and the failures left out", async () => {
    const { logger, lines: written } = recordingLogger();
    const store = {};
    const logged = storeErrorLog(store, undefined, logger);
    logged(new Error('down'), { operation: 'begin', key: 'k:evt_1', id: 'evt_1', type: 'call.missed', tenant: 'acme' });
    logged(new Error('down'), { operation: 'begin', key: 'k:evt_2' });
    await vi.advanceTimersByTimeAsync(5_000);
    logged(Object.assign(new Error('gone'), { code: 'ECONNREFUSED' }), { operation: 'complete', key: 'k:evt_3' });
    storeErrorLog({}, undefined, logger)(new TypeError('no row'), { operation: 'lookup', id: 'evt_4', tenant: 'acme' });
    storeErrorLog({}, undefined, logger)(new TypeError('no params'), { operation: 'lookup', id: 'evt_5' });
    // Strictly: a record names an id, a type or a tenant only where there is one.
    expect(written.map(([level, fields]) => [level, fields])).toStrictEqual([
      ['warn', { code: 'store_failed', operation: 'begin', key: 'k:evt_1', id: 'evt_1', type: 'call.missed', tenant: 'acme', errorClass: 'Error', errorMessage: 'down' }],
      ['error', { code: 'store_failed', operation: 'complete', key: 'k:evt_3', errorClass: 'Error', errorCode: 'ECONNREFUSED', errorMessage: 'gone', unlogged: 1 }],
      ['warn', { code: 'secret_unavailable', operation: 'lookup', id: 'evt_4', tenant: 'acme', errorClass: 'TypeError', errorMessage: 'no row' }],
      ['warn', { code: 'secret_unavailable', operation: 'lookup', id: 'evt_5', errorClass: 'TypeError', errorMessage: 'no params' }],
    ]);
  });
});

describe('storeErrorLog, for a secret lookup', () => {
  it('names the tenant and the delivery, and gives no dedup store hint', () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const missingTable = Object.assign(new Error('relation "tenants" does not exist'), { code: '42P01' });
    storeErrorLog({})(missingTable, { operation: 'lookup', id: 'evt_2', tenant: 'acme' });
    expect(log.mock.calls).toEqual([
      [
        'svc-webhooks: the secret lookup for tenant "acme" failed (delivery "evt_2"; Error 42P01: relation "tenants" does not exist); ' +
          'the request was answered 503 and the sender will retry it.',
      ],
    ]);
  });

  it('writes a tenant of 8 KB full of escape bytes, quoted back by the error, cut and escaped on one line', () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const tenant = '\u001b]0;owned\u0007\u001b[2J'.repeat(8 * 1024 / 16);
    const quotedBack = Object.assign(new Error(`invalid input syntax for type uuid: "${tenant}"`), { code: '22P02' });
    storeErrorLog({})(quotedBack, { operation: 'lookup', id: 'evt_2', tenant });
    const [[line]] = log.mock.calls as [[string]];
    expect(line).not.toMatch(/[\p{Cc}\u2028\u2029]/u);
    // Each value from outside is cut at 200 characters: what the failure leads to is still said.
    expect(line).toMatch(/^svc-webhooks: the secret lookup for tenant "(\\u001b\]0;owned\\u0007\\u001b\[2J)+[^"]*… failed \(delivery "evt_2"; Error 22P02: invalid input syntax/);
    expect(line).toMatch(/\); the request was answered 503 and the sender will retry it\.$/);
    expect(line.length).toBeLessThan(700);
  });

  it('says tenants.of threw where no tenant was named', () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    storeErrorLog({})(new TypeError('no params'), { operation: 'lookup', id: 'evt_3' });
    expect(log.mock.calls).toEqual([
      ['svc-webhooks: tenants.of threw for delivery "evt_3" (TypeError: no params); the request was answered 503 and the sender will retry it.'],
    ]);
  });

  it("says what a failed begin leads to in a worker's words", () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    storeErrorLog({}, 'the job waits in the delayed set and is tried again')(new Error('down'), { operation: 'begin', key: 'k:evt_4' });
    expect(log.mock.calls).toEqual([['svc-webhooks: the dedup store failed to begin event "k:evt_4" (Error: down); the job waits in the delayed set and is tried again.']]);
  });
});

describe('tellStoreFailure and tellLookupFailure', () => {
  it('publish each failure on its channel, naming the tenant only where there is one', () => {
    const stores: unknown[] = [];
    const lookups: unknown[] = [];
    const onStore = (message: unknown): void => void stores.push(message);
    const onLookup = (message: unknown): void => void lookups.push(message);
    subscribe(STORE_CHANNEL, onStore);
    subscribe(SECRET_LOOKUP_CHANNEL, onLookup);
    try {
      const error = new Error('down');
      tellStoreFailure('begin', 'k:evt_1', 1, error);
      tellStoreFailure('complete', 'k:evt_2', 2, error, 'acme');
      tellLookupFailure('evt_3', undefined, error);
      tellLookupFailure('evt_4', 'acme', error);
      // Strictly: a tenant key holding undefined is not the same message.
      expect(stores).toStrictEqual([
        { operation: 'begin', key: 'k:evt_1', attempt: 1, error },
        { operation: 'complete', key: 'k:evt_2', attempt: 2, error, tenant: 'acme' },
      ]);
      expect(lookups).toStrictEqual([{ id: 'evt_3', error }, { id: 'evt_4', tenant: 'acme', error }]);
    } finally {
      unsubscribe(STORE_CHANNEL, onStore);
      unsubscribe(SECRET_LOOKUP_CHANNEL, onLookup);
    }
  });
});

/** The logger option: what it takes, the default console lines, and a logger that fails taking nothing down. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkLogger, CONSOLE_LINES, errorFields, writeLog, type WebhookLogger } from '../../src/base/logger.js';

afterEach(() => vi.restoreAllMocks());

describe('checkLogger', () => {
  it('takes a logger with warn and error functions, console included, and gives the console lines for none', () => {
    const logger: WebhookLogger = { warn: () => undefined, error: () => undefined };
    expect(checkLogger(logger)).toBe(logger);
    expect(checkLogger(console)).toBe(console);
    expect(checkLogger(undefined)).toBe(CONSOLE_LINES);
  });

  it('refuses what lacks either function, with a TypeError naming the shape', () => {
    const functionWithMethods = Object.assign(() => undefined, { warn: () => undefined, error: () => undefined });
    for (const logger of [null, 'pino', () => undefined, functionWithMethods, {}, { warn: () => undefined }, { error: () => undefined }, { warn: 1, error: () => undefined }]) {
      expect(() => checkLogger(logger)).toThrow(new TypeError('svc-webhooks: logger must have warn(fields, message) and error(fields, message) functions, as pino has'));
    }
  });
});

describe('CONSOLE_LINES', () => {
  it('writes each level as one sentence on console.error, the fields left out', () => {
    const lines = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    CONSOLE_LINES.warn({ code: 'handler_failed', id: 'evt_1' }, 'a warning');
    CONSOLE_LINES.error({ code: 'store_failed' }, 'an error');
    expect(lines.mock.calls).toEqual([['svc-webhooks: a warning'], ['svc-webhooks: an error']]);
  });
});

describe('writeLog', () => {
  it('calls the level asked for with the fields and the message', () => {
    const calls: unknown[] = [];
    const logger: WebhookLogger = { warn: (...args) => calls.push(['warn', ...args]), error: (...args) => calls.push(['error', ...args]) };
    writeLog(logger, 'warn', { code: 'handler_failed', id: 'evt_1' }, 'one');
    writeLog(logger, 'error', { code: 'store_failed', operation: 'complete' }, 'two');
    expect(calls).toEqual([
      ['warn', { code: 'handler_failed', id: 'evt_1' }, 'one'],
      ['error', { code: 'store_failed', operation: 'complete' }, 'two'],
    ]);
  });

  it('writes the line on console.error, with why, when the logger throws or rejects', async () => {
    const lines = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const throwing: WebhookLogger = {
      warn: () => {
        throw new Error('stream closed');
      },
      error: () => Promise.reject(new Error('transport down')),
    };
    writeLog(throwing, 'warn', { code: 'handler_failed' }, 'the line');
    writeLog(throwing, 'error', { code: 'store_failed' }, 'the other line');
    await vi.waitFor(() => expect(lines).toHaveBeenCalledTimes(2));
    expect(lines.mock.calls).toEqual([
      ['svc-webhooks: the logger failed (stream closed); the line'],
      ['svc-webhooks: the logger failed (transport down); the other line'],
    ]);
  });
});

describe('errorFields', () => {
  it("names an error's class, and its message only when asked", () => {
    expect(errorFields(new RangeError('out of range'), true)).toEqual({ errorClass: 'RangeError', errorMessage: 'out of range' });
    expect(errorFields(new RangeError('out of range'), false)).toEqual({ errorClass: 'RangeError' });
    expect(errorFields('a thrown string', false)).toEqual({ errorClass: 'string' });
    expect(errorFields(42, true)).toEqual({ errorClass: 'number', errorMessage: '42' });
  });
});

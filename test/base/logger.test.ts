/** The logger option: what it takes, the default console lines, and a logger that fails taking nothing down. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkLogger, CONSOLE_LINES, errorFields, quoted, writeLog, type WebhookLogger } from '../../src/base/logger.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

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
      expect(() => checkLogger(logger)).toThrow(new WebhookOptionsError('svc-webhooks: logger must have warn(fields, message) and error(fields, message) functions, as pino has'));
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

  // A tenant's name as a Postgres error quotes it back: escape sequences, a bell, a forged line, a reordered one.
  const HOSTILE = 'acme\u001b[2J\u0007\r\nsvc-webhooks: forged\u2028x\u202eevil';

  it('writes a field with control characters, line and paragraph separators and bidi marks escaped, on one line', () => {
    const lines = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    CONSOLE_LINES.warn({ code: 'secret_unavailable', tenant: HOSTILE }, `the secret lookup failed (Error: no tenant ${HOSTILE})`);
    expect(lines.mock.calls).toEqual([['svc-webhooks: the secret lookup failed (Error: no tenant acme\\x1b[2J\\x07\\r\\nsvc-webhooks: forged\\u2028x\\u202eevil)']]);
  });

  it('cuts a line past 2,000 characters, so that a field of 8 KB comes out bounded', () => {
    const lines = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    CONSOLE_LINES.error({ code: 'store_failed' }, 'x'.repeat(2000));
    CONSOLE_LINES.error({ code: 'store_failed', tenant: 'y'.repeat(8 * 1024) }, `a: ${'y'.repeat(8 * 1024)}`);
    expect(lines.mock.calls).toEqual([[`svc-webhooks: ${'x'.repeat(2000)}`], [`svc-webhooks: a: ${'y'.repeat(1997)}…`]]);
  });
});

describe('quoted', () => {
  it('quotes a value from outside as JSON does, its other unprintable characters escaped, cut past 200 characters', () => {
    expect(quoted('evt_1')).toBe('"evt_1"');
    expect(quoted('a"b\u001b\u0085\u2028\u202e')).toBe('"a\\"b\\u001b\\x85\\u2028\\u202e"');
    expect(quoted('x'.repeat(198))).toBe(`"${'x'.repeat(198)}"`);
    expect(quoted('x'.repeat(8 * 1024))).toBe(`"${'x'.repeat(199)}…`);
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

  it("writes the console line of a failed logger escaped too: the logger's error and the line", () => {
    const lines = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const throwing: WebhookLogger = {
      warn: () => {
        throw new Error('closed\u001b[2J');
      },
      error: () => undefined,
    };
    writeLog(throwing, 'warn', { code: 'handler_failed' }, 'the line\r\nforged');
    expect(lines.mock.calls).toEqual([['svc-webhooks: the logger failed (closed\\x1b[2J); the line\\r\\nforged']]);
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

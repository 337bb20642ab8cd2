/**
 * The logger option: what it takes, the default console lines (a thrown error's stack below its sentence),
 * a logger that fails taking nothing down, and the quiet spells of a log that writes a line a key an interval.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkLogger, CONSOLE_LINES, errorFields, lineDue, quoted, thrownFields, thrownText, writeLog, type QuietSpell, type WebhookLogger } from '../../src/base/logger.js';
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

  /** An error whose stack is `stack`, as V8 writes it: its name and message, then a frame a line. */
  const withStack = (stack: unknown): Error => Object.assign(new Error('CRM rejected message sms_boom'), { stack });

  it("writes the frames of err's stack below the sentence, one an indented line, and not its first lines, which the sentence gives", () => {
    const lines = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const err = withStack('Error: CRM rejected message sms_boom\n    at send (/app/src/crm.ts:12:11)\n    at async handler (/app/src/hooks.ts:4:3)');
    CONSOLE_LINES.warn({ code: 'handler_failed', err }, 'the handler failed (Error: CRM rejected message sms_boom)');
    expect(lines.mock.calls).toEqual([
      ['svc-webhooks: the handler failed (Error: CRM rejected message sms_boom)\n    at send (/app/src/crm.ts:12:11)\n    at async handler (/app/src/hooks.ts:4:3)'],
    ]);
  });

  it("writes a real error's own frames, this spec's first", () => {
    const lines = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    CONSOLE_LINES.warn({ code: 'handler_failed', err: new RangeError('out of range') }, 'the handler failed');
    const [sentence, first] = String(lines.mock.calls[0]?.[0]).split('\n');
    expect(sentence).toBe('svc-webhooks: the handler failed');
    expect(first).toMatch(/^ {4}at .*logger\.test\.ts:\d+:\d+\)?$/);
  });

  it('lets no line of the stack start a line of its own: a message over lines, escapes and separators in frames', () => {
    const lines = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const err = withStack('Error: one\nsvc-webhooks: forged\n    at evil\u001b[2J (/app/x\u2028y.ts:1:1)\r\n\tat tab (/app/t.ts:2:2)');
    CONSOLE_LINES.warn({ code: 'handler_failed', err }, 'the handler failed');
    expect(lines.mock.calls).toEqual([['svc-webhooks: the handler failed\n    at evil\\x1b[2J (/app/x\\u2028y.ts:1:1)\n    at tab (/app/t.ts:2:2)']]);
  });

  it('writes at most 20 frames, each cut past 400 characters', () => {
    const lines = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const frames = Array.from({ length: 30 }, (_, index) => `    at f${index} (/app/${'d/'.repeat(index === 0 ? 300 : 1)}f.ts:1:1)`);
    CONSOLE_LINES.warn({ code: 'handler_failed', err: withStack(['Error: deep', ...frames].join('\n')) }, 'the handler failed');
    const [, ...shown] = String(lines.mock.calls[0]?.[0]).split('\n');
    expect(shown).toHaveLength(20);
    expect(shown[0]).toBe(`    ${frames[0]!.trim().slice(0, 400)}…`);
    expect(shown[19]).toBe('    at f19 (/app/d/f.ts:1:1)');
  });

  it('writes the sentence alone for an error whose stack is no string, or whose stack getter throws', () => {
    const lines = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const throwing = Object.defineProperty(new Error('x'), 'stack', {
      get() {
        throw new Error('no stack');
      },
    });
    CONSOLE_LINES.warn({ code: 'handler_failed', err: withStack(undefined) }, 'one');
    CONSOLE_LINES.warn({ code: 'handler_failed', err: throwing }, 'two');
    expect(lines.mock.calls).toEqual([['svc-webhooks: one'], ['svc-webhooks: two']]);
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

describe('thrownText and thrownFields', () => {
  it("name what the user's code threw: an Error by its class and message, anything else by its type and text", () => {
    expect(thrownText(new TypeError('CRM down'))).toBe('TypeError: CRM down');
    expect(thrownText(new TypeError(''))).toBe('TypeError');
    expect(thrownText('CRM down')).toBe('string: CRM down');
    expect(thrownText(undefined)).toBe('undefined');
    expect(thrownText(null)).toBe('object');
  });

  it('give the error itself under err where it is one, with its class and message', () => {
    const thrown = new TypeError('CRM down');
    expect(thrownFields(thrown)).toStrictEqual({ errorClass: 'TypeError', errorMessage: 'CRM down', err: thrown });
    expect(thrownFields(42)).toStrictEqual({ errorClass: 'number', errorMessage: '42' });
  });
});

describe('lineDue', () => {
  it('lets the first line about a key out, counts those within the interval, and lets the next out with the count', () => {
    const spells = new Map<string, QuietSpell>();
    expect(lineDue(spells, 'a', 1000, 100)).toBe(0);
    expect(lineDue(spells, 'a', 1050, 100)).toBe(undefined);
    expect(lineDue(spells, 'a', 1099, 100)).toBe(undefined);
    expect(lineDue(spells, 'b', 1099, 100)).toBe(0);
    expect(lineDue(spells, 'a', 1100, 100)).toBe(2);
    expect(lineDue(spells, 'a', 1150, 100)).toBe(undefined);
    expect(lineDue(spells, 'a', 1300, 100)).toBe(1);
    expect(lineDue(spells, 'a', 1400, 100)).toBe(0);
  });

  it('ends a spell when the clock went back past its start, rather than staying quiet until it catches up', () => {
    const spells = new Map<string, QuietSpell>();
    expect(lineDue(spells, 'a', 10_000, 100)).toBe(0);
    expect(lineDue(spells, 'a', 9_900, 100)).toBe(0);
    expect(lineDue(spells, 'a', 9_950, 100)).toBe(undefined);
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

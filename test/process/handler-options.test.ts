/**
 * The handler options, checked once at creation: the whole TypeError each
 * mistake in them (or in dispatch's arguments) gets, and the default
 * onHandlerError's one log line, which gives what a handler threw whole: its
 * class, its message, and itself under `err`, whose stack the console shows.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { dispatch, WebhookHandlerError } from '../../src/index.js';
import { createDispatcher } from '../../src/process/dispatcher.js';
import { checkHandlerOptions, checkOnHandlerError, handlerErrorLog } from '../../src/process/handler-options.js';
import { eventOf } from '../helpers/events.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { deliveryOfEvent } from '../helpers/signed-request.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

const handler = (): void => undefined;
const delivery = deliveryOfEvent(eventOf('call.missed', 'evt_9'));
const { event } = delivery;

afterEach(() => {
  vi.restoreAllMocks();
});

const schema = z.object({ id: z.string() });

describe('handler options', () => {
  it.each([
    ['on that is null', { on: null }, 'on must be an object keyed by event type'],
    ['on that is an array', { on: [handler] }, 'on must be an object keyed by event type'],
    ['on that is a function', { on: handler }, 'on must be an object keyed by event type'],
    ['a handler that is no function', { on: { 'call.missed': 'queue' } }, "on['call.missed'] must be a function"],
    ['a null handler', { on: { 'call.missed': null } }, "on['call.missed'] must be a function"],
    ['a key of on that is not a string', { on: { [Symbol('call.missed')]: handler } }, 'the keys of on must be event type strings'],
    ['a key of on in another case', { on: { 'Call.Missed': handler } }, "on has the key 'Call.Missed', which is not an event type"],
    ['a key of on without a dot', { on: { callMissed: handler } }, "on has the key 'callMissed', which is not an event type"],
    ['a key of on that is a method name', { on: { toString: handler } }, "on has the key 'toString', which is not an event type"],
    ['a key of on with a control character', { on: { 'call.missed\n': handler } }, "on has the key 'call.missed\\n', which is not an event type"],
    ['schemas that is no object', { on: { 'call.missed': handler }, schemas: 'zod' }, 'schemas must be an object keyed by event type'],
    ['a schema without ~standard', { on: { 'call.missed': handler }, schemas: { 'call.missed': { parse: handler } } }, 'must be a Standard Schema v1'],
    [
      'a schema of another version',
      { on: { 'call.missed': handler }, schemas: { 'call.missed': { '~standard': { version: 2, vendor: 'x', validate: handler } } } },
      'must be a Standard Schema v1',
    ],
    [
      'a schema without validate',
      { on: { 'call.missed': handler }, schemas: { 'call.missed': { '~standard': { version: 1, vendor: 'x' } } } },
      'must be a Standard Schema v1',
    ],
    ['a schema for a type with no handler', { on: { 'call.missed': handler }, schemas: { 'webhook.test': schema } }, "schemas['webhook.test'] has no handler"],
    ['a schema for a type with no handler, unknown to the spec', { on: { 'call.missed': handler }, schemas: { 'call.answered': schema } }, "schemas['call.answered'] has no handler"],
    ['a key of schemas that is no event type', { on: { 'call.missed': handler }, schemas: { 'Call.Missed': schema } }, "schemas has the key 'Call.Missed'"],
    ['an unknown unknownEvents', { on: {}, unknownEvents: 'ignore' }, "unknownEvents must be 'accept' or 'reject'"],
    ['an onUnknownEvent that is no function', { on: {}, onUnknownEvent: 'log' }, 'onUnknownEvent must be a function'],
    ['onUnknownEvent beside unknownEvents', { on: {}, onUnknownEvent: handler, unknownEvents: 'accept' }, 'give onUnknownEvent or unknownEvents, not both'],
    ['an onHandlerError that is no function', { on: {}, onHandlerError: 'log' }, 'onHandlerError must be a function'],
    ['no on', {}, 'on must be an object keyed by event type'],
  ])('throws TypeError at creation for %s', (_name, options, message) => {
    const create = (): unknown => createDispatcher(options as never);
    expect(create).toThrow(TypeError);
    expect(create).toThrow(message);
  });

  it('takes an undefined handler or schema as none', async () => {
    const dispatcher = createDispatcher({ on: { 'call.missed': undefined, 'webhook.test': handler }, schemas: { 'webhook.test': undefined } });
    expect(await dispatcher.dispatch(deliveryOfEvent(eventOf('call.missed')))).toEqual({ kind: 'unhandled' });
    expect(dispatcher.handles('call.missed')).toBe(false);
    expect(dispatcher.handles('webhook.test')).toBe(true);
  });

  it('runs the handler of a type the spec does not name, as a generated contract module adds them', async () => {
    const seen: string[] = [];
    const dispatcher = createDispatcher({ on: { 'voicemail.received': (event: { type: string }) => void seen.push(event.type) } as never, unknownEvents: 'reject' });
    expect(dispatcher.handles('voicemail.received')).toBe(true);
    expect(await dispatcher.dispatch(deliveryOfEvent(eventOf('voicemail.received')))).toEqual({ kind: 'handled' });
    expect(seen).toEqual(['voicemail.received']);
    // Other types it does not know still meet the policy.
    expect(await dispatcher.dispatch(deliveryOfEvent(eventOf('call.answered')))).toMatchObject({ kind: 'failed', error: { code: 'unknown_event_type' } });
  });

  it('handles unknown types only with onUnknownEvent', () => {
    expect(createDispatcher({ on: {} }).handles('call.answered')).toBe(false);
    expect(createDispatcher({ on: {}, unknownEvents: 'reject' }).handles('call.answered')).toBe(false);
    expect(createDispatcher({ on: {}, onUnknownEvent: handler }).handles('call.answered')).toBe(true);
    expect(createDispatcher({ on: {}, onUnknownEvent: handler }).handles('call.missed')).toBe(false);
  });

  it('keeps the handlers it was given: a later change to on has no effect', async () => {
    const calls: string[] = [];
    const on: Record<string, () => void> = { 'call.missed': () => void calls.push('first') };
    const dispatcher = createDispatcher({ on });
    on['call.missed'] = () => void calls.push('second');
    on['webhook.test'] = () => void calls.push('added');
    await dispatcher.dispatch(deliveryOfEvent(eventOf('call.missed')));
    await dispatcher.dispatch(deliveryOfEvent(eventOf('webhook.test')));
    expect(calls).toEqual(['first']);
  });

  it('dispatch checks its options the same way, throwing before it returns a promise', () => {
    const delivered = deliveryOfEvent(eventOf('call.missed'));
    expect(() => dispatch(delivered, undefined as never)).toThrow(TypeError);
    expect(() => dispatch(delivered, { on: { 'Call.Missed': handler } } as never)).toThrow(TypeError);
    expect(() => dispatch(delivered, { on: {}, unknownEvents: 'ignore' } as never)).toThrow(TypeError);
  });
});

const validate = () => ({ value: undefined });
// Whether the options are refused as a key that is no event type.
const throwsFor = (options: object): boolean => {
  try {
    checkHandlerOptions(options as never);
  } catch (error) {
    return error instanceof TypeError && /has the key '.*', which is not an event type/.test(error.message);
  }
  return false;
};

describe('checkHandlerOptions', () => {
  it('says how an event type is written, for a key of on that is none', () => {
    expect(() => checkHandlerOptions({ on: { 'call missed': handler } as never })).toThrow(
      new WebhookOptionsError("svc-webhooks: on has the key 'call missed', which is not an event type: lower-case words joined by dots, as 'call.missed'"),
    );
  });

  it('takes as event types lower-case words of letters, digits and underscores, each starting with a letter, two or more joined by dots', () => {
    const taken = ['call.missed', 'ai_summary.ready', 'a.b', 'call2.missed_3', 'number.port.completed'];
    const refused = ['call', '.call.missed', 'call.missed.', 'call..missed', '2call.missed', 'call.2missed', 'call._missed', 'call.mis-sed', 'call.Missed', 'call.missed ', ' call.missed'];
    const on = Object.fromEntries(taken.map((type) => [type, handler]));
    expect([...checkHandlerOptions({ on } as never).routes.keys()]).toEqual(taken);
    expect(refused.filter((type) => !throwsFor({ on: { [type]: handler } }))).toEqual([]);
    // schemas is held to the same form.
    expect(throwsFor({ on: { 'call.missed': handler }, schemas: { 'call.missed ': schema } })).toBe(true);
  });

  it.each([
    ['null', null],
    ['a number', 1],
    ['an object whose ~standard is null', { '~standard': null }],
    ['an object whose ~standard is a string', { '~standard': 'v1' }],
    ['a version other than 1', { '~standard': { version: 2, vendor: 'x', validate } }],
  ])('refuses as a schema %s, naming its type', (_name, schema) => {
    expect(() => checkHandlerOptions({ on: { 'call.missed': handler }, schemas: { 'call.missed': schema as never } })).toThrow(
      new WebhookOptionsError("svc-webhooks: schemas['call.missed'] must be a Standard Schema v1 (zod 4, valibot 1, arktype 2, …)"),
    );
  });

  it('takes a schema that is a function, as arktype makes them', () => {
    const schema = Object.assign(() => undefined, { '~standard': { version: 1 as const, vendor: 'arktype', validate } });
    const checked = checkHandlerOptions({ on: { 'call.missed': handler }, schemas: { 'call.missed': schema } });
    expect(checked.routes.get('call.missed')).toEqual({ handler, schema });
  });

  it("keeps onUnknownEvent as the route of unknown types, the policy 'accept' by default, and the default log", () => {
    expect(checkHandlerOptions({ on: {}, onUnknownEvent: handler })).toMatchObject({ unknown: { handler }, unknownEvents: 'accept' });
    expect(checkHandlerOptions({ on: {}, unknownEvents: 'reject' })).toMatchObject({ unknown: undefined, unknownEvents: 'reject' });
    const byDefault = (): void => undefined;
    expect(checkHandlerOptions({ on: {} }, byDefault).onHandlerError).toBe(byDefault);
  });
});

describe("dispatch's arguments", () => {
  it.each([
    ['missing', undefined],
    ['null', null],
    ['a string', 'reject'],
    ['a number', 5],
  ])('refuses options that are %s', (_name, options) => {
    expect(() => dispatch(deliveryOfEvent(eventOf('call.missed')), options as never)).toThrow(
      new WebhookOptionsError('svc-webhooks: dispatch needs options with on, an object of handlers by event type'),
    );
  });

  it('refuses options without on', () => {
    expect(() => dispatch(deliveryOfEvent(eventOf('call.missed')), {} as never)).toThrow(new WebhookOptionsError('svc-webhooks: on must be an object keyed by event type'));
  });
});

describe('checkOnHandlerError', () => {
  it('answers the function given', () => {
    const onHandlerError = (): void => undefined;
    expect(checkOnHandlerError(onHandlerError)).toBe(onHandlerError);
  });

  it.each([['a string', 'log'], ['an object', {}], ['null', null]])('refuses %s', (_name, value) => {
    expect(() => checkOnHandlerError(value)).toThrow(new WebhookOptionsError('svc-webhooks: onHandlerError must be a function'));
  });
});

describe('the default onHandlerError', () => {
  /** The console lines the default writes for `error`, each cut to its sentence: the stack's frames follow it. */
  const loggedFor = (error: unknown): string[] => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    log.mockClear();
    checkOnHandlerError(undefined)(error, event, delivery);
    return log.mock.calls.map(([line]) => String(line).split('\n')[0]!);
  };
  const line = (what: string): string => `svc-webhooks: event "evt_9" of type "call.missed": ${what}; the sender will retry it`;

  it("names an Error's class and message, and shows its stack's frames below, the user's own first", () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const thrown = ((): Error => new TypeError('CRM rejected message sms_boom'))();
    checkOnHandlerError(undefined)(thrown, event, delivery);
    const [sentence, ...frames] = String(log.mock.calls[0]?.[0]).split('\n');
    expect(sentence).toBe(line('the handler failed (TypeError: CRM rejected message sms_boom)'));
    expect(frames[0]).toMatch(/^ {4}at .*handler-options\.test\.ts:\d+:\d+\)?$/);
    expect(log).toHaveBeenCalledTimes(1);
  });

  it.each([
    ['a string', 'CRM down', 'string: CRM down'],
    ['undefined', undefined, 'undefined'],
    ['null', null, 'object'],
    ['an Error without a message', new RangeError(), 'RangeError'],
  ])('names a thrown value that is %s by its type, and its text where it has one', (_name, thrown, what) => {
    expect(loggedFor(thrown)).toEqual([line(`the handler failed (${what})`)]);
  });

  it("escapes the message in the sentence and cuts it past 1,000 characters: the whole is in the fields", () => {
    expect(loggedFor(new Error('line one\r\nsvc-webhooks: forged\u001b[2J'))).toEqual([line('the handler failed (Error: line one\\r\\nsvc-webhooks: forged\\x1b[2J)')]);
    expect(loggedFor(new Error('x'.repeat(5000)))).toEqual([line(`the handler failed (Error: ${'x'.repeat(1000)}…)`)]);
  });

  it("quotes a schema failure's message, which names paths only", () => {
    const invalid = new WebhookHandlerError('invalid_event_data', 'the event failed the schema for its type at $.data.id');
    expect(loggedFor(invalid)).toEqual([line('the event failed the schema for its type at $.data.id')]);
  });

  it('names any other refusal as the Error it is', () => {
    const other = new WebhookHandlerError('handler_failed', 'the handler gave up');
    expect(loggedFor(other)).toEqual([line('the handler failed (WebhookHandlerError: the handler gave up)')]);
  });

  it('gives a logger the fields of each line: the code, the event, the key, the tenant only where there is one, the error whole', () => {
    const { logger, lines } = recordingLogger();
    const logged = handlerErrorLog('the sender will retry it', logger);
    const thrown = new TypeError('CRM rejected message sms_boom');
    logged(thrown, event, delivery);
    logged('CRM down', event, delivery);
    logged(new WebhookHandlerError('invalid_event_data', 'the event failed the schema for its type at $.data.id'), event, { ...delivery, tenant: 'acme' });
    // Strictly: a record names a tenant, or an error under err, only where there is one.
    expect(lines.map(([level, fields]) => [level, fields])).toStrictEqual([
      ['warn', { code: 'handler_failed', id: 'evt_9', type: 'call.missed', keyId: '0', errorClass: 'TypeError', errorMessage: 'CRM rejected message sms_boom', err: thrown }],
      ['warn', { code: 'handler_failed', id: 'evt_9', type: 'call.missed', keyId: '0', errorClass: 'string', errorMessage: 'CRM down' }],
      ['warn', { code: 'invalid_event_data', id: 'evt_9', type: 'call.missed', keyId: '0', errorClass: 'WebhookHandlerError', tenant: 'acme' }],
    ]);
    expect(lines[0]![1].err).toBe(thrown);
  });

  it("says in a worker's words who retries the event", () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    handlerErrorLog('BullMQ retries its job as its attempts allow')(new RangeError('x'), event, delivery);
    expect(String(log.mock.calls[0]?.[0]).split('\n')[0]).toBe('svc-webhooks: event "evt_9" of type "call.missed": the handler failed (RangeError: x); BullMQ retries its job as its attempts allow');
  });
});

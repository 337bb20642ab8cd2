/** The whole TypeError each mistake in the handler options or in dispatch's arguments gets. */
import { describe, expect, it } from 'vitest';
import { dispatch, KNOWN_EVENT_TYPES } from '../../src/index.js';
import { checkHandlerOptions } from '../../src/receive/handler-options.js';
import { eventOf } from '../handlers/events.js';

const handler = (): void => undefined;
const validate = () => ({ value: undefined });

describe('checkHandlerOptions', () => {
  it('names the known event types, and where other types go, for a key of on it does not know', () => {
    expect(() => checkHandlerOptions({ on: { 'call.mised': handler } as never }, false)).toThrow(
      new TypeError(
        `svc-webhooks: on has the key 'call.mised', which is not a known event type (${KNOWN_EVENT_TYPES.join(', ')}); ` +
          'events of other types go to onUnknown',
      ),
    );
  });

  it.each([
    ['null', null],
    ['a number', 1],
    ['an object whose ~standard is null', { '~standard': null }],
    ['an object whose ~standard is a string', { '~standard': 'v1' }],
    ['a version other than 1', { '~standard': { version: 2, vendor: 'x', validate } }],
  ])('refuses as a schema %s, naming its type', (_name, schema) => {
    expect(() => checkHandlerOptions({ on: { 'call.missed': handler }, schemas: { 'call.missed': schema as never } }, false)).toThrow(
      new TypeError("svc-webhooks: schemas['call.missed'] must be a Standard Schema v1 (zod 4, valibot 1, arktype 2, …)"),
    );
  });

  it('takes a schema that is a function, as arktype makes them', () => {
    const schema = Object.assign(() => undefined, { '~standard': { version: 1 as const, vendor: 'arktype', validate } });
    const checked = checkHandlerOptions({ on: { 'call.missed': handler }, schemas: { 'call.missed': schema } }, false);
    expect(checked?.routes.get('call.missed')).toEqual({ handler, schema });
  });

  it('refuses onHandlerError without on, unless a single handler takes it', () => {
    const onHandlerError = (): void => undefined;
    expect(() => checkHandlerOptions({ onHandlerError }, false)).toThrow(new TypeError('svc-webhooks: onHandlerError takes effect only with on'));
    expect(checkHandlerOptions({ onHandlerError }, true)).toBe(undefined);
  });
});

describe("dispatch's arguments", () => {
  it('refuses a missing on', () => {
    expect(() => dispatch(eventOf('call.missed'), undefined as never)).toThrow(
      new TypeError('svc-webhooks: dispatch needs on, an object of handlers by event type'),
    );
  });

  it.each([
    ['null', null],
    ['a string', 'reject'],
    ['a number', 5],
  ])('refuses options that are %s', (_name, options) => {
    expect(() => dispatch(eventOf('call.missed'), {}, options as never)).toThrow(new TypeError('svc-webhooks: dispatch options must be an object'));
  });
});

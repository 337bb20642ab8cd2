import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dispatch } from '../../src/index.js';
import { createDispatcher } from '../../src/receive/dispatch.js';
import { eventOf } from './events.js';

const handler = (): void => {};
const schema = z.object({ id: z.string() });

describe('handler options', () => {
  it.each([
    ['on that is null', { on: null }, 'on must be an object keyed by event type'],
    ['on that is an array', { on: [handler] }, 'on must be an object keyed by event type'],
    ['on that is a function', { on: handler }, 'on must be an object keyed by event type'],
    ['a handler that is no function', { on: { 'call.missed': 'queue' } }, "on['call.missed'] must be a function"],
    ['a null handler', { on: { 'call.missed': null } }, "on['call.missed'] must be a function"],
    ['a key of on that is not a string', { on: { [Symbol('call.missed')]: handler } }, 'the keys of on must be event type strings'],
    ['a key of on that is not a known type', { on: { 'call.mised': handler } }, "on has the key 'call.mised', which is not a known event type"],
    ['a key of on in another case', { on: { 'Call.Missed': handler } }, "on has the key 'Call.Missed', which is not a known event type"],
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
    ['a schema for an unknown type', { on: { 'call.missed': handler }, schemas: { 'call.answered': schema } }, "schemas has the key 'call.answered'"],
    ['an unknown onUnknown', { on: {}, onUnknown: 'ignore' }, "onUnknown must be 'accept', 'reject' or a function"],
    ['an onHandlerError that is no function', { on: {}, onHandlerError: 'log' }, 'onHandlerError must be a function'],
    ['schemas without on', { schemas: { 'call.missed': schema } }, 'schemas takes effect only with on'],
    ['onUnknown without on', { onUnknown: 'reject' }, 'onUnknown takes effect only with on'],
    ['onHandlerError without on', { onHandlerError: handler }, 'onHandlerError takes effect only with on'],
  ])('throws TypeError at creation for %s', (_name, options, message) => {
    const create = (): unknown => createDispatcher(options as never);
    expect(create).toThrow(TypeError);
    expect(create).toThrow(message);
  });

  it('returns no dispatcher without on, so the route answers', () => {
    expect(createDispatcher({})).toBe(undefined);
  });

  it('takes an undefined handler or schema as none', async () => {
    const dispatcher = createDispatcher({ on: { 'call.missed': undefined, 'webhook.test': handler }, schemas: { 'webhook.test': undefined } });
    expect(await dispatcher?.dispatch(eventOf('call.missed'))).toMatchObject({ status: 204 });
  });

  it('keeps the handlers it was given: a later change to on has no effect', async () => {
    const calls: string[] = [];
    const on: Record<string, () => void> = { 'call.missed': () => void calls.push('first') };
    const dispatcher = createDispatcher({ on });
    on['call.missed'] = () => void calls.push('second');
    on['webhook.test'] = () => void calls.push('added');
    await dispatcher?.dispatch(eventOf('call.missed'));
    await dispatcher?.dispatch(eventOf('webhook.test'));
    expect(calls).toEqual(['first']);
  });

  it('dispatch checks its arguments the same way, throwing before it returns a promise', () => {
    expect(() => dispatch(eventOf('call.missed'), undefined as never)).toThrow(TypeError);
    expect(() => dispatch(eventOf('call.missed'), { 'call.mised': handler } as never)).toThrow(TypeError);
    expect(() => dispatch(eventOf('call.missed'), {}, null as never)).toThrow(TypeError);
    expect(() => dispatch(eventOf('call.missed'), {}, { onUnknown: 'ignore' } as never)).toThrow(TypeError);
  });
});

/** A queued job's data, on every engine: built from an event and its context, and told apart from other jobs' data. */
import { describe, expect, it } from 'vitest';
import type { WebhookEvent } from '../../src/core/event.js';
import { isQueuedEvent, queuedEvent } from '../../src/queues/queued-event.js';
import type { HandlerContext } from '../../src/receive/handler-types.js';
import { signedRequest } from '../helpers/signed-request.js';

const event = JSON.parse(signedRequest({ id: 'evt_1', type: 'transcript.ready' }).body) as WebhookEvent;

describe('queuedEvent', () => {
  it.each<HandlerContext>([{ id: 'evt_1' }, { id: 'evt_1', keyId: 'k1' }, { id: 'evt_1', tenant: 'acme' }, { id: 'evt_1', keyId: 'k1', tenant: 'acme' }])(
    'keeps only the context fields that are set: %j',
    (context) => {
      // A context whose absent fields are there as undefined, as a receiver may build it.
      expect(queuedEvent(event, { keyId: undefined, tenant: undefined, ...context })).toStrictEqual({ event, context });
      // Through JSON, as the engines store it, and back.
      const stored: unknown = JSON.parse(JSON.stringify(queuedEvent(event, context)));
      expect(isQueuedEvent(stored)).toBe(true);
      expect(stored).toStrictEqual({ event, context });
    },
  );

  it.each([
    ['null', null],
    ['a string', 'evt_1'],
    ['no context', { event }],
    ['no event', { context: { id: 'evt_1' } }],
    ['an event without a type', { event: { ...event, type: 3 }, context: { id: 'evt_1' } }],
    ['an event without an id', { event: { ...event, id: undefined }, context: { id: 'evt_1' } }],
    ["a context whose id is not the event's", { event, context: { id: 'evt_2' } }],
    ['a keyId that is no string', { event, context: { id: 'evt_1', keyId: 1 } }],
    ['a tenant that is no string', { event, context: { id: 'evt_1', tenant: null } }],
    ['the context as fields of its own', { event, id: 'evt_1' }],
  ])('tells apart data that is no queued event: %s', (_name, data) => {
    expect(isQueuedEvent(data)).toBe(false);
  });
});

/** A job's data: built from an event and its context, read back into the handlers' context, and told apart from other jobs' data. */
import { describe, expect, it } from 'vitest';
import { contextOf, isQueuedEvent, queuedEvent } from '../../../src/queues/pg-boss/queued-event.js';
import type { WebhookEvent } from '../../../src/core/event.js';
import { signedRequest } from '../../helpers/signed-request.js';

const event = JSON.parse(signedRequest({ id: 'evt_1', type: 'transcript.ready' }).body) as WebhookEvent;

describe('queuedEvent', () => {
  it.each([
    [{ id: 'evt_1' }, { event, id: 'evt_1' }],
    [{ id: 'evt_1', keyId: 'k1' }, { event, id: 'evt_1', keyId: 'k1' }],
    [{ id: 'evt_1', tenant: 'acme' }, { event, id: 'evt_1', tenant: 'acme' }],
    [{ id: 'evt_1', keyId: 'k1', tenant: 'acme' }, { event, id: 'evt_1', keyId: 'k1', tenant: 'acme' }],
  ])('keeps only the context fields that are set: %j', (context, data) => {
    expect(queuedEvent(event, context)).toStrictEqual(data);
    // Through JSON, as pg-boss stores it, and back to the handlers' context.
    const stored = JSON.parse(JSON.stringify(queuedEvent(event, context)));
    expect(isQueuedEvent(stored)).toBe(true);
    expect(contextOf(stored)).toStrictEqual(context);
  });

  it.each([
    ['null', null],
    ['a string', 'evt_1'],
    ['no id', { event }],
    ['no event', { id: 'evt_1' }],
    ['an event without a type', { event: { ...event, type: 3 }, id: 'evt_1' }],
    ["an id that is not the event's", { event, id: 'evt_2' }],
    ['a keyId that is no string', { event, id: 'evt_1', keyId: 1 }],
    ['a tenant that is no string', { event, id: 'evt_1', tenant: null }],
  ])('tells apart data that is no queued event: %s', (_name, data) => {
    expect(isQueuedEvent(data)).toBe(false);
  });
});

/** A queued job's data, on every engine: built from a delivery, and told apart from other jobs' data. */
import { describe, expect, it } from 'vitest';
import type { WebhookDelivery } from '../../src/core/delivery.js';
import { isQueuedDelivery, queuedDelivery } from '../../src/queues/queued-delivery.js';
import { deliveryOf, keyOf } from '../helpers/signed-request.js';

const delivery = deliveryOf({ id: 'evt_1', type: 'transcript.ready' });
const { event } = delivery;

describe('queuedDelivery', () => {
  it.each<WebhookDelivery>([delivery, { ...delivery, keyId: 'k1' }, { ...delivery, tenant: 'acme' }, { ...delivery, keyId: 'k1', tenant: 'acme' }])(
    'keeps only the delivery fields that are set: %j',
    (given) => {
      // A delivery whose absent tenant is there as undefined, as a receiver may build it.
      expect(queuedDelivery({ tenant: undefined, ...given })).toStrictEqual({ delivery: given });
      // Through JSON, as the engines store it, and back.
      const stored: unknown = JSON.parse(JSON.stringify(queuedDelivery(given)));
      expect(isQueuedDelivery(stored)).toBe(true);
      expect(stored).toStrictEqual({ delivery: given });
    },
  );

  it.each([
    ['null', null],
    ['a string', 'evt_1'],
    ['no delivery', { event }],
    ['a delivery that is null', { delivery: null }],
    ['a delivery without an event', { delivery: { ...delivery, event: undefined } }],
    ['an event without a type', { delivery: { ...delivery, event: { ...event, type: 3 } } }],
    ['an event without an id', { delivery: { ...delivery, event: { ...event, id: undefined } } }],
    // What a verified request's envelope must hold, a job's event must hold too: parseEvent's rules.
    ['an event without data', { delivery: { ...delivery, event: { ...event, data: undefined } } }],
    ['an event without data.object', { delivery: { ...delivery, event: { ...event, data: {} } } }],
    ['an event without data.object.id', { delivery: { ...delivery, event: { ...event, data: { object: {} } } } }],
    ['an event whose data.object.id is no string', { delivery: { ...delivery, event: { ...event, data: { object: { id: 7 } } } } }],
    ['an event whose data.object is an array', { delivery: { ...delivery, event: { ...event, data: { object: [{ id: 'obj_1' }] } } } }],
    ['an event that is an array', { delivery: { ...delivery, event: Object.assign([], event) } }],
    ["a delivery whose id is not the event's", { delivery: { ...delivery, id: 'evt_2' } }],
    ['a delivery without an id', { delivery: { ...delivery, id: undefined } }],
    ['a timestamp that is no integer', { delivery: { ...delivery, timestamp: 1.5 } }],
    ['a timestamp that is a string', { delivery: { ...delivery, timestamp: '1700000000' } }],
    ['no keyId', { delivery: { ...delivery, keyId: undefined } }],
    ['a keyId that is no string', { delivery: { ...delivery, keyId: 1 } }],
    ['a tenant that is no string', { delivery: { ...delivery, tenant: null } }],
    ['no dedupKey', { delivery: { ...delivery, dedupKey: undefined } }],
    ["a dedupKey of another event's id", { delivery: { ...delivery, dedupKey: keyOf('evt_2') } }],
    ['the delivery as fields of its own', { ...delivery }],
    ['the 0.x data, { event, context }', { event, context: { id: 'evt_1' } }],
  ])('tells apart data that is no queued delivery: %s', (_name, data) => {
    expect(isQueuedDelivery(data)).toBe(false);
  });
});

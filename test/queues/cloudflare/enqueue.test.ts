/**
 * enqueue() on a Cloudflare queue producer: one JSON message per delivery,
 * the shared QueuedDelivery with the trace context a subscriber gave; a
 * send that fails or is late rejects, so the receiver answers 503.
 */
import { tracingChannel } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import { WebhookOptionsError } from '../../../src/base/options-error.js';
import { ENQUEUE_CHANNEL, type EnqueueTrace } from '../../../src/process/diagnostics.js';
import { enqueue, type CloudflareEnqueueOptions } from '../../../src/queues/cloudflare/enqueue.js';
import type { QueueProducer, QueueSendOptions } from '../../../src/queues/cloudflare/queue-types.js';
import { isQueuedDelivery, type QueuedDelivery } from '../../../src/queues/queued-delivery.js';
import { deliveryOf } from '../../helpers/signed-request.js';

const delivery = deliveryOf({ id: 'evt_cf', type: 'call.missed' });

/** A producer that records each send and answers with `answer()`. */
function producer(answer: () => Promise<unknown> = async () => undefined) {
  const sent: Array<[QueuedDelivery, QueueSendOptions]> = [];
  const queue: QueueProducer = { send: (body, options) => (sent.push([body, options]), answer()) };
  return { queue, sent };
}

const unsubscribe: Array<() => void> = [];
afterEach(() => {
  for (const stop of unsubscribe.splice(0)) stop();
});

describe('enqueue: the handoff to a Cloudflare queue', () => {
  it('sends the delivery as JSON, one message, and resolves once the send did', async () => {
    const { queue, sent } = producer();
    expect(await enqueue(queue).hand(delivery)).toBeUndefined();
    expect(sent).toEqual([[{ delivery }, { contentType: 'json' }]]);
    expect(isQueuedDelivery(JSON.parse(JSON.stringify(sent[0]![0])))).toBe(true);
  });

  it('carries the trace context a subscriber of the enqueue channel gave, under the cloudflare system and the queue name given', async () => {
    const seen: EnqueueTrace[] = [];
    const channel = tracingChannel(ENQUEUE_CHANNEL);
    const none = (): void => undefined;
    const events = {
      start: (context: unknown) => {
        seen.push(context as EnqueueTrace);
        Object.assign((context as EnqueueTrace).carrier, { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
      },
      end: none,
      asyncStart: none,
      asyncEnd: none,
      error: none,
    };
    channel.subscribe(events);
    unsubscribe.push(() => channel.unsubscribe(events));
    const { queue, sent } = producer();
    await enqueue(queue, { queueName: 'webhooks' }).hand(delivery);
    expect(sent[0]![0]).toEqual({ delivery, trace: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } });
    expect(seen[0]).toMatchObject({ system: 'cloudflare', queue: 'webhooks', outcome: 'queued' });
    expect(seen[0]).not.toHaveProperty('jobId');
  });

  it('rejects with what the send rejected with', async () => {
    const refused = new Error('queue refused');
    await expect(enqueue(producer(async () => Promise.reject(refused)).queue).hand(delivery)).rejects.toBe(refused);
  });

  it('rejects a send that has not resolved within timeoutMs', async () => {
    const { queue } = producer(() => new Promise(() => undefined));
    await expect(enqueue(queue, { timeoutMs: 20 }).hand(delivery)).rejects.toThrow('within 20 ms');
  });

  it.each([
    ['no queue', undefined, {}],
    ['a queue without send', { add: () => undefined }, {}],
    ['options that are no object', { send: async () => undefined }, 'x'],
    ['a queueName that is no string', { send: async () => undefined }, { queueName: 5 }],
    ['a timeoutMs under a millisecond', { send: async () => undefined }, { timeoutMs: 0 }],
  ])('refuses %s', (_what, queue, options) => {
    expect(() => enqueue(queue as unknown as QueueProducer, options as unknown as CloudflareEnqueueOptions)).toThrow(WebhookOptionsError);
  });
});

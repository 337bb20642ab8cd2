/**
 * enqueue() on a Cloudflare queue producer: one JSON message per delivery,
 * the shared QueuedDelivery with the trace context a subscriber gave; a
 * send that fails or is late rejects, so the receiver answers 503.
 */
import { tracingChannel } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import { ENQUEUE_CHANNEL, type EnqueueTrace } from '../../../src/process/diagnostics.js';
import { enqueue, type CloudflareEnqueueOptions } from '../../../src/queues/cloudflare/enqueue.js';
import type { QueueProducer, QueueSendOptions } from '../../../src/queues/cloudflare/queue-types.js';
import { isQueuedDelivery, type QueuedDelivery } from '../../../src/queues/queued-delivery.js';
import { expectOptionMistake } from '../../helpers/option-mistake.js';
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

/** Listens on the enqueue channel until the test ends, putting `carrier` in each trace's carrier at start; answers the traces seen. */
function listenToEnqueues(carrier: Record<string, string> = {}): EnqueueTrace[] {
  const seen: EnqueueTrace[] = [];
  const channel = tracingChannel(ENQUEUE_CHANNEL);
  const none = (): void => undefined;
  const events = {
    start: (context: unknown) => {
      seen.push(context as EnqueueTrace);
      Object.assign((context as EnqueueTrace).carrier, carrier);
    },
    end: none,
    asyncStart: none,
    asyncEnd: none,
    error: none,
  };
  channel.subscribe(events);
  unsubscribe.push(() => channel.unsubscribe(events));
  return seen;
}

describe('enqueue: the handoff to a Cloudflare queue', () => {
  it('sends the delivery as JSON, one message, and resolves once the send did', async () => {
    const { queue, sent } = producer();
    expect(await enqueue(queue).hand(delivery)).toBeUndefined();
    expect(sent).toEqual([[{ delivery }, { contentType: 'json' }]]);
    expect(isQueuedDelivery(JSON.parse(JSON.stringify(sent[0]![0])))).toBe(true);
  });

  it('carries the trace context a subscriber of the enqueue channel gave, under the cloudflare system and the queue name given', async () => {
    const seen = listenToEnqueues({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
    const { queue, sent } = producer();
    await enqueue(queue, { queueName: 'webhooks' }).hand(delivery);
    expect(sent[0]![0]).toEqual({ delivery, trace: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } });
    expect(seen[0]).toMatchObject({ system: 'cloudflare', queue: 'webhooks', outcome: 'queued' });
    expect(seen[0]).not.toHaveProperty('jobId');
  });

  it('names no queue on the enqueue channel when no queueName is given', async () => {
    const seen = listenToEnqueues();
    await enqueue(producer().queue).hand(delivery);
    expect(seen).toMatchObject([{ system: 'cloudflare', queue: '', outcome: 'queued' }]);
  });

  it('rejects with what the send rejected with', async () => {
    const refused = new Error('queue refused');
    await expect(enqueue(producer(async () => Promise.reject(refused)).queue).hand(delivery)).rejects.toBe(refused);
  });

  it('rejects a send that has not resolved within timeoutMs', async () => {
    const { queue } = producer(() => new Promise(() => undefined));
    await expect(enqueue(queue, { timeoutMs: 20 }).hand(delivery)).rejects.toThrow('within 20 ms');
  });

  const NEEDS_A_PRODUCER = 'enqueue needs a Cloudflare queue producer binding (env.QUEUE, with a send method)';
  const send = async (): Promise<void> => undefined;
  it.each([
    ['no queue', undefined, {}, NEEDS_A_PRODUCER],
    ['a null queue', null, {}, NEEDS_A_PRODUCER],
    ['a queue without send', { add: () => undefined }, {}, NEEDS_A_PRODUCER],
    ['options that are no object', { send }, 'x', 'enqueue options must be an object'],
    ['a queueName that is no string', { send }, { queueName: 5 }, 'enqueue options.queueName must be a string'],
    ['a timeoutMs under a millisecond', { send }, { timeoutMs: 0 }, 'timeoutMs must be a whole number of milliseconds from 1 to 2147483647'],
  ])('refuses %s, saying what it needs', (_what, queue, options, message) => {
    expectOptionMistake(() => enqueue(queue as unknown as QueueProducer, options as unknown as CloudflareEnqueueOptions), message);
  });
});

/** A handoff in place of handlers: the delivery handed to a queue under the claim, and what its outcomes answer. */
import { describe, expect, it, vi } from 'vitest';
import type { Handoff } from '../../src/process/handoff.js';
import { handOff } from '../../src/process/handoff.js';
import { createPipeline, type PipelineOptions } from '../../src/receive/pipeline.js';
import type { SingleEndpoint } from '../../src/receive/receiver.js';
import type { WebhookResponse } from '../../src/receive/responses.js';
import { deliveryOf, keyOf, now, SECRET, signedRequest, type SignedRequest } from '../helpers/signed-request.js';
import { decidedAnswers } from '../helpers/decided-answers.js';
import { TestDedupStore } from '../helpers/test-dedup-store.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

describe('handoff', () => {
  const handoffPipelineWith = (options: Partial<PipelineOptions & SingleEndpoint>) =>
    createPipeline<SignedRequest, WebhookResponse>({ secret: SECRET, now, ...options }, decidedAnswers());
  const handoffPipeline = (hand: Handoff['hand'], options: Partial<PipelineOptions & SingleEndpoint> = {}) => handoffPipelineWith({ handoff: { hand }, ...options });

  it('hands the event over under the claim, answers 202 once recorded, and completes the claim', async () => {
    const dedup = new TestDedupStore();
    const handed: unknown[] = [];
    const receive = handoffPipeline(async (delivery) => void handed.push([delivery, dedup.stateOf(keyOf('evt_1'))]), { dedup: { store: dedup } });
    expect(await receive(signedRequest())).toEqual({ status: 202, headers: {}, body: undefined });
    expect(handed).toEqual([[deliveryOf(), 'leased']]);
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');
  });

  it("answers the duplicate's 200 for an event the queue had already", async () => {
    const receive = handoffPipeline(async () => 'duplicate', { dedup: false });
    expect(await receive(signedRequest())).toMatchObject({ status: 200, body: { received: true, duplicate: true } });
  });

  it('answers 503 handoff_failed with Retry-After when the queue failed, releases the claim, and tells onHandlerError', async () => {
    const dedup = new TestDedupStore();
    const heard: unknown[] = [];
    const down = new Error('redis down');
    const receive = handoffPipeline(() => Promise.reject(down), { dedup: { store: dedup }, onHandlerError: (error) => void heard.push(error) });
    const answer = await receive(signedRequest());
    expect(answer).toMatchObject({ status: 503, headers: { 'retry-after': '5' }, body: { error: { code: 'handoff_failed' } } });
    expect((answer as { error?: Error }).error?.cause).toBe(down);
    expect(heard).toEqual([down]);
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('absent');
  });

  const functionWithHand: unknown = Object.assign(() => undefined, { hand: async () => undefined });
  it.each([
    ['a handoff without hand', { handoff: {} }, 'svc-webhooks: handoff must be what enqueue() returns: an object with a hand(delivery) method'],
    ['a handoff that is null', { handoff: null }, 'svc-webhooks: handoff must be what enqueue() returns: an object with a hand(delivery) method'],
    [
      'a handoff that is a function, even one with a hand method',
      { handoff: functionWithHand },
      'svc-webhooks: handoff must be what enqueue() returns: an object with a hand(delivery) method',
    ],
    [
      'a handoff beside on',
      { handoff: { hand: async () => undefined }, on: {} },
      'svc-webhooks: say what runs for each delivery with exactly one of on and handoff; given: on and handoff',
    ],
  ])('refuses %s at creation', (_name, options, message) => {
    expect(() => handoffPipelineWith(options as Partial<PipelineOptions & SingleEndpoint>)).toThrow(new WebhookOptionsError(message));
  });
});

describe('handOff', () => {
  it('answers queued, the duplicate, or a failure whose cause is the queue error, which goes to onHandlerError', async () => {
    const onHandlerError = vi.fn();
    expect(await handOff({ hand: async () => undefined }, deliveryOf(), onHandlerError)).toEqual({ kind: 'queued' });
    expect(await handOff({ hand: async () => 'duplicate' }, deliveryOf(), onHandlerError)).toEqual({ kind: 'duplicate' });
    const down = new Error('redis down');
    const failed = await handOff({ hand: () => Promise.reject(down) }, deliveryOf(), onHandlerError);
    expect(failed).toMatchObject({ kind: 'failed', error: { code: 'handoff_failed', status: 503, message: 'the event could not be queued; retry later', cause: down } });
    expect(onHandlerError).toHaveBeenCalledExactlyOnceWith(down, deliveryOf().event, deliveryOf());
  });

  it('takes a hand that throws at once as one that rejects', async () => {
    const broken = new Error('not connected');
    const failed = await handOff(
      {
        hand: () => {
          throw broken;
        },
      },
      deliveryOf(),
      () => undefined,
    );
    expect(failed).toMatchObject({ kind: 'failed', error: { cause: broken } });
  });
});

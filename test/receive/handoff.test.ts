/** A handoff in place of handlers: the event handed to a queue under the claim, and what its outcomes answer. */
import { describe, expect, it } from 'vitest';
import type { Handoff } from '../../src/receive/handoff.js';
import { createPipeline, type EntryOptions } from '../../src/receive/pipeline.js';
import type { WebhookResponse } from '../../src/receive/responses.js';
import { now, SECRET, signedRequest, type SignedRequest } from '../helpers/signed-request.js';
import { decidedAnswers } from '../helpers/decided-answers.js';
import { TestDedupStore } from '../helpers/test-dedup-store.js';

describe('handoff', () => {
  const handoffPipelineWith = (options: Partial<EntryOptions>) =>
    createPipeline<SignedRequest, WebhookResponse>({ secret: SECRET, now, ...options }, decidedAnswers());
  const handoffPipeline = (hand: Handoff['hand'], options: Partial<EntryOptions> = {}) => handoffPipelineWith({ handoff: { hand }, ...options });

  it('hands the event over under the claim, answers 202 once recorded, and completes the claim', async () => {
    const dedup = new TestDedupStore();
    const handed: unknown[] = [];
    const receive = handoffPipeline(async (event, context) => void handed.push([event.id, context, dedup.stateOf('evt_1')]), { dedup });
    expect(await receive(signedRequest())).toEqual({ status: 202, headers: {}, body: undefined });
    expect(handed).toEqual([['evt_1', { id: 'evt_1', keyId: '0' }, 'leased']]);
    expect(dedup.stateOf('evt_1')).toBe('done');
  });

  it("answers the duplicate's 200 for an event the queue had already", async () => {
    const receive = handoffPipeline(async () => 'duplicate', { dedup: false });
    expect(await receive(signedRequest())).toMatchObject({ status: 200, body: { received: true, duplicate: true } });
  });

  it('answers 503 handoff_failed with Retry-After when the queue failed, releases the claim, and tells onHandlerError', async () => {
    const dedup = new TestDedupStore();
    const heard: unknown[] = [];
    const down = new Error('redis down');
    const receive = handoffPipeline(() => Promise.reject(down), { dedup, onHandlerError: (error) => void heard.push(error) });
    const answer = await receive(signedRequest());
    expect(answer).toMatchObject({ status: 503, headers: { 'retry-after': '5' }, body: { error: { code: 'handoff_failed' } } });
    expect((answer as { error?: Error }).error?.cause).toBe(down);
    expect(heard).toEqual([down]);
    expect(dedup.stateOf('evt_1')).toBe('absent');
  });

  it.each([
    ['a handoff without hand', { handoff: {} }, 'svc-webhooks: handoff must be what enqueue() returns: an object with a hand(event, context) method'],
    ['a handoff beside on', { handoff: { hand: async () => undefined }, on: {} }, 'svc-webhooks: handoff takes the place of on and of a handler: give only one of them'],
  ])('refuses %s at creation', (_name, options, message) => {
    expect(() => handoffPipelineWith(options as Partial<EntryOptions>)).toThrow(new TypeError(message));
  });
});

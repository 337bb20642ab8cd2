/** answerUnderClaim with the handlers of on: what the middleware adapters run, through createHandlingReceiver, for a delivery the receiver let through. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { EventSchemas, HandlerOptions, ReceiverOptions } from '../../src/index.js';
import { SETTLE_WAIT_MS } from '../../src/receive/answer-under-claim.js';
import { createHandlingReceiver } from '../../src/receive/handling-receiver.js';
import type { WebhookResponse } from '../../src/receive/receiver.js';
import { now, SECRET, signedRequest, type RequestSpec } from '../helpers/signed-request.js';
import { TestDedupStore } from '../helpers/test-dedup-store.js';

/** A receiver with handlers, as an adapter builds it: one call per delivery, answering what it returns. */
function handlingReceiver<S extends EventSchemas>(options: Partial<ReceiverOptions> & HandlerOptions<S>) {
  const receiver = createHandlingReceiver({ secret: SECRET, now, ...options });
  return async (spec: RequestSpec = {}): Promise<WebhookResponse> => {
    const request = signedRequest(spec);
    const reception = await receiver.receive(request.body, request.headers);
    if (reception.action !== 'respond') throw new Error('with on, every delivery is answered');
    return reception.response;
  };
}

const quiet = { onHandlerError: () => {} };

describe('answerUnderClaim with on', () => {
  it('runs the handler under the claim, then completes it: a retry meanwhile gets 409, one after gets the duplicate 200', async () => {
    const dedup = new TestDedupStore();
    const during: unknown[] = [];
    const deliver = handlingReceiver({
      dedup,
      on: {
        'call.missed': async () => {
          during.push(dedup.stateOf('evt_1'), await deliver());
        },
      },
    });
    expect(await deliver()).toEqual({ status: 204, headers: {}, body: undefined });
    expect(during).toMatchObject(['leased', { status: 409, body: { error: { code: 'delivery_in_progress' } } }]);
    expect(dedup.stateOf('evt_1')).toBe('done');
    expect(await deliver()).toMatchObject({ status: 200, body: { received: true, duplicate: true } });
    expect(during).toHaveLength(2);
  });

  it('releases the claim when the handler throws, so the retry runs it again', async () => {
    const dedup = new TestDedupStore();
    const handler = vi.fn().mockRejectedValueOnce(new Error('db down')).mockResolvedValueOnce(undefined);
    const deliver = handlingReceiver({ dedup, on: { 'call.missed': handler }, ...quiet });
    expect(await deliver()).toMatchObject({ status: 500, body: { error: { code: 'handler_failed' } } });
    expect(dedup.stateOf('evt_1')).toBe('absent');
    expect(await deliver()).toMatchObject({ status: 204 });
    expect(handler).toHaveBeenCalledTimes(2);
    expect(dedup.stateOf('evt_1')).toBe('done');
  });

  it('releases the claim on a schema failure, so a fixed schema deployed before the retries end loses nothing', async () => {
    const dedup = new TestDedupStore();
    const handled: unknown[] = [];
    const on = { 'call.missed': (event: { data: { object: { id: string } } }) => void handled.push(event.data.object.id) };
    const tooStrict = z.object({ data: z.object({ object: z.object({ id: z.string().startsWith('call_') }) }) });
    const fixed = z.object({ data: z.object({ object: z.object({ id: z.string() }) }) });
    const before = handlingReceiver({ dedup, on, schemas: { 'call.missed': tooStrict }, ...quiet });
    expect(await before()).toMatchObject({ status: 422, body: { error: { code: 'invalid_event_data', paths: ['$.data.object.id'] } } });
    expect(dedup.stateOf('evt_1')).toBe('absent');
    const after = handlingReceiver({ dedup, on, schemas: { 'call.missed': fixed } });
    expect(await after()).toMatchObject({ status: 204 });
    expect(handled).toEqual(['obj_evt_1']);
  });

  it("completes unknown types under 'accept', releases them under 'reject'", async () => {
    const dedup = new TestDedupStore();
    const accept = handlingReceiver({ dedup, on: {} });
    expect(await accept({ id: 'evt_a', type: 'call.answered' })).toMatchObject({ status: 204 });
    expect(dedup.stateOf('evt_a')).toBe('done');
    const reject = handlingReceiver({ dedup, on: {}, onUnknown: 'reject' });
    expect(await reject({ id: 'evt_r', type: 'call.answered' })).toMatchObject({ status: 422, body: { error: { code: 'unknown_event_type' } } });
    expect(dedup.stateOf('evt_r')).toBe('absent');
  });

  it('answers with dedup turned off: every delivery runs the handler', async () => {
    const handler = vi.fn();
    const deliver = handlingReceiver({ dedup: false, on: { 'call.missed': handler } });
    expect(await deliver()).toMatchObject({ status: 204 });
    expect(await deliver()).toMatchObject({ status: 204 });
    expect(handler).toHaveBeenCalledTimes(2);
  });

  it("keeps the handler's answer when the store then fails and onStoreError throws", async () => {
    const dedup = new TestDedupStore();
    const deliver = handlingReceiver({
      dedup,
      on: {
        'call.missed': () => {
          dedup.failing = true;
        },
      },
      onStoreError: () => {
        throw new Error('reporter down');
      },
    });
    expect(await deliver()).toMatchObject({ status: 204 });
  });
});

describe('answerUnderClaim with on and a slow store', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A store whose complete() takes `ms`, and the time its delivery's answer took, once answered. */
  function slowStore(ms: number) {
    const dedup = new TestDedupStore();
    const complete = dedup.complete.bind(dedup);
    dedup.complete = async (id, token) => {
      await sleep(ms);
      return complete(id, token);
    };
    let answeredAfter: number | undefined;
    const started = Date.now();
    const answer = handlingReceiver({ dedup, on: { 'call.missed': () => {} } })().then((response) => {
      answeredAfter = Date.now() - started;
      return response;
    });
    return { dedup, answer, answeredAfter: () => answeredAfter };
  }

  it('answers once the store has recorded the outcome, so a retry then finds it done', async () => {
    const { dedup, answer, answeredAfter } = slowStore(100);
    await vi.advanceTimersByTimeAsync(99);
    expect(answeredAfter()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(await answer).toMatchObject({ status: 204 });
    expect(answeredAfter()).toBe(100);
    expect(dedup.stateOf('evt_1')).toBe('done');
  });

  it('answers after SETTLE_WAIT_MS when the store takes longer (a failing one retrying), and the store still records it', async () => {
    const { dedup, answer, answeredAfter } = slowStore(60_000);
    await vi.advanceTimersByTimeAsync(SETTLE_WAIT_MS - 1);
    expect(answeredAfter()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(await answer).toMatchObject({ status: 204 });
    expect(answeredAfter()).toBe(SETTLE_WAIT_MS);
    expect(dedup.stateOf('evt_1')).toBe('leased');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(dedup.stateOf('evt_1')).toBe('done');
  });
});

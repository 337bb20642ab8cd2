/**
 * createAnsweringEntry with an answer shape of our own: its checks at
 * creation, and what becomes of a handler or an onError that answers
 * something that is no answer.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryDedupStore, type WebhookVerificationError } from '../../src/index.js';
import { tooLarge } from '../../src/core/payload.js';
import { createAnsweringEntry, type AnsweringOptions, type SingleHandler } from '../../src/receive/answering-entry.js';
import { now, OLD_SECRET, SECRET, signedRequest } from '../helpers/signed-request.js';

class Answer {
  constructor(
    readonly status: number,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}
}

const shape = { isAnswer: (value: unknown): value is Answer => value instanceof Answer, described: 'an Answer', statusOf: (answer: Answer) => answer.status };

function entry(options: Partial<AnsweringOptions>, handler?: SingleHandler<{ id: string }>) {
  return createAnsweringEntry<Answer, { id: string }>({ secret: SECRET, now, dedup: false, ...options }, handler, shape);
}

/** Answers one signed request (`spec`, or `body` in its place), with `onError` as the entry's user gave it. */
function answer(created: ReturnType<typeof entry>, onError?: (error: WebhookVerificationError) => unknown, spec = {}, body?: Promise<string>) {
  const signed = signedRequest(spec);
  const { headers } = signed;
  return created.answer({
    body: body ?? signed.body,
    headers,
    contextOf: ({ id }) => ({ id }),
    onError,
    withHeaders: (given, extra) => new Answer(given.status, { ...extra, ...given.headers }),
  });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('createAnsweringEntry', () => {
  it('refuses a handler that is no function', () => {
    expect(() => entry({}, 'handler' as never)).toThrow(new TypeError('svc-webhooks: the handler must be a function'));
  });

  it.each([
    ['neither on nor a handler', {}, undefined],
    ['both on and a handler', { on: {} }, () => undefined],
  ])('refuses %s', (_name, options, handler) => {
    expect(() => entry(options, handler)).toThrow(
      new TypeError('svc-webhooks: verifyWebhook needs either on in its options or a handler function, not both'),
    );
  });

  it('lets onHandlerError serve the single handler', async () => {
    const heard: unknown[] = [];
    const created = entry({ onHandlerError: (error) => void heard.push(error) }, () => {
      throw new Error('boom');
    });
    expect(await answer(created)).toMatchObject({ response: { status: 500 } });
    expect(heard).toEqual([new Error('boom')]);
  });

  it('answers 500 for a handler that returns no answer, telling onHandlerError what it should return', async () => {
    const heard: unknown[] = [];
    const created = entry({ onHandlerError: (error) => void heard.push(error) }, () => 42);
    expect(await answer(created)).toMatchObject({ response: { status: 500, body: { error: { code: 'handler_failed' } } } });
    expect(heard).toEqual([new TypeError('svc-webhooks: the webhook handler must return an Answer or nothing')]);
  });

  it("passes on the handler's own answer", async () => {
    const created = entry({}, (_event, { id }) => new Answer(id === 'evt_1' ? 202 : 500));
    expect(await answer(created)).toEqual({ answer: new Answer(202) });
  });

  it("gives a refusal the default answer when onError answers no answer, and logs why", async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const created = entry({}, () => undefined);
    const result = await answer(created, () => 'no answer', { secret: OLD_SECRET });
    expect(result).toMatchObject({ response: { status: 400, body: { error: { code: 'invalid_signature' } } } });
    expect(log.mock.calls).toEqual([
      ['svc-webhooks: onError failed (it answered no an Answer); a request it left unanswered gets the default answer'],
    ]);
  });

  it("answers a refusal with onError's answer, adding the refusal's headers it lacks", async () => {
    const created = entry({}, () => undefined);
    const result = await answer(created, (error) => new Answer(error.status, { 'x-own': 'yes' }), { timestamp: 1 });
    expect(result).toEqual({ answer: new Answer(400, { 'x-own': 'yes' }) });
  });

  it('answers 204 with no body for a handler that returns nothing, and leaves onError out of it', async () => {
    const onError = vi.fn();
    const created = entry({}, () => undefined);
    expect(await answer(created, onError)).toEqual({ response: { status: 204, headers: {}, body: undefined } });
    expect(onError).not.toHaveBeenCalled();
  });

  it('tells onHandlerError the id of the delivery whose handler failed', async () => {
    const contexts: unknown[] = [];
    const created = entry({ onHandlerError: (_error, _event, context) => void contexts.push(context) }, () => Promise.reject(new Error('boom')));
    await answer(created);
    expect(contexts).toEqual([{ id: 'evt_1' }]);
  });

  it('gives a refusal the default answer and logs nothing when there is no onError', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const created = entry({}, () => undefined);
    expect(await answer(created, undefined, { timestamp: 1 })).toMatchObject({ response: { status: 400 } });
    expect(log).not.toHaveBeenCalled();
  });

  it('answers a refusal the body reading ended in, and passes on anything else it rejects with', async () => {
    const created = entry({}, () => undefined);
    expect(await answer(created, undefined, {}, Promise.reject(tooLarge(10)))).toMatchObject({
      response: { status: 413, body: { error: { code: 'payload_too_large' } } },
    });
    await expect(answer(created, undefined, {}, Promise.reject(new Error('socket gone')))).rejects.toThrow('socket gone');
  });

  it.each([
    ['completes', 200, { response: { status: 200, body: { received: true, duplicate: true } } }],
    ['releases', 503, { answer: new Answer(503) }],
  ])("%s the claim by the status of the handler's answer", async (_settles, status, retried) => {
    const store = new MemoryDedupStore();
    const created = entry({ dedup: store }, () => new Answer(status));
    expect(await answer(created)).toEqual({ answer: new Answer(status) });
    expect(await answer(created)).toMatchObject(retried);
    store.close();
  });
});

/** The answers svc-webhooks decides: 204 with no body, 202 for a queued delivery, 200 for a duplicate, or a refusal whose body has paths only for a schema failure. */
import { describe, expect, it } from 'vitest';
import { WebhookDedupError, WebhookHandlerError } from '../../src/index.js';
import { accepted, duplicate, handlersAnswer, handoffAnswer, refused } from '../../src/receive/responses.js';

describe('responses', () => {
  it('accepts with 204 and no body', () => {
    expect(accepted()).toStrictEqual({ status: 204, headers: {}, body: undefined });
  });

  it('refuses with the code and message, and no paths key at all when there are none', () => {
    const error = new WebhookHandlerError('handler_failed', 'the handler failed');
    const result = refused(error);
    expect(result).toStrictEqual({ status: 500, headers: {}, body: { error: { code: 'handler_failed', message: 'the handler failed' } }, error });
    expect(Object.keys(result.body!.error)).toEqual(['code', 'message']);
  });

  it('answers a duplicate with 200 and a body that says so', () => {
    expect(duplicate()).toStrictEqual({ status: 200, headers: {}, body: { received: true, duplicate: true } });
  });

  it('carries the headers given, and re-throws anything that is no refusal', () => {
    const error = new WebhookDedupError('dedup_unavailable', 'the store is down');
    expect(refused(error, { 'retry-after': '5' }).headers).toStrictEqual({ 'retry-after': '5' });
    const bug = new RangeError('a bug');
    expect(() => refused(bug)).toThrow(bug);
  });

  it('adds the paths of a schema failure', () => {
    const error = new WebhookHandlerError('invalid_event_data', 'the event failed the schema');
    expect(refused(error, {}, ['$.data.id']).body).toStrictEqual({
      error: { code: 'invalid_event_data', message: 'the event failed the schema', paths: ['$.data.id'] },
    });
  });

  it("answers what the handlers made of an event: 204 handled or taken, else the refusal with its paths", () => {
    expect(handlersAnswer({ kind: 'handled' })).toStrictEqual(accepted());
    expect(handlersAnswer({ kind: 'unhandled' })).toStrictEqual(accepted());
    const error = new WebhookHandlerError('invalid_event_data', 'the event failed the schema');
    expect(handlersAnswer({ kind: 'failed', error, paths: ['$.id'] })).toStrictEqual(refused(error, {}, ['$.id']));
    const failed = new WebhookHandlerError('handler_failed', 'failed');
    expect(handlersAnswer({ kind: 'failed', error: failed })).toStrictEqual(refused(failed));
  });

  it('answers a handoff 202 once queued without a body, the duplicate, or 503 with Retry-After: 5', () => {
    expect(handoffAnswer({ kind: 'queued' })).toStrictEqual({ status: 202, headers: {}, body: undefined });
    expect(handoffAnswer({ kind: 'duplicate' })).toStrictEqual(duplicate());
    const error = new WebhookHandlerError('handoff_failed', 'the event could not be queued; retry later');
    expect(handoffAnswer({ kind: 'failed', error })).toStrictEqual(refused(error, { 'retry-after': '5' }));
  });

  it('gives out answers no caller can change', () => {
    for (const answer of [accepted(), duplicate(), handoffAnswer({ kind: 'queued' })]) {
      expect(Object.isFrozen(answer)).toBe(true);
      expect(Object.isFrozen(answer.headers)).toBe(true);
    }
  });
});

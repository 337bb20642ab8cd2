/** The answers svc-webhooks decides: 204 with no body, 200 for a duplicate, or a refusal whose body has paths only for a schema failure. */
import { describe, expect, it } from 'vitest';
import { WebhookVerificationError } from '../../src/index.js';
import { accepted, duplicate, refused } from '../../src/receive/responses.js';

describe('responses', () => {
  it('accepts with 204 and no body', () => {
    expect(accepted()).toStrictEqual({ status: 204, headers: {}, body: undefined });
  });

  it('refuses with the code and message, and no paths key at all when there are none', () => {
    const error = new WebhookVerificationError('handler_failed', 'the handler failed');
    const result = refused(error);
    expect(result).toStrictEqual({ status: 500, headers: {}, body: { error: { code: 'handler_failed', message: 'the handler failed' } }, error });
    expect(Object.keys(result.body!.error)).toEqual(['code', 'message']);
  });

  it('answers a duplicate with 200 and a body that says so', () => {
    expect(duplicate()).toStrictEqual({ status: 200, headers: {}, body: { received: true, duplicate: true } });
  });

  it('carries the headers given, and re-throws anything that is no refusal', () => {
    const error = new WebhookVerificationError('dedup_unavailable', 'the store is down');
    expect(refused(error, { 'retry-after': '5' }).headers).toStrictEqual({ 'retry-after': '5' });
    const bug = new RangeError('a bug');
    expect(() => refused(bug)).toThrow(bug);
  });

  it('adds the paths of a schema failure', () => {
    const error = new WebhookVerificationError('invalid_event_data', 'the event failed the schema');
    expect(refused(error, {}, ['$.data.id']).body).toStrictEqual({
      error: { code: 'invalid_event_data', message: 'the event failed the schema', paths: ['$.data.id'] },
    });
  });
});

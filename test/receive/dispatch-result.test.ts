/** The answers dispatch decides: 204 with no body, or a refusal whose body has paths only for a schema failure. */
import { describe, expect, it } from 'vitest';
import { WebhookVerificationError } from '../../src/index.js';
import { accepted, refused } from '../../src/receive/dispatch-result.js';

describe('dispatch results', () => {
  it('accepts with 204 and no body', () => {
    expect(accepted()).toStrictEqual({ status: 204, headers: {}, body: undefined });
  });

  it('refuses with the code and message, and no paths key at all when there are none', () => {
    const error = new WebhookVerificationError('handler_failed', 'the handler failed');
    const result = refused(error);
    expect(result).toStrictEqual({ status: 500, headers: {}, body: { error: { code: 'handler_failed', message: 'the handler failed' } }, error });
    expect(Object.keys(result.body!.error)).toEqual(['code', 'message']);
  });

  it('adds the paths of a schema failure', () => {
    const error = new WebhookVerificationError('invalid_event_data', 'the event failed the schema');
    expect(refused(error, ['$.data.id']).body).toStrictEqual({
      error: { code: 'invalid_event_data', message: 'the event failed the schema', paths: ['$.data.id'] },
    });
  });
});

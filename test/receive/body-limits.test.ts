/** The refusals a body read ends in, and which of them close the connection. */
import { describe, expect, it } from 'vitest';
import { WebhookVerificationError } from '../../src/index.js';
import { bodyRefusal, bodyTimeout, SenderGoneError } from '../../src/receive/body-limits.js';
import { tooLarge } from '../../src/core/payload.js';

describe('bodyTimeout', () => {
  it('is a 408 body_timeout naming the deadline', () => {
    const error = bodyTimeout(2_500);
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect(error).toMatchObject({ code: 'body_timeout', status: 408, message: 'the body did not arrive within 2500 ms' });
  });
});

describe('bodyRefusal', () => {
  it.each([
    ['a body past the limit', tooLarge(1024), 413],
    ['a body that stalled', bodyTimeout(100), 408],
  ])('answers %s and closes the connection, since part of the body is unread', (_name, error, status) => {
    expect(bodyRefusal(error)).toEqual({
      status,
      headers: { connection: 'close' },
      body: { error: { code: error.code, message: error.message } },
    });
  });

  it('leaves the connection open for a refusal that read nothing more', () => {
    const error = new WebhookVerificationError('body_already_parsed', 'a parser read it');
    expect(bodyRefusal(error)).toEqual({
      status: 500,
      headers: {},
      body: { error: { code: 'body_already_parsed', message: 'a parser read it' } },
    });
  });
});

describe('SenderGoneError', () => {
  it('is an Error that says the connection closed mid-body', () => {
    const error = new SenderGoneError();
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('SenderGoneError');
    expect(error.message).toBe('svc-webhooks: the connection closed before the body ended');
  });
});

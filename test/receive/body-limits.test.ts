/** The checks and refusals of a body read: a declared length past the limit, and which refusals close the connection. */
import { describe, expect, it } from 'vitest';
import { WebhookBodyError } from '../../src/index.js';
import { bodyRefusal, bodyTimeout, checkDeclaredLength, SenderGoneError } from '../../src/receive/body-limits.js';
import { tooLarge } from '../../src/core/payload.js';

describe('checkDeclaredLength', () => {
  it('passes a length up to the limit, or none', () => {
    for (const length of [undefined, null, '', '0', '9', '10', ' 10 ', 'abc']) {
      expect(() => checkDeclaredLength(length, 10)).not.toThrow();
    }
  });

  it('refuses a length past the limit with payload_too_large', () => {
    for (const length of ['11', '1e3', '0x10', '99999999999999999999']) {
      expect(() => checkDeclaredLength(length, 10)).toThrow(
        expect.objectContaining({ code: 'payload_too_large', status: 413, message: 'the body is larger than 10 bytes' }),
      );
    }
  });
});

describe('bodyTimeout', () => {
  it('is a 408 body_timeout naming the deadline', () => {
    const error = bodyTimeout(2_500);
    expect(error).toBeInstanceOf(WebhookBodyError);
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
      error,
    });
  });

  it('leaves the connection open for a refusal that read nothing more', () => {
    const error = new WebhookBodyError('body_already_parsed', 'a parser read it');
    expect(bodyRefusal(error)).toEqual({
      status: 500,
      headers: {},
      body: { error: { code: 'body_already_parsed', message: 'a parser read it' } },
      error,
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

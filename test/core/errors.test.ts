/** The errors: one table of codes, a class per family, each code in one class, and instanceof across copies of the package. */
import { describe, expect, it } from 'vitest';
import {
  ERROR_CODES,
  WebhookBodyError,
  WebhookDedupError,
  WebhookError,
  WebhookHandlerError,
  WebhookTenantError,
  WebhookVerificationError,
  type WebhookErrorCode,
} from '../../src/index.js';

const CLASSES = { WebhookVerificationError, WebhookTenantError, WebhookBodyError, WebhookDedupError, WebhookHandlerError } as const;

/** An error of `code`, made by the class the table names for it. */
function errorOf(code: WebhookErrorCode, options?: { readonly cause?: unknown }): WebhookError {
  const Class = CLASSES[ERROR_CODES[code].errorClass] as unknown as new (code: WebhookErrorCode, message: string, options?: { readonly cause?: unknown }) => WebhookError;
  return new Class(code, `the message of ${code}`, options);
}

describe('ERROR_CODES', () => {
  it('gives every code its status, its class and a sentence for when it happens', () => {
    expect(Object.keys(ERROR_CODES)).toEqual([
      'missing_header',
      'invalid_timestamp',
      'timestamp_too_old',
      'timestamp_too_new',
      'invalid_signature',
      'invalid_payload',
      'unknown_tenant',
      'secret_unavailable',
      'payload_too_large',
      'body_timeout',
      'body_already_parsed',
      'body_decoded',
      'not_http_request',
      'delivery_in_progress',
      'dedup_unavailable',
      'invalid_event_order',
      'handler_failed',
      'invalid_event_data',
      'unknown_event_type',
      'handoff_failed',
    ]);
    const byClass = (name: string) => Object.entries(ERROR_CODES).filter(([, info]) => info.errorClass === name).map(([code, info]) => [code, info.status]);
    expect(byClass('WebhookVerificationError')).toEqual([
      ['missing_header', 400],
      ['invalid_timestamp', 400],
      ['timestamp_too_old', 400],
      ['timestamp_too_new', 400],
      ['invalid_signature', 400],
      ['invalid_payload', 400],
    ]);
    expect(byClass('WebhookTenantError')).toEqual([
      ['unknown_tenant', 404],
      ['secret_unavailable', 503],
    ]);
    expect(byClass('WebhookBodyError')).toEqual([
      ['payload_too_large', 413],
      ['body_timeout', 408],
      ['body_already_parsed', 500],
      ['body_decoded', 400],
      ['not_http_request', 500],
    ]);
    expect(byClass('WebhookDedupError')).toEqual([
      ['delivery_in_progress', 409],
      ['dedup_unavailable', 503],
      ['invalid_event_order', 422],
    ]);
    expect(byClass('WebhookHandlerError')).toEqual([
      ['handler_failed', 500],
      ['invalid_event_data', 422],
      ['unknown_event_type', 422],
      ['handoff_failed', 503],
    ]);
    for (const info of Object.values(ERROR_CODES)) expect(info.when).toMatch(/^\S.*\.$/);
  });
});

describe.each(Object.keys(ERROR_CODES) as WebhookErrorCode[])('an error of %s', (code) => {
  const cause = new Error('underneath');
  const error = errorOf(code, { cause });
  const { status, errorClass } = ERROR_CODES[code];

  it("carries its code, its table's status, its class's name and the cause given", () => {
    expect([error.code, error.status, error.name, error.cause, error.message]).toEqual([code, status, errorClass, cause, `the message of ${code}`]);
  });

  it('is a WebhookError and an Error, and an instance of its own class alone', () => {
    expect(error).toBeInstanceOf(WebhookError);
    expect(error).toBeInstanceOf(Error);
    for (const [name, Class] of Object.entries(CLASSES)) expect(error instanceof Class).toBe(name === errorClass);
  });
});

describe('instanceof across copies of the package', () => {
  // Another copy's error: another class, carrying the mark every copy sets, with its class name.
  const ofAnotherCopy = (className: string) => Object.defineProperty(new Error('x'), Symbol.for('svc-webhooks.WebhookError'), { value: className });

  it("knows another copy's error by its mark: as a WebhookError, and as its own class alone", () => {
    const other = ofAnotherCopy('WebhookDedupError');
    expect(other instanceof WebhookError).toBe(true);
    expect(other instanceof WebhookDedupError).toBe(true);
    expect(other instanceof WebhookVerificationError).toBe(false);
  });

  it('knows nothing else as one', () => {
    for (const other of [new Error('x'), { code: 'invalid_signature', status: 400 }, null, undefined, 'invalid_signature', 42, ofAnotherCopy(42 as never)]) {
      expect(other instanceof WebhookError).toBe(false);
      expect(other instanceof WebhookVerificationError).toBe(false);
    }
  });
});

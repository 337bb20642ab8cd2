import { describe, expect, it } from 'vitest';
import { WebhookOptionsError } from '../../src/base/options-error.js';

describe('WebhookOptionsError', () => {
  it("is a TypeError with the code invalid_option, its class's name and the message given", () => {
    const error = new WebhookOptionsError('svc-webhooks: leaseMs must be a whole number of milliseconds from 1 to 2147483647');
    expect(error).toBeInstanceOf(TypeError);
    expect(error).toBeInstanceOf(Error);
    expect([error.name, error.code, error.message]).toEqual([
      'WebhookOptionsError',
      'invalid_option',
      'svc-webhooks: leaseMs must be a whole number of milliseconds from 1 to 2147483647',
    ]);
    expect(String(error)).toBe('WebhookOptionsError: svc-webhooks: leaseMs must be a whole number of milliseconds from 1 to 2147483647');
  });

  it("knows another copy's error by its mark, and nothing else as one", () => {
    const ofAnotherCopy = Object.defineProperty(new TypeError('x'), Symbol.for('svc-webhooks.WebhookOptionsError'), { value: true });
    expect(ofAnotherCopy instanceof WebhookOptionsError).toBe(true);
    const marked = (value: unknown) => Object.defineProperty(new TypeError('x'), Symbol.for('svc-webhooks.WebhookOptionsError'), { value });
    for (const other of [new TypeError('svc-webhooks: x'), { code: 'invalid_option' }, null, undefined, 'invalid_option', marked('true'), marked(1)]) {
      expect(other instanceof WebhookOptionsError).toBe(false);
    }
  });
});

/** What an option mistake throws, as every entry and module of the package throws it. */
import { expect } from 'vitest';

/** Expects `create` to throw the option mistake of `message` (less its `svc-webhooks: `): a `WebhookOptionsError`, a `TypeError` of code `invalid_option`. */
export function expectOptionMistake(create: () => unknown, message: string): void {
  let thrown: unknown;
  try {
    create();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(TypeError);
  expect(thrown).toMatchObject({ name: 'WebhookOptionsError', code: 'invalid_option', message: `svc-webhooks: ${message}` });
}

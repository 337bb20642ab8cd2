/** What a verification did, as one comparable value. */
import { WebhookVerificationError, type WebhookErrorCode } from '../../src/index.js';

/** `'ok'` if `run` returned, else the code of the `WebhookVerificationError` it threw; any other error is re-thrown. */
export function codeOf(run: () => unknown): WebhookErrorCode | 'ok' {
  try {
    run();
    return 'ok';
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.code;
    throw error;
  }
}

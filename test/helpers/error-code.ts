/** What a verification did, as one comparable value. */
import { WebhookError, type WebhookErrorCode } from '../../src/index.js';

/** `'ok'` if `run` returned, else the code of the `WebhookError` it threw (a verification's, or `payload_too_large`); any other error is re-thrown. */
export function codeOf(run: () => unknown): WebhookErrorCode | 'ok' {
  try {
    run();
    return 'ok';
  } catch (error) {
    if (error instanceof WebhookError) return error.code;
    throw error;
  }
}

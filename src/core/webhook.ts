/** `Webhook`: a verifier of one endpoint whose secret is decoded once. */
import type { WebhookEvent } from './event.js';
import type { WebhookHeaders } from './headers.js';
import { resolveVerifyOptions, type ResolvedVerifyOptions, type VerifyOptions } from './options.js';
import type { WebhookPayload } from './payload.js';
import { decodeSecrets, type DecodedKey, type WebhookSecret } from './secret.js';
import { signWithKeys, type SignOptions, type WebhookSignatureHeaders } from './sign.js';
import type { WebhookDelivery } from './delivery.js';
import { verifyWithKeys } from './verify-delivery.js';

/**
 * A verifier bound to its secrets and options, both checked and decoded once
 * here: the fast path for a server. Throws `WebhookOptionsError` for a malformed secret
 * or options.
 */
export class Webhook {
  readonly #keys: readonly DecodedKey[];
  readonly #options: ResolvedVerifyOptions;

  constructor(secret: WebhookSecret, options?: VerifyOptions) {
    this.#keys = decodeSecrets(secret);
    this.#options = resolveVerifyOptions(options);
  }

  /** Verifies a request; returns its id, timestamp and event. */
  verifyDelivery(payload: WebhookPayload, headers: WebhookHeaders): WebhookDelivery {
    return verifyWithKeys(payload, headers, this.#keys, this.#options);
  }

  /** Verifies a request; returns its event. */
  verify(payload: WebhookPayload, headers: WebhookHeaders): WebhookEvent {
    return verifyWithKeys(payload, headers, this.#keys, this.#options).event;
  }

  /** Signs a payload with every secret of this verifier. */
  sign(payload: WebhookPayload, options: SignOptions): WebhookSignatureHeaders {
    return signWithKeys(payload, options, this.#keys);
  }
}

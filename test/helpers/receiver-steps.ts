/** A delivery through a receiver's own steps, as the pipeline takes them: verify, then claim. */
import type { WebhookHeaders } from '../../src/core/headers.js';
import type { WebhookPayload } from '../../src/core/payload.js';
import type { WebhookDelivery } from '../../src/core/delivery.js';
import type { Settle } from '../../src/process/claim.js';
import type { Receiver } from '../../src/receive/receiver.js';
import type { DecidedResponse } from '../../src/receive/responses.js';

/** What the receiver leaves the pipeline to do: run the user's code (settling the claim after, if one is held), or answer. */
export type Reception =
  | { readonly action: 'process'; readonly delivery: WebhookDelivery; readonly settle?: Settle }
  | { readonly action: 'respond'; readonly response: DecidedResponse };

/** Verifies, then claims: a refusal of `verify` or an answer of `claim` is `respond`, a delivery to run is `process`. */
export async function verifyAndClaim(receiver: Receiver, payload: WebhookPayload, headers: WebhookHeaders): Promise<Reception> {
  const delivery = await receiver.verify(payload, headers, () => undefined);
  if (!('event' in delivery)) return { action: 'respond', response: delivery };
  const claim = await receiver.claim(delivery);
  if (typeof claim === 'object') return 'stale' in claim ? { action: 'process', delivery: { ...delivery, stale: true }, settle: claim.settle } : { action: 'respond', response: claim };
  return claim === undefined ? { action: 'process', delivery } : { action: 'process', delivery, settle: claim };
}

/** A delivery claimed, settled and retried through a receiver on a store that answers at once, with no promise to wait for. */
import { expect } from 'vitest';
import type { WebhookDelivery } from '../../src/core/delivery.js';
import type { Settle } from '../../src/process/claim.js';
import { createReceiver } from '../../src/receive/receiver.js';
import type { OrderingOptions } from '../../src/core/event-order.js';
import type { DedupStore } from '../../src/stores/dedup-store.js';
import { now, SECRET, signedRequest } from './signed-request.js';

/**
 * Verifies evt_1 on a receiver over `store`, then checks that its claim and
 * its completion answer at once, and that a retry is answered at once as a
 * duplicate; answers the delivery. With `ordering`, the claim and its
 * completion are the ordered ones.
 */
export async function claimedAtOnce(store: DedupStore, ordering?: OrderingOptions): Promise<WebhookDelivery> {
  const receiver = createReceiver({ secret: SECRET, now, dedup: { store }, ...(ordering === undefined ? {} : { ordering }) });
  const { body, headers } = signedRequest();
  const delivery = await receiver.verify(body, headers, () => undefined);
  if (!('event' in delivery)) throw new Error('expected a verified delivery');
  const settle = receiver.claim(delivery);
  expect(typeof settle).toBe('function');
  expect((settle as Settle)(true)).toBeUndefined();
  const retry = receiver.claim(delivery);
  expect(retry).toMatchObject({ status: 200 });
  expect(retry).not.toHaveProperty('then');
  return delivery;
}

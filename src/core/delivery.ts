/**
 * What a verified delivery is, in one shape: the route of every entry, the
 * handlers of `on`, the Fetch and Lambda handlers, a queue's job and the
 * diagnostics channels all hand on this object.
 */
import type { WebhookEvent } from './event.js';

/** A delivery whose signature, timestamp and envelope were all checked. */
export interface WebhookDelivery<E extends WebhookEvent = WebhookEvent> {
  /** The parsed envelope, as verified (before any schema); `event.id === id`. */
  readonly event: E;
  /** The `webhook-id` header: the same on every retry of the event. */
  readonly id: string;
  /** The `webhook-timestamp` header: when this attempt was signed, in seconds since the Unix epoch. */
  readonly timestamp: number;
  /** Which secret verified it: the `id` of a keyed secret, else its position in the list (`'0'` for a lone one). */
  readonly keyId: string;
  /**
   * The tenant the request named, where the receiver serves many (its
   * `tenants` option); absent otherwise. The signature proves only the secret:
   * two names that resolve to one secret are one endpoint, and a delivery to
   * it runs once, under the name that came first.
   */
  readonly tenant?: string;
  /**
   * The key the delivery is deduplicated on: the id scoped by the secret that
   * verified it (`<16 characters>:<id>`). A replay to another path or tenant
   * name with the same secret has the same key; the same id signed for
   * another endpoint, another. Record it with `markProcessed` in a side
   * effect's own transaction.
   */
  readonly dedupKey: string;
  /**
   * `true` when the entry or worker orders events (its `ordering` option,
   * with `staleEvents: 'run'`) and a higher version of this event's object
   * was processed already: apply it only where an older state may not
   * overwrite a newer one. Absent otherwise.
   */
  readonly stale?: boolean;
}

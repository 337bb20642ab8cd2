/**
 * svc-webhooks: verify, sign and parse the webhooks of the Messaging and
 * Calling Service (Standard Webhooks: HMAC-SHA256 over `id.timestamp.body`).
 * Runtime dependencies: `node:crypto` and `node:buffer` only.
 */
export { ERROR_STATUS, WebhookVerificationError, type WebhookErrorCode } from './errors.js';
export {
  KNOWN_EVENT_TYPES,
  type AiSummaryReadyEvent,
  type CallMissedEvent,
  type KnownEventType,
  type KnownWebhookEvent,
  type MessageReceivedEvent,
  type TranscriptReadyEvent,
  type UnknownWebhookEvent,
  type WebhookEvent,
  type WebhookEventOf,
  type WebhookObject,
  type WebhookTestEvent,
} from './event.js';
export type { HeaderGetter, HeaderRecord, WebhookHeaders } from './headers.js';
export type { VerifyOptions } from './options.js';
export type { WebhookPayload } from './payload.js';
export type { WebhookSecret } from './secret.js';
export { sign, type SignOptions, type WebhookSignatureHeaders } from './sign.js';
export type { VerifiedDelivery } from './verify-delivery.js';
export { verify, verifyDelivery } from './verify.js';
export { Webhook } from './webhook.js';
export type { BeginResult, DedupStore } from './dedup-store.js';
export { createReceiver, errorResponse, type Reception, type Receiver, type ReceiverOptions, type WebhookResponse } from './receiver.js';
export { MemoryDedupStore, type MemoryDedupStoreOptions } from './memory-dedup-store.js';

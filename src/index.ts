/**
 * svc-webhooks: verify, sign and parse the webhooks of the Messaging and
 * Calling Service (Standard Webhooks: HMAC-SHA256 over `id.timestamp.body`).
 * Runtime dependencies: `node:crypto`, `node:buffer` and `node:diagnostics_channel` only.
 */
export { ERROR_STATUS, WebhookVerificationError, type WebhookErrorCode } from './core/errors.js';
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
} from './core/event.js';
export type { HeaderGetter, HeaderRecord, WebhookHeaders } from './core/headers.js';
export type { VerifyOptions } from './core/options.js';
export type { WebhookPayload } from './core/payload.js';
export type { KeyedSecret, WebhookSecret } from './core/secret.js';
export type { SecretLookupOptions, SecretResolver } from './core/secret-lookup.js';
export { TenantWebhooks, type TenantDelivery, type TenantWebhooksOptions } from './core/tenant-webhooks.js';
export { sign, type SignOptions, type WebhookSignatureHeaders } from './core/sign.js';
export type { VerifiedDelivery } from './core/verify-delivery.js';
export { verify, verifyDelivery } from './core/verify.js';
export { Webhook } from './core/webhook.js';
export type { BeginResult, DedupStore } from './stores/dedup-store.js';
export type { ReceiverOptions } from './receive/receiver.js';
export type { Handoff } from './receive/handoff.js';
export { dispatch } from './receive/dispatch.js';
export type { DecidedResponse, DispatchResult, WebhookErrorBody, WebhookResponse } from './receive/responses.js';
export type {
  DispatchOptions,
  EventHandler,
  EventHandlers,
  EventSchemas,
  HandledEvent,
  HandlerContext,
  HandlerErrorCallback,
  HandlerOptions,
  KnownEventMap,
  UnknownEventPolicy,
  WithoutHandlerOptions,
} from './receive/handler-types.js';
export type { EntryOptions } from './receive/pipeline.js';
export type { TenantOf } from './receive/tenants.js';
export { eventKey } from './receive/event-key.js';
export type { OnErrorOptions } from './receive/user-callbacks.js';
export type {
  StandardSchema,
  StandardSchemaIssue,
  StandardSchemaOutput,
  StandardSchemaProps,
  StandardSchemaResult,
} from './receive/standard-schema.js';
export type { StoreErrorCallback, StoreErrorContext, StoreOperation } from './receive/claim.js';
export { MemoryDedupStore, type MemoryDedupStoreOptions } from './stores/memory-dedup-store.js';
export { DELIVERY_CHANNEL, HANDLER_CHANNEL, STORE_CHANNEL } from './receive/diagnostics.js';
export type { DeliveryMessage, DeliveryOutcome, EntryName, HandlerTraceContext, StoreMessage } from './receive/diagnostics.js';

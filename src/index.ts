/**
 * svc-webhooks: verify, sign and parse the webhooks of the Messaging and
 * Calling Service (Standard Webhooks: HMAC-SHA256 over `id.timestamp.body`),
 * and the types every entry shares: the delivery, the errors, the handlers,
 * the dedup store and the diagnostics channels. Runtime dependencies:
 * `node:crypto`, `node:buffer` and `node:diagnostics_channel` only; where
 * they are missing (Vercel Edge, Cloudflare Workers without `nodejs_compat`)
 * the package's `edge-light`, `workerd` and `worker` build verifies with Web
 * Crypto, through `verifyAsync` and the Fetch and Hono entries.
 * @packageDocumentation
 */
export {
  ERROR_CODES,
  WebhookBodyError,
  WebhookDedupError,
  WebhookError,
  WebhookHandlerError,
  WebhookTenantError,
  WebhookVerificationError,
  type BodyErrorCode,
  type DedupErrorCode,
  type ErrorClassName,
  type ErrorCodeInfo,
  type ErrorClassOf,
  type HandlerErrorCode,
  type TenantErrorCode,
  type VerificationErrorCode,
  type WebhookErrorCode,
} from './core/errors.js';
export { WebhookOptionsError } from './base/options-error.js';
export {
  KNOWN_EVENT_TYPES,
  type AiSummaryReadyEvent,
  type CallMissedEvent,
  type ContractEventMap,
  type KnownEventMap,
  type KnownEventType,
  type KnownWebhookEvent,
  type MessageReceivedEvent,
  type SpecEventMap,
  type TranscriptReadyEvent,
  type UnknownWebhookEvent,
  type WebhookEvent,
  type WebhookEventOf,
  type WebhookObject,
  type WebhookTestEvent,
} from './core/event.js';
export type { WebhookDelivery } from './core/delivery.js';
export type { EventOrder, OrderingOptions, StaleEventPolicy } from './core/event-order.js';
export type { HeaderGetter, HeaderRecord, WebhookHeaders } from './core/headers.js';
export type { VerifyOptions } from './core/options.js';
export type { WebhookPayload } from './core/payload.js';
export type { KeyedSecret, WebhookSecret } from './core/secret.js';
export type { SecretLookupOptions, SecretResolver } from './core/secret-lookup.js';
export { TenantWebhooks, type TenantDelivery, type TenantWebhooksOptions } from './core/tenant-webhooks.js';
export { sign, type SignOptions, type WebhookSignatureHeaders } from './core/sign.js';
export { verify, verifyAsync, verifyDelivery } from './core/verify.js';
export { Webhook } from './core/webhook.js';
export type { BeginResult, DedupStore, OrderedBeginResult, OrderingDedupStore, StoreOperation } from './stores/dedup-store.js';
export { MemoryDedupStore, type MemoryDedupStoreOptions } from './stores/memory-dedup-store.js';
export type {
  EventHandler,
  EventHandlers,
  EventSchemas,
  HandledEvent,
  HandlerErrorCallback,
  HandlerOptions,
  UnknownEventPolicy,
} from './process/handler-types.js';
export type {
  StandardSchema,
  StandardSchemaIssue,
  StandardSchemaOutput,
  StandardSchemaProps,
  StandardSchemaResult,
} from './process/standard-schema.js';
export type { Handoff } from './process/handoff.js';
export type { LookupErrorCallback, LookupErrorContext, StoreErrorCallback, StoreErrorContext } from './process/store-failures.js';
export type { WebhookLogCode, WebhookLogFields, WebhookLogger } from './base/logger.js';
export { DELIVERY_CHANNEL, ENQUEUE_CHANNEL, HANDLER_CHANNEL, JOB_CHANNEL, SECRET_LOOKUP_CHANNEL, STORE_CHANNEL } from './process/diagnostics.js';
export type {
  DeliveryOutcome,
  DeliveryTrace,
  EnqueueTrace,
  EntryName,
  HandlerTrace,
  JobOutcome,
  JobTrace,
  QueueSystem,
  SecretLookupMessage,
  StoreMessage,
} from './process/diagnostics.js';
export type { DedupUnavailablePolicy } from './receive/claim-answers.js';
export type { DedupOptions, ReceiverOptions, SecretOrTenants, SingleEndpoint, TenantEndpoints } from './receive/receiver.js';
export type { EntryOptions } from './receive/pipeline.js';
export type { HandlerEntryOptions } from './receive/handler-entry.js';
export type { OnErrorOptions } from './receive/on-error.js';
export type { TenantOf, TenantsOptions } from './receive/tenants.js';
export type { SingleHandlerMode, HandlersMode, HandoffMode, MiddlewareMode, RouteMode, WithoutHandlers } from './receive/what-runs.js';
export { dispatch, type DispatchDedupOptions, type DispatchOptions } from './receive/dispatch.js';
export type { DecidedResponse, DispatchResult, WebhookErrorBody, WebhookResponse } from './receive/responses.js';
export type { QueuedDelivery } from './queues/queued-delivery.js';

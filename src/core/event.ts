import type { Buffer } from 'node:buffer';
import { WebhookVerificationError } from './errors.js';

/**
 * The object an event concerns. The spec shows only its `id`; the other
 * fields pass through untouched.
 */
export interface WebhookObject {
  readonly id: string;
  readonly [field: string]: unknown;
}

/** The envelope every webhook carries (spec section 2), for an event type `T`. */
export interface WebhookEventOf<T extends string> {
  /** The event id; equal to the `webhook-id` header and the same on every retry. */
  readonly id: string;
  readonly type: T;
  readonly data: {
    readonly object: WebhookObject;
    readonly [field: string]: unknown;
  };
  readonly [field: string]: unknown;
}

/** A call was recorded as missed. */
export type CallMissedEvent = WebhookEventOf<'call.missed'>;
/** An inbound text arrived. */
export type MessageReceivedEvent = WebhookEventOf<'message.received'>;
/** `POST /webhook-endpoints/{id}/test` was called. */
export type WebhookTestEvent = WebhookEventOf<'webhook.test'>;
/** A requested call transcript is ready. */
export type TranscriptReadyEvent = WebhookEventOf<'transcript.ready'>;
/** An AI summary of a call is ready. */
export type AiSummaryReadyEvent = WebhookEventOf<'ai_summary.ready'>;

export type KnownWebhookEvent =
  | CallMissedEvent
  | MessageReceivedEvent
  | WebhookTestEvent
  | TranscriptReadyEvent
  | AiSummaryReadyEvent;

export type KnownEventType = KnownWebhookEvent['type'];

/** The event types the spec names. It says the list is not complete. */
export const KNOWN_EVENT_TYPES: readonly KnownEventType[] = Object.freeze([
  'call.missed',
  'message.received',
  'webhook.test',
  'transcript.ready',
  'ai_summary.ready',
]);

const KNOWN_TYPES: ReadonlySet<string> = new Set(KNOWN_EVENT_TYPES);

/** Whether this version knows `type`; a set lookup, so `'toString'` or `'__proto__'` are not types. */
export function isKnownEventType(type: string): type is KnownEventType {
  return KNOWN_TYPES.has(type);
}

/** An event of a type this version does not know, passed through as is. */
export type UnknownWebhookEvent = WebhookEventOf<string>;

/** What `verify()` returns. Switch on `type` to reach a known event. */
export type WebhookEvent = KnownWebhookEvent | UnknownWebhookEvent;

/**
 * Parses a verified body into an envelope. Throws `invalid_payload` unless it
 * is a JSON object with string `id` (equal to `webhookId`), `type` and
 * `data.object.id`.
 */
export function parseEvent(body: string | Buffer, webhookId: string): WebhookEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    throw invalid('the body is not JSON');
  }
  if (!isRecord(parsed)) throw invalid('the body is not a JSON object');
  if (typeof parsed.type !== 'string') throw invalid('the envelope has no string "type"');
  if (typeof parsed.id !== 'string') throw invalid('the envelope has no string "id"');
  // Dedup keys on webhook-id; an envelope naming another event would defeat it.
  if (parsed.id !== webhookId) throw invalid('the envelope "id" differs from the webhook-id header');
  const { data } = parsed;
  if (!isRecord(data) || !isRecord(data.object) || typeof data.object.id !== 'string') {
    throw invalid('the envelope has no string "data.object.id"');
  }
  return parsed as unknown as WebhookEvent;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(message: string): WebhookVerificationError {
  return new WebhookVerificationError('invalid_payload', message);
}

import type { Buffer } from 'node:buffer';
import { WebhookVerificationError } from './errors.js';

/**
 * The object an event concerns. The spec shows only its `id`; the other
 * fields pass through untouched.
 */
export interface WebhookObject {
  /** The object's id: `call_…`, `msg_…`, … */
  readonly id: string;
  /** Fields the spec does not show, passed through as sent. */
  readonly [field: string]: unknown;
}

/** The envelope every webhook carries (spec section 2), for an event type `T`. */
export interface WebhookEventOf<T extends string> {
  /** The event id; equal to the `webhook-id` header and the same on every retry. */
  readonly id: string;
  /** The event type: `call.missed`, `message.received`, … */
  readonly type: T;
  /** What the event is about. */
  readonly data: {
    /** The object the event concerns. */
    readonly object: WebhookObject;
    /** Fields the spec does not show, passed through as sent. */
    readonly [field: string]: unknown;
  };
  /** Fields the spec does not show, passed through as sent. */
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

/** An event of one of the types the spec names. */
export type KnownWebhookEvent =
  | CallMissedEvent
  | MessageReceivedEvent
  | WebhookTestEvent
  | TranscriptReadyEvent
  | AiSummaryReadyEvent;

/** The event types the spec names: `'call.missed' | 'message.received' | …`. */
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

/** Each known event type with its event: `KnownEventMap['call.missed']` is `CallMissedEvent`. */
export type KnownEventMap = { [E in KnownWebhookEvent as E['type']]: E };

/**
 * Parses a verified body into an envelope. Throws `invalid_payload` unless it
 * is a JSON object with string `id` (equal to `webhookId`), `type` and
 * `data.object.id`.
 */
export function parseEvent(body: string | Buffer, webhookId: string): WebhookEvent {
  let parsed: unknown;
  try {
    // String() of a Buffer is its UTF-8 text.
    parsed = JSON.parse(String(body));
  } catch {
    throw invalid('the body is not JSON');
  }
  const problem = envelopeProblem(parsed);
  if (problem !== undefined) throw invalid(problem);
  // Dedup keys on webhook-id; an envelope naming another event would defeat it.
  if ((parsed as WebhookEvent).id !== webhookId) throw invalid('the envelope "id" differs from the webhook-id header');
  return parsed as WebhookEvent;
}

/**
 * Whether `value` holds the envelope `parseEvent` requires of a body: a
 * JSON object with string `id`, `type` and `data.object.id`. For an event
 * that arrives by another way than a request, such as a queue's job.
 */
export function isWebhookEvent(value: unknown): value is WebhookEvent {
  return envelopeProblem(value) === undefined;
}

/** What keeps `value` from being an envelope, as `parseEvent` words it, or `undefined` when it is one. */
function envelopeProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return 'the body is not a JSON object';
  if (typeof value.type !== 'string') return 'the envelope has no string "type"';
  if (typeof value.id !== 'string') return 'the envelope has no string "id"';
  const { data } = value;
  if (!isRecord(data) || !isRecord(data.object) || typeof data.object.id !== 'string') return 'the envelope has no string "data.object.id"';
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(message: string): WebhookVerificationError {
  return new WebhookVerificationError('invalid_payload', message);
}

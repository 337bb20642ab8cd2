/** The event envelope: the types of the known events, and the parse of a verified body into one. */
import { isRecord } from '../base/record.js';
import { WebhookVerificationError } from './errors.js';
import { utf8Text } from './runtime-crypto.js';

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

/**
 * Each event type the spec names (section 6) with its envelope. The spec
 * shows no field of `data.object` but its `id`.
 */
export interface SpecEventMap {
  /** A call was recorded as missed. */
  'call.missed': WebhookEventOf<'call.missed'>;
  /** An inbound text arrived. */
  'message.received': WebhookEventOf<'message.received'>;
  /** `POST /webhook-endpoints/{id}/test` was called. */
  'webhook.test': WebhookEventOf<'webhook.test'>;
  /** A requested call transcript is ready. */
  'transcript.ready': WebhookEventOf<'transcript.ready'>;
  /** An AI summary of a call is ready. */
  'ai_summary.ready': WebhookEventOf<'ai_summary.ready'>;
}

/**
 * Each event type the service's OpenAPI contract describes, with its whole
 * payload. Empty here: the module `svc-webhooks types` writes from the
 * contract augments it, and its types then take the place of the spec's
 * envelopes and add the types the spec does not name.
 */
export interface ContractEventMap {}

/**
 * Each known event type with its event: the contract's payload where a
 * generated module describes the type, else the spec's envelope.
 * `KnownEventMap['call.missed']` is `CallMissedEvent`.
 */
export type KnownEventMap = Omit<SpecEventMap, keyof ContractEventMap> & ContractEventMap;

/** A call was recorded as missed. */
export type CallMissedEvent = KnownEventMap['call.missed'];
/** An inbound text arrived. */
export type MessageReceivedEvent = KnownEventMap['message.received'];
/** `POST /webhook-endpoints/{id}/test` was called. */
export type WebhookTestEvent = KnownEventMap['webhook.test'];
/** A requested call transcript is ready. */
export type TranscriptReadyEvent = KnownEventMap['transcript.ready'];
/** An AI summary of a call is ready. */
export type AiSummaryReadyEvent = KnownEventMap['ai_summary.ready'];

/** The known event types: the spec's, and those a generated contract module adds. */
export type KnownEventType = keyof KnownEventMap & string;

/** An event of one of the known types. */
export type KnownWebhookEvent = KnownEventMap[KnownEventType];

/** The event types the spec names. It says the list is not complete. */
export const KNOWN_EVENT_TYPES: readonly (keyof SpecEventMap)[] = Object.freeze([
  'call.missed',
  'message.received',
  'webhook.test',
  'transcript.ready',
  'ai_summary.ready',
]);

const KNOWN_TYPES: ReadonlySet<string> = new Set(KNOWN_EVENT_TYPES);

/**
 * Whether `type` is one the spec names; a set lookup, so `'toString'` or
 * `'__proto__'` are not types. A type only a contract adds is not: the
 * generated module is types alone.
 */
export function isKnownEventType(type: string): type is keyof SpecEventMap {
  return KNOWN_TYPES.has(type);
}

/**
 * Whether `type` is written as the service writes event types: lower-case
 * words joined by dots, as `call.missed` or `ai_summary.ready`. A key of
 * `on` or `schemas` must be one, so a type a contract adds is taken, and a
 * key such as `'Call.Missed'` or `'toString'` is a mistake.
 */
export function isEventTypeName(type: string): boolean {
  return EVENT_TYPE_NAME.test(type);
}

const EVENT_TYPE_NAME = /^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+$/;

/** An event of a type this version does not know, passed through as is. */
export type UnknownWebhookEvent = WebhookEventOf<string>;

/** What `verify()` returns. Switch on `type` to reach a known event. */
export type WebhookEvent = KnownWebhookEvent | UnknownWebhookEvent;


/**
 * Parses a verified body into an envelope. Throws `invalid_payload` unless it
 * is a JSON object with string `id` (equal to `webhookId`), `type` and
 * `data.object.id`.
 */
export function parseEvent(body: string | Uint8Array, webhookId: string): WebhookEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof body === 'string' ? body : utf8Text(body));
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

function invalid(message: string): WebhookVerificationError {
  return new WebhookVerificationError('invalid_payload', message);
}

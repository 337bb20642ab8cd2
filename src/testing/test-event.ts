/** Valid envelopes of the known event types, for tests. */
import { isRecord } from '../base/record.js';
import { isEventTypeName, type KnownEventMap, type KnownEventType, type SpecEventMap } from '../core/event.js';
import type { EventSchemas } from '../process/handler-types.js';
import { newId } from './envelope.js';
import { WebhookOptionsError } from '../base/options-error.js';

/** What `testEvent` merges into the envelope it makes, an event `E`: any of its fields, at any depth; arrays replace whole. */
export type TestEventOverrides<E> = E extends readonly unknown[] ? E : E extends object ? { [K in keyof E]?: TestEventOverrides<E[K]> } : E;

/** Options of `testEvent()`. */
export interface TestEventOptions {
  /**
   * The receiver's schemas: the event is checked against its type's schema
   * (synchronously), so a fixture and a schema cannot drift apart unnoticed.
   * @default undefined (no check)
   */
  readonly schemas?: EventSchemas;
  /**
   * The clock, for the envelope's `timestamp` and the id's time part.
   * @default Date.now
   */
  readonly now?: () => number;
}

// The prefix of data.object's id, by type: what the service's ids of that kind start with.
const OBJECT_PREFIX: Readonly<Record<keyof SpecEventMap, string>> = {
  'call.missed': 'call',
  'message.received': 'msg',
  'webhook.test': 'we',
  'transcript.ready': 'trs',
  'ai_summary.ready': 'sum',
};

/**
 * A valid envelope of `type`: a fresh `id` of the service's form (`evt_`
 * and a ULID), `type`, `timestamp`, and `data.object` with an `id`, then
 * `overrides` merged in, deeply. Typed as that type's event: where a
 * generated contract module describes the type, the fields past the
 * envelope are yours to give in `overrides`. A type the spec does not name
 * gets a `data.object.id` starting `obj_`.
 */
export function testEvent<T extends KnownEventType>(type: T, overrides?: TestEventOverrides<KnownEventMap[T]>, options: TestEventOptions = {}): KnownEventMap[T] {
  if (!isEventTypeName(type)) throw new WebhookOptionsError(`svc-webhooks: testEvent takes an event type, as 'call.missed', not ${JSON.stringify(type)}`);
  const nowMs = (options.now ?? Date.now)();
  const base = {
    id: newId('evt', nowMs),
    type,
    timestamp: new Date(Math.floor(nowMs / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
    data: { object: { id: newId(Object.hasOwn(OBJECT_PREFIX, type) ? OBJECT_PREFIX[type as keyof SpecEventMap] : 'obj', nowMs) } },
  };
  const event = merged(base, overrides) as KnownEventMap[T];
  const schema = options.schemas?.[type];
  if (schema !== undefined) {
    const outcome = schema['~standard'].validate(event);
    if (outcome instanceof Promise) throw new WebhookOptionsError(`svc-webhooks: the schema of ${type} validates asynchronously; testEvent checks synchronously`);
    if (outcome.issues !== undefined) {
      const paths = outcome.issues.map((issue) => (issue.path ?? []).map((part) => String(typeof part === 'object' ? part.key : part)).join('.'));
      throw new WebhookOptionsError(`svc-webhooks: testEvent('${type}') fails its schema at ${paths.join(', ') || 'the root'}`);
    }
  }
  return event;
}

function merged(base: unknown, overrides: unknown): unknown {
  if (!isRecord(base) || !isRecord(overrides)) return overrides === undefined ? base : overrides;
  const result: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overrides)) result[key] = merged(base[key], value);
  return result;
}

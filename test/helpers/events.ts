/** Events as `verify()` returns them, built directly for dispatch tests. */
import { KNOWN_EVENT_TYPES, type EventHandlers, type KnownEventType, type WebhookEvent } from '../../src/index.js';

/** An envelope of `type` about `id`, with `object` fields added to `data.object`. */
export function eventOf(type: string, id = 'evt_1', object: Record<string, unknown> = {}): WebhookEvent {
  return { id, type, created_at: '2023-11-14T22:13:20Z', data: { object: { id: `obj_${id}`, ...object } } };
}

/** A handler for every known type, recording the types it was called for. */
export function recordingHandlers(): { on: EventHandlers; calls: KnownEventType[] } {
  const calls: KnownEventType[] = [];
  const on = Object.fromEntries(KNOWN_EVENT_TYPES.map((type) => [type, () => void calls.push(type)])) as EventHandlers;
  return { on, calls };
}

/**
 * The events of the ordering runs: `objects` objects, each with `versions`
 * events, each event an id of its own whose envelope's `timestamp` (RFC
 * 3339; every other object's written in +02:00, so that the instant orders,
 * not the text) increases with its version. Each event goes as 1 to 3
 * copies, and every copy of every event is shuffled into one list: a copy
 * may arrive before, beside or after the others and after later events of
 * its object, as the service's retries do. All drawn from the seed.
 */
import { signedHeaders } from '../../../src/testing/index.js';
import type { SignedRequest } from '../signed-request.js';
import { NOW_SECONDS, SECRET } from '../signed-request.js';
import { draw } from './seeded-random.js';

/** One event of the run, as the handlers record it. */
export interface OrderedEvent {
  readonly id: string;
  readonly object: string;
  /** 1 for the object's first event, up to `versions`: the order its timestamps give. */
  readonly version: number;
  readonly request: SignedRequest;
}

/** One copy of an event, a delivery of its own. */
export interface OrderedCopy {
  readonly event: OrderedEvent;
  readonly copy: number;
}

export interface OrderedRun {
  readonly events: readonly OrderedEvent[];
  /** Every copy of every event, in the order the senders take them. */
  readonly copies: readonly OrderedCopy[];
  readonly objects: number;
  readonly versions: number;
}

const EPOCH_MS = Date.UTC(2026, 0, 1);

/** The event's time: `version` seconds after the epoch, plus the object's index in ms so that objects differ. */
function timestamp(object: number, version: number): string {
  const instant = new Date(EPOCH_MS + version * 1000 + object);
  if (object % 2 === 0) return instant.toISOString();
  // The same instant two hours ahead, written +02:00.
  return `${new Date(instant.getTime() + 2 * 3600_000).toISOString().slice(0, -1)}+02:00`;
}

export function buildOrderedRun(seed: number, objects: number, versions: number): OrderedRun {
  const events: OrderedEvent[] = [];
  for (let object = 0; object < objects; object++) {
    for (let version = 1; version <= versions; version++) {
      const id = `evt_${object}_${version}`;
      const objectId = `obj_${object}`;
      const body = JSON.stringify({ id, type: 'message.received', timestamp: timestamp(object, version), data: { object: { id: objectId, version } } });
      events.push({ id, object: objectId, version, request: { body, headers: signedHeaders(body, { id, secret: SECRET, timestamp: NOW_SECONDS }) } });
    }
  }
  const copies = events.flatMap((event) => Array.from({ length: 1 + Math.floor(draw(seed, 'copies', event.id) * 3) }, (_, copy) => ({ event, copy })));
  const order = new Map(copies.map((copy) => [copy, draw(seed, 'order', copy.event.id, copy.copy)]));
  copies.sort((a, b) => order.get(a)! - order.get(b)!);
  return { events, copies, objects, versions };
}

/** The object and version a handler records, read from an event of the run. */
export function orderOf(event: { readonly id: string; readonly data: { readonly object: { readonly id: string } } }): { object: string; version: number } {
  return { object: event.data.object.id, version: (event.data.object as { version?: unknown }).version as number };
}

/** The types of `on`: one handler per event type, each typed by its event or its schema. */
import type { WebhookDelivery } from '../core/delivery.js';
import type { KnownEventMap, KnownEventType, UnknownWebhookEvent, WebhookEvent } from '../core/event.js';
import type { StandardSchema, StandardSchemaOutput } from './standard-schema.js';

/**
 * Handles one event: `event` is the event (its schema's output where
 * `schemas` has one for its type), `delivery` the verified delivery it came
 * in: `D`, which on the Fetch, Lambda, Azure and h3 entries also holds the
 * host's `request` and `context`, as their single handler's second argument
 * does. Resolving takes the event (204); throwing or rejecting fails it (500
 * `handler_failed`, and the sender retries).
 */
export type EventHandler<E, D extends WebhookDelivery = WebhookDelivery> = (event: E, delivery: D) => unknown;

/** A Standard Schema (zod 4, valibot 1, arktype 2, …) per known event type, each for the whole event. */
export type EventSchemas = { readonly [T in KnownEventType]?: StandardSchema };

/** The event a handler of `T` receives: its schema's output when `S` has one for `T`, else the known event. */
export type HandledEvent<T extends KnownEventType, S extends EventSchemas> = T extends keyof S
  ? StandardSchemaOutput<Exclude<S[T], undefined>>
  : KnownEventMap[T];

/** The handlers of `on`: only known types are keys, so a misspelled type does not compile. `D` is what each gets besides the event. */
export type EventHandlers<S extends EventSchemas = {}, D extends WebhookDelivery = WebhookDelivery> = {
  readonly [T in KnownEventType]?: EventHandler<HandledEvent<T, S>, D>;
};

/**
 * What happens to an event of a type this version does not know when no
 * `onUnknownEvent` handles it: `'accept'` takes it (204, since the spec's
 * list of types is not complete), `'reject'` refuses it (422
 * `unknown_event_type`, and the sender retries).
 */
export type UnknownEventPolicy = 'accept' | 'reject';

/**
 * Told when a handler (or `onUnknownEvent`) threw or rejected, with what it
 * threw; when an event failed its schema, with a `WebhookHandlerError` of
 * code `invalid_event_data` naming the paths; and with `handoff`, when the
 * queue did not record an event, with the queue's error. Its own throw or
 * rejection is ignored.
 */
export type HandlerErrorCallback = (error: unknown, event: WebhookEvent, delivery: WebhookDelivery) => void;

/** How events reach handlers: what `on` takes with it on every entry, on the queue workers and in `dispatch`; `D` is what a handler gets besides the event. */
export interface HandlerOptions<S extends EventSchemas = {}, D extends WebhookDelivery = WebhookDelivery> {
  /**
   * One handler per known event type. With it, the receiver answers by
   * itself: 204 once the handler resolves, under the dedup claim when there
   * is a store. Known types without a handler are answered 204.
   */
  readonly on: EventHandlers<S, D>;
  /**
   * A schema per event type, checked against the whole event before its
   * handler runs; the handler receives the schema's output. A failure is
   * answered 422 `invalid_event_data` with the failing paths, never the values.
   * Each schema needs a handler in `on`.
   * @default undefined (events reach handlers as verified)
   */
  readonly schemas?: S;
  /**
   * What to do with an event of a type this version does not know, when
   * `onUnknownEvent` is not given.
   * @default 'accept'
   */
  readonly unknownEvents?: UnknownEventPolicy;
  /**
   * Handles an event of a type this version does not know, as a handler of
   * `on` handles its type. Not with `unknownEvents`.
   * @default undefined (`unknownEvents` decides)
   */
  readonly onUnknownEvent?: EventHandler<UnknownWebhookEvent, D>;
  /**
   * Told when a handler failed or an event failed its schema; the answer is
   * the same either way.
   * @default logs one warning to `logger` (by default, console.error): the event's type and id, and what the handler threw (its class, message and stack) or the failing paths
   */
  readonly onHandlerError?: HandlerErrorCallback;
}

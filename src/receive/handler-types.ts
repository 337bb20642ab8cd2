/** The types of `on`: one handler per event type, each typed by its event or its schema. */
import type { KnownEventType, KnownWebhookEvent, UnknownWebhookEvent, WebhookEvent } from '../core/event.js';
import type { StandardSchema, StandardSchemaOutput } from './standard-schema.js';

/** Each known event type with its event: `KnownEventMap['call.missed']` is `CallMissedEvent`. */
export type KnownEventMap = { [E in KnownWebhookEvent as E['type']]: E };

/** What a handler learns besides the event. */
export interface HandlerContext {
  /** The verified `webhook-id`, equal to `event.id`: the same on every retry of the event. */
  readonly id: string;
  /** Which secret verified it (see `KeyedSecret`); absent for `dispatch`, which verifies nothing. */
  readonly keyId?: string;
  /** The tenant whose endpoint received it, where the receiver serves many (its `tenant` option); absent otherwise. */
  readonly tenant?: string;
}

/**
 * Handles one event. Resolving answers 204; throwing or rejecting answers 500
 * `handler_failed`, and the sender retries.
 */
export type EventHandler<E> = (event: E, context: HandlerContext) => unknown;

/** A Standard Schema (zod 4, valibot 1, arktype 2, …) per known event type, each for the whole event. */
export type EventSchemas = { readonly [T in KnownEventType]?: StandardSchema };

/** The event a handler of `T` receives: its schema's output when `S` has one for `T`, else the known event. */
export type HandledEvent<T extends KnownEventType, S extends EventSchemas> = T extends keyof S
  ? StandardSchemaOutput<Exclude<S[T], undefined>>
  : KnownEventMap[T];

/** The handlers of `on`: only known types are keys, so a misspelled type does not compile. */
export type EventHandlers<S extends EventSchemas = {}> = {
  readonly [T in KnownEventType]?: EventHandler<HandledEvent<T, S>>;
};

/**
 * What happens to an event of a type this version does not know: `'accept'`
 * answers 204, `'reject'` answers 422 `unknown_event_type` (the sender then
 * retries), a function runs like a handler.
 */
export type UnknownEventPolicy = 'accept' | 'reject' | EventHandler<UnknownWebhookEvent>;

/**
 * Told when a handler (or the `onUnknown` function) threw or rejected, with
 * what it threw, and when an event failed its schema, with a
 * `WebhookVerificationError` of code `invalid_event_data` naming the paths.
 * `event` is the event as verified, before any schema.
 */
export type HandlerErrorCallback = (error: unknown, event: WebhookEvent, context: HandlerContext) => void;

/** How events reach handlers. Every adapter takes these; `dispatch` takes all but `on` as its options. */
export interface HandlerOptions<S extends EventSchemas = {}> {
  /**
   * One handler per known event type. With it, the receiver answers by
   * itself: 204 once the handler resolves, under the dedup claim when there
   * is a store. Known types without a handler are answered 204.
   * @default undefined (the route answers)
   */
  readonly on?: EventHandlers<S>;
  /**
   * A schema per event type, checked against the whole event before its
   * handler runs; the handler receives the schema's output. A failure is
   * answered 422 `invalid_event_data` with the failing paths, never the values.
   * Each schema needs a handler in `on`.
   * @default undefined (events reach handlers as verified)
   */
  readonly schemas?: S;
  /**
   * What to do with an event of a type this version does not know.
   * @default 'accept'
   */
  readonly onUnknown?: UnknownEventPolicy;
  /**
   * Told when a handler failed or an event failed its schema; the answer is
   * the same either way. Its own throw or rejection is ignored.
   * @default logs one line with console.error: the event's type and id, and the error's name or the failing paths
   */
  readonly onHandlerError?: HandlerErrorCallback;
}

/** The options of `dispatch`: the handler options but `on`, which it takes on its own. */
export type DispatchOptions<S extends EventSchemas = {}> = Omit<HandlerOptions<S>, 'on'>;

/** What the options of an entry called with a single handler (Fetch, Lambda) leave out: that handler answers every event. */
export interface WithoutHandlerOptions {
  readonly on?: undefined;
  readonly schemas?: undefined;
  readonly onUnknown?: undefined;
}

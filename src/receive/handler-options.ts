/** Checks the handler options once, at creation, into a snapshot the caller can no longer change. */
import { WebhookVerificationError } from '../core/errors.js';
import { isKnownEventType, KNOWN_EVENT_TYPES, type UnknownWebhookEvent, type WebhookEvent } from '../core/event.js';
import { checkCallback } from '../core/option-checks.js';
import type { EventHandler, EventSchemas, HandlerErrorCallback, HandlerOptions } from './handler-types.js';
import type { StandardSchema } from './standard-schema.js';

/** The handler of one event type, and its schema if it has one. */
export interface HandlerRoute {
  readonly handler: EventHandler<unknown>;
  readonly schema?: StandardSchema;
}

export interface CheckedHandlerOptions {
  /** By event type; only known types, only those with a handler. */
  readonly routes: ReadonlyMap<string, HandlerRoute>;
  readonly onUnknown: 'accept' | 'reject' | EventHandler<UnknownWebhookEvent>;
  readonly onHandlerError: HandlerErrorCallback;
}

/**
 * The checked options, or `undefined` without `on` (the route or the single
 * handler answers then). Throws `TypeError` for a caller mistake: a handler
 * that is no function, a key of `on` or `schemas` that is not a known event
 * type, a schema without `~standard`, a schema whose type has no handler, the
 * other handler options without `on`. `singleHandler`: the entry was given
 * one handler for every event instead, which `onHandlerError` serves too.
 */
export function checkHandlerOptions<S extends EventSchemas>(options: HandlerOptions<S>, singleHandler: boolean): CheckedHandlerOptions | undefined {
  const { on, schemas, onUnknown = 'accept' } = options;
  if (on === undefined) {
    const onlyWithOn = singleHandler ? (['schemas', 'onUnknown'] as const) : (['schemas', 'onUnknown', 'onHandlerError'] as const);
    const stray = onlyWithOn.find((name) => options[name] !== undefined);
    if (stray !== undefined) throw new TypeError(`svc-webhooks: ${stray} takes effect only with on`);
    return undefined;
  }
  const routes = new Map<string, HandlerRoute>();
  for (const [type, handler] of eventTypeEntries('on', on)) {
    if (handler === undefined) continue;
    if (typeof handler !== 'function') throw new TypeError(`svc-webhooks: on['${type}'] must be a function`);
    routes.set(type, { handler: handler as EventHandler<unknown> });
  }
  for (const [type, schema] of eventTypeEntries('schemas', schemas ?? {})) {
    if (schema === undefined) continue;
    if (!isStandardSchema(schema)) {
      throw new TypeError(`svc-webhooks: schemas['${type}'] must be a Standard Schema v1 (zod 4, valibot 1, arktype 2, …)`);
    }
    const route = routes.get(type);
    if (route === undefined) throw new TypeError(`svc-webhooks: schemas['${type}'] has no handler in on to validate for`);
    routes.set(type, { ...route, schema });
  }
  if (onUnknown !== 'accept' && onUnknown !== 'reject' && typeof onUnknown !== 'function') {
    throw new TypeError("svc-webhooks: onUnknown must be 'accept', 'reject' or a function");
  }
  return { routes, onUnknown, onHandlerError: checkOnHandlerError(options.onHandlerError) };
}

/** The entries of `on` or `schemas`, each key a known event type; values read once. */
function eventTypeEntries(name: string, record: unknown): Array<[string, unknown]> {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    throw new TypeError(`svc-webhooks: ${name} must be an object keyed by event type`);
  }
  return Reflect.ownKeys(record).map((key) => {
    if (typeof key !== 'string') throw new TypeError(`svc-webhooks: the keys of ${name} must be event type strings`);
    if (!isKnownEventType(key)) {
      throw new TypeError(
        `svc-webhooks: ${name} has the key '${key}', which is not a known event type (${KNOWN_EVENT_TYPES.join(', ')}); ` +
          'events of other types go to onUnknown',
      );
    }
    return [key, (record as Record<string, unknown>)[key]];
  });
}

function isStandardSchema(value: unknown): value is StandardSchema {
  // Read from any value but null: arktype's schemas are functions, the others objects, and a primitive has no such key.
  const props = (value as Partial<StandardSchema> | null)?.['~standard'];
  return typeof props === 'object' && props !== null && props.version === 1 && typeof props.validate === 'function';
}

/** `onHandlerError`, checked, or the default that logs one line. Throws `TypeError`. */
export function checkOnHandlerError(onHandlerError: unknown = logHandlerError): HandlerErrorCallback {
  checkCallback('onHandlerError', onHandlerError);
  return onHandlerError as HandlerErrorCallback;
}

/** One line, without the error's message: a handler's message may quote the event. */
function logHandlerError(error: unknown, event: WebhookEvent): void {
  const what =
    error instanceof WebhookVerificationError && error.code === 'invalid_event_data'
      ? error.message
      : `the handler failed (${error instanceof Error ? error.name : typeof error})`;
  console.error(`svc-webhooks: event ${JSON.stringify(event.id)} of type ${JSON.stringify(event.type)}: ${what}; the sender will retry it`);
}

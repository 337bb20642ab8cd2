/** Checks the handler options once, at creation, into a snapshot the caller can no longer change. */
import { isRecord } from '../base/record.js';
import { CONSOLE_LINES, errorFields, quoted, thrownFields, thrownText, writeLog, type WebhookLogCode, type WebhookLogFields, type WebhookLogger } from '../base/logger.js';
import { checkCallback, checkPolicy } from '../base/option-checks.js';
import type { WebhookDelivery } from '../core/delivery.js';
import { WebhookHandlerError } from '../core/errors.js';
import { isEventTypeName } from '../core/event.js';
import type { EventHandler, HandlerErrorCallback, HandlerOptions, UnknownEventPolicy } from './handler-types.js';
import type { StandardSchema } from './standard-schema.js';
import { WebhookOptionsError } from '../base/options-error.js';

/** The handler of one event type, and its schema if it has one. */
export interface HandlerRoute {
  readonly handler: EventHandler<unknown>;
  readonly schema?: StandardSchema;
}

/** The handler options, checked. */
export interface CheckedHandlers {
  /** By event type; only types with a handler. */
  readonly routes: ReadonlyMap<string, HandlerRoute>;
  /** The handler of unknown types, if `onUnknownEvent` gave one. */
  readonly unknown: HandlerRoute | undefined;
  readonly unknownEvents: UnknownEventPolicy;
  readonly onHandlerError: HandlerErrorCallback;
}

/** The options only `on` gives a meaning to: given without it, they are a mistake. */
export const ONLY_WITH_ON = ['schemas', 'unknownEvents', 'onUnknownEvent'] as const;

/**
 * The checked options. Throws `WebhookOptionsError` for a caller mistake: `on` that is
 * no object, a handler that is no function, a key of `on` or `schemas` not
 * written as an event type, a schema without `~standard`, a schema whose
 * type has no handler, `onUnknownEvent` beside `unknownEvents`.
 */
export function checkHandlerOptions(options: HandlerOptions<{}>, byDefault?: HandlerErrorCallback): CheckedHandlers {
  const { on, schemas, onUnknownEvent } = options;
  const routes = new Map<string, HandlerRoute>();
  for (const [type, handler] of eventTypeEntries('on', on)) {
    if (handler === undefined) continue;
    if (typeof handler !== 'function') throw new WebhookOptionsError(`svc-webhooks: on['${type}'] must be a function`);
    routes.set(type, { handler: handler as EventHandler<unknown> });
  }
  for (const [type, schema] of eventTypeEntries('schemas', schemas ?? {})) {
    if (schema === undefined) continue;
    if (!isStandardSchema(schema)) {
      throw new WebhookOptionsError(`svc-webhooks: schemas['${type}'] must be a Standard Schema v1 (zod 4, valibot 1, arktype 2, …)`);
    }
    const route = routes.get(type);
    if (route === undefined) throw new WebhookOptionsError(`svc-webhooks: schemas['${type}'] has no handler in on to validate for`);
    routes.set(type, { ...route, schema });
  }
  const unknownEvents = checkPolicy('unknownEvents', options.unknownEvents, ['accept', 'reject'] as const) ?? 'accept';
  checkCallback('onUnknownEvent', onUnknownEvent);
  if (onUnknownEvent !== undefined && options.unknownEvents !== undefined) {
    throw new WebhookOptionsError('svc-webhooks: give onUnknownEvent or unknownEvents, not both: onUnknownEvent handles every unknown type');
  }
  return {
    routes,
    unknown: onUnknownEvent === undefined ? undefined : { handler: onUnknownEvent as EventHandler<unknown> },
    unknownEvents,
    onHandlerError: checkOnHandlerError(options.onHandlerError, byDefault),
  };
}

/**
 * The entries of `on` or `schemas`, values read once. Each key must be written
 * as an event type, not be one the spec names: a type a generated contract
 * module adds is known to TypeScript alone, which is what catches a misspelled one.
 */
function eventTypeEntries(name: string, record: unknown): Array<[string, unknown]> {
  if (!isRecord(record)) {
    throw new WebhookOptionsError(`svc-webhooks: ${name} must be an object keyed by event type`);
  }
  return Reflect.ownKeys(record).map((key) => {
    if (typeof key !== 'string') throw new WebhookOptionsError(`svc-webhooks: the keys of ${name} must be event type strings`);
    if (!isEventTypeName(key)) {
      throw new WebhookOptionsError(
        `svc-webhooks: ${name} has the key '${JSON.stringify(key).slice(1, -1)}', which is not an event type: ` +
          "lower-case words joined by dots, as 'call.missed'",
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

/** `onHandlerError`, checked, or `byDefault`: one log line about a handler whose event the sender retries. Throws `WebhookOptionsError`. */
export function checkOnHandlerError(onHandlerError: unknown, byDefault: HandlerErrorCallback = RECEIVER_LOG): HandlerErrorCallback {
  checkCallback('onHandlerError', onHandlerError);
  return (onHandlerError ?? byDefault) as HandlerErrorCallback;
}

/**
 * The default `onHandlerError`: one warning to `logger` naming the event,
 * its type and what failed, and then `consequence` (who retries it). What
 * the handler threw is the user's own: its class and message are in the
 * sentence and the fields, and the error itself under `err`, for its stack.
 * A schema's failing paths are named, never the values.
 */
export function handlerErrorLog(consequence: string, logger: WebhookLogger = CONSOLE_LINES): HandlerErrorCallback {
  return (error, event, delivery) => {
    const invalid = error instanceof WebhookHandlerError && error.code === 'invalid_event_data';
    const what = invalid ? error.message : `the handler failed (${thrownText(error)})`;
    const fields = invalid ? deliveryLogFields('invalid_event_data', delivery, errorFields(error, false)) : deliveryLogFields('handler_failed', delivery, thrownFields(error));
    writeLog(logger, 'warn', fields, `event ${quoted(event.id)} of type ${quoted(event.type)}: ${what}; ${consequence}`);
  };
}

/** The default `onHandlerError` of a receiver: the sender retries a failed event. */
export function receiverErrorLog(logger?: WebhookLogger): HandlerErrorCallback {
  return handlerErrorLog('the sender will retry it', logger);
}

const RECEIVER_LOG = receiverErrorLog();

/** The fields of a line about `delivery`, for `code`, with those that name its error. */
export function deliveryLogFields(code: WebhookLogCode, delivery: WebhookDelivery, error: Omit<WebhookLogFields, 'code'>): WebhookLogFields {
  const { id, event, keyId, tenant } = delivery;
  const named = { code, id, type: event.type, keyId, ...error };
  return tenant === undefined ? named : { ...named, tenant };
}

/**
 * The `@OnWebhook` decorator of svc-webhooks/nestjs, and how the module finds
 * the decorated methods of every provider at bootstrap: as the handlers of
 * `on`, each calling its method on the provider's instance, for the route
 * and for the worker alike.
 */
import type { DiscoveryService } from '@nestjs/core';
import type { WebhookDelivery } from '../src/core/delivery.js';
import type { KnownEventMap, KnownEventType } from '../src/core/event.js';
import type { EventHandler, EventHandlers } from '../src/process/handler-types.js';
import { WebhookOptionsError } from '../src/base/options-error.js';

/** A method `@OnWebhook(type)` may decorate: it takes the event of `type` and its delivery. */
export type WebhookMethod<T extends KnownEventType> = (event: KnownEventMap[T], delivery: WebhookDelivery) => unknown;

/** What `@OnWebhook(type)` is: a decorator of a method that takes the event of `type`. */
export type OnWebhookDecorator<T extends KnownEventType> = <M extends WebhookMethod<T>>(
  prototype: object,
  method: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => void;

/**
 * Options given as an object, without `on`: the `@OnWebhook` methods of the
 * providers are the handlers, of the route and of the worker alike. `what`
 * names the module's method, `needs` what its options hold. Throws `WebhookOptionsError`.
 */
export function checkOptionsWithoutOn(what: string, options: unknown, needs: string): void {
  if (typeof options !== 'object' || options === null) throw new WebhookOptionsError(`svc-webhooks: ${what} needs options with ${needs}`);
  if ((options as { readonly on?: unknown }).on !== undefined) throw new WebhookOptionsError(`svc-webhooks: ${what} takes no on: the @OnWebhook methods of the providers are the handlers`);
}

/** The methods decorated with `@OnWebhook`, by the prototype that declares them: method name to event type. */
const decorated = new WeakMap<object, Map<string | symbol, KnownEventType>>();

/**
 * Makes a provider's method the handler of `type`: it runs for each verified
 * event of that type, under its claim (resolving takes it: 204; throwing fails
 * it: 500, and the sender retries). One method per type, on a provider of the
 * default (singleton) scope.
 */
export function OnWebhook<T extends KnownEventType>(type: T): OnWebhookDecorator<T> {
  return (prototype, method) => {
    const methods = decorated.get(prototype) ?? new Map<string | symbol, KnownEventType>();
    decorated.set(prototype, methods.set(method, type));
  };
}

/** The `@OnWebhook` methods of an app: as the handlers of `on`, and the method of each type by name, for the log. */
export interface WebhookMethods {
  readonly on: EventHandlers;
  /** `Class.method` by event type, in the order found. */
  readonly where: ReadonlyMap<KnownEventType, string>;
  /** The event types they handle, in the order found. */
  readonly types: readonly KnownEventType[];
}

/** The `@OnWebhook` methods of every provider, each handler calling its method on the provider's instance. */
export function handlersIn(discovery: DiscoveryService): WebhookMethods {
  const on: Record<string, EventHandler<never>> = {};
  const where = new Map<KnownEventType, string>();
  for (const wrapper of discovery.getProviders()) {
    const { metatype } = wrapper;
    // Class providers alone: a value or a factory's product has no decorated class to read.
    if (typeof metatype !== 'function' || wrapper.inject) continue;
    for (const [method, type] of methodsOf(metatype.prototype as object)) {
      const name = `${metatype.name}.${String(method)}`;
      if (where.has(type)) throw new WebhookOptionsError(`svc-webhooks: @OnWebhook('${type}') is on both ${where.get(type)} and ${name}: one method per event type`);
      if (wrapper.isTransient || !wrapper.isDependencyTreeStatic()) {
        throw new WebhookOptionsError(`svc-webhooks: @OnWebhook('${type}') is on ${name}, whose provider is request-scoped or transient: make it a singleton (the default scope)`);
      }
      where.set(type, name);
      // Its instance exists by the first request; looked up then, since providers are still being created now.
      on[type] = (event, delivery) => (wrapper.instance as Record<string | symbol, WebhookMethod<KnownEventType>>)[method]!(event, delivery);
    }
  }
  return { on: on as EventHandlers, where, types: [...where.keys()] };
}

/** The decorated methods of a class, its own and those it inherits. */
function methodsOf(prototype: object | null): Map<string | symbol, KnownEventType> {
  if (prototype === null) return new Map();
  return new Map([...methodsOf(Object.getPrototypeOf(prototype) as object | null), ...(decorated.get(prototype) ?? [])]);
}

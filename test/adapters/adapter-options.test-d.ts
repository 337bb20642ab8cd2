/**
 * Type tests of each adapter's options, run by `vitest --typecheck` (and by
 * `tsc` in `npm test`): the schemas are inferred from the options object, so
 * each handler receives exactly its event or its schema's output and a
 * misspelled key does not compile; and what runs for each delivery is said
 * exactly once: `on`, `handoff`, or the route (Express, Hono, Fastify's
 * `routes`) or a handler (Fetch, Lambda, Azure, h3), never two of them, and never the
 * options of `on` without it. Fastify takes `path` with `on` or `handoff`
 * and `routes` without them. NestJS's module runs its `@OnWebhook` methods,
 * with the options of `on`, or a `handoff`, without them. A
 * `@ts-expect-error` that stops erroring fails too.
 */
import { type } from 'arktype';
import type { HttpResponseInit, InvocationContext } from '@azure/functions';
import type { Context } from 'aws-lambda';
import type { FastifyInstance } from 'fastify';
import { getRouterParam, type H3Event } from 'h3';
import * as v from 'valibot';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { verifyWebhook as azureWebhook, type AzureWebhook } from '../../adapters/azure.js';
import { verifyWebhook as expressWebhook } from '../../adapters/express.js';
import { verifyWebhook as fastifyWebhook } from '../../adapters/fastify.js';
import { verifyWebhook as fetchWebhook, type FetchWebhook } from '../../adapters/fetch.js';
import { verifyWebhook as h3Webhook, type H3Webhook } from '../../adapters/h3.js';
import { verifyWebhook as honoWebhook } from '../../adapters/hono.js';
import { verifyWebhook as lambdaWebhook, type LambdaWebhook, type LambdaWebhookEvent } from '../../adapters/lambda.js';
import { WebhooksModule } from '../../adapters/nestjs.js';
import { MemoryDedupStore, type CallMissedEvent, type EventHandlers, type Handoff, type WebhookDelivery, type WebhookEvent } from '../../src/index.js';

const secret = 'whsec_c2VjcmV0';
const path = '/webhooks';
const callMissed = z.object({ type: z.literal('call.missed'), data: z.object({ object: z.object({ from: z.string() }) }) });
const message = v.object({ data: v.object({ object: v.object({ text: v.string() }) }) });
const transcript = type({ data: { object: { words: 'number' } } });
const schemas = { 'call.missed': callMissed, 'message.received': message, 'transcript.ready': transcript };
type CallMissedOutput = z.output<typeof callMissed>;

/** Handlers declared apart, typed by the schemas: each adapter must take them with those schemas. */
const on: EventHandlers<typeof schemas> = {
  'call.missed': (missed) => expectTypeOf(missed).toEqualTypeOf<CallMissedOutput>(),
  'message.received': (received) => expectTypeOf(received).toEqualTypeOf<v.InferOutput<typeof message>>(),
  'transcript.ready': (ready) => expectTypeOf(ready).toEqualTypeOf<typeof transcript.infer>(),
  'webhook.test': (test) => expectTypeOf(test.type).toEqualTypeOf<'webhook.test'>(),
};
const onMissed = (missed: CallMissedEvent, delivery: WebhookDelivery): void => {
  expectTypeOf(delivery.id).toEqualTypeOf<string>();
  expectTypeOf(delivery.dedupKey).toEqualTypeOf<string>();
  expectTypeOf(delivery.tenant).toEqualTypeOf<string | undefined>();
  expectTypeOf(missed.type).toEqualTypeOf<'call.missed'>();
};
const onAny = (event: WebhookEvent): string => event.type;
const handoff: Handoff = { hand: async (delivery) => void expectTypeOf(delivery).toEqualTypeOf<WebhookDelivery>() };

describe('express options with on', () => {
  it('infer the schemas, whatever the key order, and type each handler by them', () => {
    expressWebhook({ secret, on: { 'call.missed': (missed) => expectTypeOf(missed).toEqualTypeOf<CallMissedOutput>() }, schemas });
    expressWebhook({ secret, schemas, on });
    expressWebhook({ secret, on: { 'call.missed': onMissed }, onUnknownEvent: onAny, onHandlerError: (_error, event, delivery) => void [event.id, delivery.dedupKey] });
  });

  it('refuse a misspelled type, a handler of another type, an unknown policy', () => {
    // @ts-expect-error 'call.mised' is not a known event type
    expressWebhook({ secret, on: { 'call.mised': onMissed } });
    // @ts-expect-error a CallMissedEvent handler cannot handle message.received
    expressWebhook({ secret, on: { 'message.received': onMissed } });
    // @ts-expect-error the schema's output is no CallMissedEvent
    expressWebhook({ secret, on: { 'call.missed': onMissed }, schemas: { 'call.missed': z.object({ id: z.number() }) } });
    // @ts-expect-error only 'accept' or 'reject'
    expressWebhook({ secret, on: {}, unknownEvents: 'ignore' });
    // @ts-expect-error onUnknownEvent takes a handler, not a policy
    expressWebhook({ secret, on: {}, onUnknownEvent: 'accept' });
  });
});

describe('hono options with on', () => {
  it('infer the schemas, whatever the key order, and type each handler by them', () => {
    honoWebhook({ schemas, secret, on: { 'call.missed': (missed) => expectTypeOf(missed.data.object.from).toEqualTypeOf<string>() } });
    honoWebhook({ on, schemas, secret });
    honoWebhook({ on: { 'call.missed': onMissed }, secret, unknownEvents: 'reject' });
  });

  it('refuse a misspelled type, a handler of another type, a schema for an unknown type', () => {
    // @ts-expect-error 'call.answered' is not a known event type: it goes to onUnknownEvent
    honoWebhook({ secret, on: { 'call.answered': onMissed } });
    // @ts-expect-error a CallMissedEvent handler cannot handle transcript.ready
    honoWebhook({ secret, on: { 'transcript.ready': onMissed } });
    // @ts-expect-error schemas are keyed by known event types only
    honoWebhook({ secret, on, schemas: { ...schemas, 'call.mised': callMissed } });
  });
});

describe('fastify options with path and on', () => {
  it('infer the schemas, whatever the key order, and type each handler by them', () => {
    fastifyWebhook({ secret, path, schemas, on: { 'call.missed': (missed) => expectTypeOf(missed).toEqualTypeOf<CallMissedOutput>() } });
    fastifyWebhook({ schemas, on, path, secret });
    fastifyWebhook({ path, on: { 'call.missed': onMissed }, secret, onUnknownEvent: onAny });
  });

  it('refuse a misspelled type and a handler of another type', () => {
    // @ts-expect-error 'call.mised' is not a known event type
    fastifyWebhook({ secret, path, on: { 'call.mised': onMissed } });
    // @ts-expect-error a CallMissedEvent handler cannot handle ai_summary.ready
    fastifyWebhook({ secret, path, on: { 'ai_summary.ready': onMissed } });
  });

  it('take routes without on or handoff, path only with one of them, and never both', () => {
    const routes = (webhooks: FastifyInstance): void => void webhooks;
    fastifyWebhook({ secret, routes });
    fastifyWebhook({ secret, path, on });
    fastifyWebhook({ secret, path, handoff, onHandlerError: (_error, event, delivery) => void [event.type, delivery.id] });
    // @ts-expect-error with on, the plugin answers at path: routes would never run
    fastifyWebhook({ secret, routes, on });
    // @ts-expect-error with handoff, the plugin answers at path: routes would never run
    fastifyWebhook({ secret, routes, handoff });
    // @ts-expect-error path needs on or handoff
    fastifyWebhook({ secret, path });
    // @ts-expect-error routes or path, not both
    fastifyWebhook({ secret, routes, path, on });
    // @ts-expect-error routes or path, not both, with handoff too
    fastifyWebhook({ secret, routes, path, handoff });
    // @ts-expect-error routes or path, not both, nor with nothing to run at path
    fastifyWebhook({ secret, routes, path });
    // @ts-expect-error one of them is required
    fastifyWebhook({ secret, on });
    // @ts-expect-error one of them is required, with handoff too
    fastifyWebhook({ secret, handoff });
    // @ts-expect-error the handler options take effect only with on
    fastifyWebhook({ secret, routes, schemas });
    // @ts-expect-error onHandlerError takes effect only with on or handoff: routes answer for themselves
    fastifyWebhook({ secret, routes, onHandlerError: () => undefined });
  });

  it('refuse on together with handoff at path', () => {
    // @ts-expect-error on or handoff, not both
    fastifyWebhook({ secret, path, on, handoff });
    // @ts-expect-error the options of on take effect only with on, not with handoff
    fastifyWebhook({ secret, path, handoff, schemas });
  });
});

describe('fetch options with on', () => {
  it('infer the schemas, whatever the key order, and type each handler by them', () => {
    fetchWebhook({ secret, on: { 'call.missed': (missed) => expectTypeOf(missed).toEqualTypeOf<CallMissedOutput>() }, schemas });
    expectTypeOf(fetchWebhook({ schemas, secret, on })).toEqualTypeOf<FetchWebhook>();
    fetchWebhook({ secret, on: { 'call.missed': onMissed }, onUnknownEvent: onAny, onHandlerError: (_error, event, { id }) => void [event.type, id] });
  });

  it('refuse a misspelled type, a handler of another type, a schema whose output the handler cannot take', () => {
    // @ts-expect-error 'call.mised' is not a known event type
    fetchWebhook({ secret, on: { 'call.mised': onMissed } });
    // @ts-expect-error a CallMissedEvent handler cannot handle message.received
    fetchWebhook({ secret, on: { 'message.received': onMissed } });
    // @ts-expect-error the schema's output is no CallMissedEvent
    fetchWebhook({ secret, on: { 'call.missed': onMissed }, schemas: { 'call.missed': z.object({ id: z.number() }) } });
  });

  it('take a handler without on, with onHandlerError of the same signature, and never both or neither', () => {
    const handler = (event: WebhookEvent, { request }: { request: Request }): Response => Response.json({ type: event.type, url: request.url });
    fetchWebhook({ secret, onHandlerError: (_error, event, { id }) => void [event.type, id] }, handler);
    // @ts-expect-error on and a handler: one of them answers
    fetchWebhook({ secret, on }, handler);
    // @ts-expect-error neither on nor a handler
    fetchWebhook({ secret });
    // @ts-expect-error schemas take effect only with on
    fetchWebhook({ secret, schemas }, handler);
    // @ts-expect-error unknownEvents takes effect only with on
    fetchWebhook({ secret, unknownEvents: 'reject' }, handler);
    // @ts-expect-error onUnknownEvent takes effect only with on
    fetchWebhook({ secret, onUnknownEvent: onAny }, handler);
    // @ts-expect-error the handler answers a Response or nothing
    fetchWebhook({ secret }, () => ({ statusCode: 204 }));
  });
});

describe('lambda options with on', () => {
  it('infer the schemas, whatever the key order, and type each handler by them', () => {
    lambdaWebhook({ on: { 'call.missed': (missed) => expectTypeOf(missed.data.object.from).toEqualTypeOf<string>() }, secret, schemas });
    expectTypeOf(lambdaWebhook({ secret, schemas, on })).toEqualTypeOf<LambdaWebhook>();
    lambdaWebhook({ secret, on: { 'call.missed': onMissed }, unknownEvents: 'reject' });
  });

  it("give each handler the Lambda event and context beside the delivery, as the single handler's", () => {
    lambdaWebhook({ secret, on: { 'call.missed': (_missed, { context }) => expectTypeOf(context).toEqualTypeOf<Context>() } });
    lambdaWebhook({ secret, on: { 'call.missed': (_missed, { request }) => expectTypeOf(request).toEqualTypeOf<LambdaWebhookEvent>() } });
    azureWebhook({ secret, on: { 'call.missed': (_missed, { context }) => expectTypeOf(context).toEqualTypeOf<InvocationContext>() } });
    fetchWebhook({ secret, on: { 'call.missed': (_missed, { context }) => expectTypeOf(context).toEqualTypeOf<readonly unknown[]>() } });
    h3Webhook({ secret, on: { 'call.missed': (_missed, { request }) => expectTypeOf(request).toEqualTypeOf<H3Event>() } });
  });

  it('refuse a misspelled type, a handler of another type, a schema for an unknown type', () => {
    // @ts-expect-error 'call.answered' is not a known event type: it goes to onUnknownEvent
    lambdaWebhook({ secret, on: { 'call.answered': onMissed } });
    // @ts-expect-error a CallMissedEvent handler cannot handle transcript.ready
    lambdaWebhook({ secret, on: { 'transcript.ready': onMissed } });
    // @ts-expect-error schemas are keyed by known event types only
    lambdaWebhook({ secret, on, schemas: { ...schemas, 'call.mised': callMissed } });
  });

  it('take a handler without on, and never both or neither', () => {
    lambdaWebhook({ secret, onHandlerError: (_error, event, { id }) => void [event.type, id] }, () => ({ statusCode: 202, body: '' }));
    // @ts-expect-error on and a handler: one of them answers
    lambdaWebhook({ secret, on }, () => undefined);
    // @ts-expect-error neither on nor a handler
    lambdaWebhook({ secret });
    // @ts-expect-error schemas take effect only with on
    lambdaWebhook({ secret, schemas }, () => undefined);
    // @ts-expect-error the handler answers { statusCode, ... } or nothing
    lambdaWebhook({ secret }, () => new Response(null));
  });
});

describe('express options: what runs is said once', () => {
  it('take on, handoff, or neither for the route', () => {
    expressWebhook({ secret, on });
    expressWebhook({ secret, handoff, onHandlerError: (_error, event, delivery) => void [event.type, delivery.id] });
    expressWebhook({ secret });
  });

  it('refuse on with handoff, the options of on without it, and onHandlerError for the route', () => {
    // @ts-expect-error on or handoff, not both
    expressWebhook({ secret, on, handoff });
    // @ts-expect-error schemas take effect only with on
    expressWebhook({ secret, schemas });
    // @ts-expect-error unknownEvents takes effect only with on
    expressWebhook({ secret, unknownEvents: 'reject' });
    // @ts-expect-error onUnknownEvent takes effect only with on
    expressWebhook({ secret, onUnknownEvent: onAny });
    // @ts-expect-error schemas take effect only with on, not with handoff
    expressWebhook({ secret, handoff, schemas });
    // @ts-expect-error onHandlerError takes effect only with on or handoff: the route answers for itself
    expressWebhook({ secret, onHandlerError: () => undefined });
  });
});

describe('hono options: what runs is said once', () => {
  it('take on, handoff, or neither for the route', () => {
    honoWebhook({ secret, on });
    honoWebhook({ secret, handoff, onHandlerError: (_error, event, delivery) => void [event.type, delivery.id] });
    honoWebhook({ secret });
  });

  it('refuse on with handoff, the options of on without it, and onHandlerError for the route', () => {
    // @ts-expect-error on or handoff, not both
    honoWebhook({ secret, on, handoff });
    // @ts-expect-error schemas take effect only with on
    honoWebhook({ secret, schemas });
    // @ts-expect-error unknownEvents takes effect only with on
    honoWebhook({ secret, unknownEvents: 'accept' });
    // @ts-expect-error onUnknownEvent takes effect only with on
    honoWebhook({ secret, onUnknownEvent: onAny });
    // @ts-expect-error unknownEvents takes effect only with on, not with handoff
    honoWebhook({ secret, handoff, unknownEvents: 'reject' });
    // @ts-expect-error onHandlerError takes effect only with on or handoff: the route answers for itself
    honoWebhook({ secret, onHandlerError: () => undefined });
  });
});

describe('fetch options: what runs is said once', () => {
  it('take on, handoff, or a handler', () => {
    expectTypeOf(fetchWebhook({ secret, on })).toEqualTypeOf<FetchWebhook>();
    expectTypeOf(fetchWebhook({ secret, handoff, onHandlerError: (_error, event, delivery) => void [event.type, delivery.id] })).toEqualTypeOf<FetchWebhook>();
    expectTypeOf(
      fetchWebhook({ secret }, (event, context) => {
        expectTypeOf(context.dedupKey).toEqualTypeOf<string>();
        expectTypeOf(context.request).toEqualTypeOf<Request>();
        return Response.json({ type: event.type });
      }),
    ).toEqualTypeOf<FetchWebhook>();
  });

  it('refuse two of them, or none', () => {
    // @ts-expect-error on or handoff, not both
    fetchWebhook({ secret, on, handoff });
    // @ts-expect-error on and a handler: one of them answers
    fetchWebhook({ secret, on }, () => undefined);
    // @ts-expect-error handoff and a handler: one of them answers
    fetchWebhook({ secret, handoff }, () => undefined);
    // @ts-expect-error all three
    fetchWebhook({ secret, on, handoff }, () => undefined);
    // @ts-expect-error neither on nor handoff nor a handler
    fetchWebhook({ secret });
    // @ts-expect-error schemas take effect only with on, not with handoff
    fetchWebhook({ secret, handoff, schemas });
  });
});

describe('lambda options: what runs is said once', () => {
  it('take on, handoff, or a handler', () => {
    expectTypeOf(lambdaWebhook({ secret, on })).toEqualTypeOf<LambdaWebhook>();
    expectTypeOf(lambdaWebhook({ secret, handoff, onHandlerError: (_error, event, delivery) => void [event.type, delivery.id] })).toEqualTypeOf<LambdaWebhook>();
    expectTypeOf(
      lambdaWebhook({ secret }, (event, context) => {
        expectTypeOf(context.dedupKey).toEqualTypeOf<string>();
        expectTypeOf(context.context.awsRequestId).toEqualTypeOf<string>();
        return { statusCode: 200, body: event.type };
      }),
    ).toEqualTypeOf<LambdaWebhook>();
  });

  it('refuse two of them, or none', () => {
    // @ts-expect-error on or handoff, not both
    lambdaWebhook({ secret, on, handoff });
    // @ts-expect-error on and a handler: one of them answers
    lambdaWebhook({ secret, on }, () => undefined);
    // @ts-expect-error handoff and a handler: one of them answers
    lambdaWebhook({ secret, handoff }, () => undefined);
    // @ts-expect-error all three
    lambdaWebhook({ secret, on, handoff }, () => undefined);
    // @ts-expect-error neither on nor handoff nor a handler
    lambdaWebhook({ secret });
    // @ts-expect-error unknownEvents takes effect only with on
    lambdaWebhook({ secret, unknownEvents: 'reject' }, () => undefined);
    // @ts-expect-error onUnknownEvent takes effect only with on, not with handoff
    lambdaWebhook({ secret, handoff, onUnknownEvent: onAny });
  });
});

describe('azure options: what runs is said once', () => {
  it('take on, handoff, or a handler', () => {
    expectTypeOf(azureWebhook({ secret, on })).toEqualTypeOf<AzureWebhook>();
    expectTypeOf(azureWebhook({ secret, handoff })).toEqualTypeOf<AzureWebhook>();
    expectTypeOf(
      azureWebhook({ tenants: { of: (request) => request.params.tenant, secret: () => secret } }, (event, context): HttpResponseInit => {
        expectTypeOf(context.context.invocationId).toEqualTypeOf<string>();
        return { status: 200, body: event.type };
      }),
    ).toEqualTypeOf<AzureWebhook>();
  });

  it('refuse two of them, or none', () => {
    // @ts-expect-error on or handoff, not both
    azureWebhook({ secret, on, handoff });
    // @ts-expect-error on and a handler: one of them answers
    azureWebhook({ secret, on }, () => undefined);
    // @ts-expect-error handoff and a handler: one of them answers
    azureWebhook({ secret, handoff }, () => undefined);
    // @ts-expect-error neither on nor handoff nor a handler
    azureWebhook({ secret });
    // @ts-expect-error schemas take effect only with on
    azureWebhook({ secret, schemas }, () => undefined);
  });
});

describe('h3 options: what runs is said once', () => {
  it('take on, handoff, or a handler, with the tenant read by h3\'s own helpers', () => {
    h3Webhook({ secret, on: { 'call.missed': (missed) => expectTypeOf(missed).toEqualTypeOf<CallMissedOutput>() }, schemas });
    expectTypeOf(h3Webhook({ secret, on })).toEqualTypeOf<H3Webhook>();
    expectTypeOf(h3Webhook({ secret, handoff })).toEqualTypeOf<H3Webhook>();
    expectTypeOf(
      h3Webhook({ tenants: { of: (event) => getRouterParam(event, 'tenant'), secret: () => secret }}, (event, context) => {
        expectTypeOf(context.request).toEqualTypeOf<H3Event>();
        expectTypeOf(context.request.context.webhook).toEqualTypeOf<WebhookDelivery | undefined>();
        return Response.json({ type: event.type });
      }),
    ).toEqualTypeOf<H3Webhook>();
  });

  it('refuse two of them, or none, and an answer that is no Response', () => {
    // @ts-expect-error 'call.mised' is not a known event type
    h3Webhook({ secret, on: { 'call.mised': onMissed } });
    // @ts-expect-error on or handoff, not both
    h3Webhook({ secret, on, handoff });
    // @ts-expect-error on and a handler: one of them answers
    h3Webhook({ secret, on }, () => undefined);
    // @ts-expect-error handoff and a handler: one of them answers
    h3Webhook({ secret, handoff }, () => undefined);
    // @ts-expect-error neither on nor handoff nor a handler
    h3Webhook({ secret });
    // @ts-expect-error unknownEvents takes effect only with on
    h3Webhook({ secret, unknownEvents: 'reject' }, () => undefined);
    // @ts-expect-error the handler answers a Response or nothing
    h3Webhook({ secret }, () => ({ ok: true }));
  });
});

describe('where the secrets come from, and dedup', () => {
  const store = new MemoryDedupStore();
  const tenantSecret = (tenant: string): string | undefined => (tenant === 'acme' ? secret : undefined);

  it('take exactly one of secret and tenants', () => {
    expressWebhook({ secret, on });
    expressWebhook({ tenants: { of: (req) => req.params.tenant, secret: tenantSecret }, on });
    // @ts-expect-error a secret beside tenants: each tenant's secret comes from tenants.secret
    expressWebhook({ secret, tenants: { of: (req) => req.params.tenant, secret: tenantSecret }, on });
    // @ts-expect-error neither a secret nor tenants
    expressWebhook({ on });
    // @ts-expect-error a secret looked up per tenant is tenants.secret
    fetchWebhook({ secret: tenantSecret, on });
    // @ts-expect-error the tenant is read by tenants.of
    honoWebhook({ secret, tenant: (c: unknown) => c, on });
  });

  it('type tenants.of by the entry\'s own request', () => {
    expressWebhook({ tenants: { of: (req) => req.get('x-tenant'), secret: tenantSecret }, on });
    fetchWebhook({ tenants: { of: (request) => expectTypeOf(request).toEqualTypeOf<Request>(), secret: tenantSecret }, on });
    honoWebhook({ tenants: { of: (c) => c.req.param('tenant'), secret: tenantSecret }, on });
    h3Webhook({ tenants: { of: (event) => expectTypeOf(event).toEqualTypeOf<H3Event>(), secret: tenantSecret }, on });
    fastifyWebhook({ path, tenants: { of: (request) => expectTypeOf(request.params).toEqualTypeOf<unknown>(), secret: tenantSecret }, on });
    // @ts-expect-error a Fetch Request has no params
    fetchWebhook({ tenants: { of: (request) => request.params, secret: tenantSecret }, on });
  });

  it('take dedup: false alone, or dedup options with or without a store, and refuse a store in their place', () => {
    expressWebhook({ secret, dedup: false, on });
    expressWebhook({ secret, dedup: { store }, on });
    expressWebhook({ secret, dedup: { leaseMs: 30_000, whenUnavailable: 'process', onError: (_error, context) => void context.key }, on });
    // @ts-expect-error the store goes under dedup: { store }
    expressWebhook({ secret, dedup: store, on });
    // @ts-expect-error dedup: true means nothing
    expressWebhook({ secret, dedup: true, on });
    // @ts-expect-error the lease goes under dedup
    expressWebhook({ secret, leaseMs: 30_000, on });
    // @ts-expect-error only 'reject' or 'process'
    expressWebhook({ secret, dedup: { whenUnavailable: 'ignore' }, on });
  });
});

describe('nestjs options: what runs is said once', () => {
  it('take the options of on for the @OnWebhook methods, or handoff, directly or from a factory', () => {
    WebhooksModule.forRoot({ secret, schemas, unknownEvents: 'reject', onUnknownEvent: onAny, onHandlerError: () => undefined });
    WebhooksModule.forRoot({ secret, handoff, onHandlerError: () => undefined, path });
    WebhooksModule.forRoot({ tenants: { secret: () => secret }, handoff });
    WebhooksModule.forRootAsync({ useFactory: () => ({ secret, handoff }) });
  });

  it('refuse the options of on beside handoff, and on itself', () => {
    // @ts-expect-error unknownEvents takes effect only with the @OnWebhook methods, not with handoff
    WebhooksModule.forRoot({ secret, handoff, unknownEvents: 'reject' });
    // @ts-expect-error schemas check the events of the @OnWebhook methods, not a handoff's
    WebhooksModule.forRoot({ secret, handoff, schemas });
    // @ts-expect-error onUnknownEvent takes effect only with the @OnWebhook methods
    WebhooksModule.forRootAsync({ useFactory: () => ({ secret, handoff, onUnknownEvent: onAny }) });
    // @ts-expect-error the @OnWebhook methods are the handlers: no on
    WebhooksModule.forRoot({ secret, on });
  });

  it('take one secret or tenants, the tenant read from the route', () => {
    // @ts-expect-error a secret and tenants
    WebhooksModule.forRoot({ secret, tenants: { secret: () => secret }, handoff });
    // @ts-expect-error the module reads the tenant from its route: no tenants.of
    WebhooksModule.forRoot({ tenants: { of: () => 'acme', secret: () => secret }, handoff });
  });
});

/**
 * Type tests of `on` in each adapter's options, run by `vitest --typecheck`
 * (and by `tsc` in `npm test`): the schemas are inferred from the options
 * object, so each handler receives exactly its event or its schema's output
 * and a misspelled key does not compile; Fastify takes `path` with `on` and
 * `routes` without it; the Fetch and Lambda entries take `on` or a handler,
 * never both. A `@ts-expect-error` that stops erroring fails too.
 */
import { type } from 'arktype';
import type { FastifyInstance } from 'fastify';
import * as v from 'valibot';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { verifyWebhook as expressWebhook } from '../../adapters/express.js';
import { verifyWebhook as fastifyWebhook } from '../../adapters/fastify.js';
import { verifyWebhook as fetchWebhook, type FetchWebhook } from '../../adapters/fetch.js';
import { verifyWebhook as honoWebhook } from '../../adapters/hono.js';
import { verifyWebhook as lambdaWebhook, type LambdaWebhook } from '../../adapters/lambda.js';
import type { CallMissedEvent, EventHandlers, HandlerContext, WebhookEvent } from '../../src/index.js';

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
const onMissed = (missed: CallMissedEvent, context: HandlerContext): void => {
  expectTypeOf(context.id).toEqualTypeOf<string>();
  expectTypeOf(missed.type).toEqualTypeOf<'call.missed'>();
};
const onAny = (event: WebhookEvent): string => event.type;

describe('express options with on', () => {
  it('infer the schemas, whatever the key order, and type each handler by them', () => {
    expressWebhook({ secret, on: { 'call.missed': (missed) => expectTypeOf(missed).toEqualTypeOf<CallMissedOutput>() }, schemas });
    expressWebhook({ secret, schemas, on });
    expressWebhook({ secret, on: { 'call.missed': onMissed }, onUnknown: onAny, onHandlerError: (_error, event) => void event.id });
  });

  it('refuse a misspelled type, a handler of another type, an unknown policy', () => {
    // @ts-expect-error 'call.mised' is not a known event type
    expressWebhook({ secret, on: { 'call.mised': onMissed } });
    // @ts-expect-error a CallMissedEvent handler cannot handle message.received
    expressWebhook({ secret, on: { 'message.received': onMissed } });
    // @ts-expect-error the schema's output is no CallMissedEvent
    expressWebhook({ secret, on: { 'call.missed': onMissed }, schemas: { 'call.missed': z.object({ id: z.number() }) } });
    // @ts-expect-error only 'accept', 'reject' or a function
    expressWebhook({ secret, on: {}, onUnknown: 'ignore' });
  });
});

describe('hono options with on', () => {
  it('infer the schemas, whatever the key order, and type each handler by them', () => {
    honoWebhook({ schemas, secret, on: { 'call.missed': (missed) => expectTypeOf(missed.data.object.from).toEqualTypeOf<string>() } });
    honoWebhook({ on, schemas, secret });
    honoWebhook({ on: { 'call.missed': onMissed }, secret, onUnknown: 'reject' });
  });

  it('refuse a misspelled type, a handler of another type, a schema for an unknown type', () => {
    // @ts-expect-error 'call.answered' is not a known event type: it goes to onUnknown
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
    fastifyWebhook({ path, on: { 'call.missed': onMissed }, secret, onUnknown: onAny });
  });

  it('refuse a misspelled type and a handler of another type', () => {
    // @ts-expect-error 'call.mised' is not a known event type
    fastifyWebhook({ secret, path, on: { 'call.mised': onMissed } });
    // @ts-expect-error a CallMissedEvent handler cannot handle ai_summary.ready
    fastifyWebhook({ secret, path, on: { 'ai_summary.ready': onMissed } });
  });

  it('take routes without on, path only with on, and never both', () => {
    const routes = (webhooks: FastifyInstance): void => void webhooks;
    fastifyWebhook({ secret, routes });
    // @ts-expect-error with on, the plugin answers at path: routes would never run
    fastifyWebhook({ secret, routes, on });
    // @ts-expect-error path needs on
    fastifyWebhook({ secret, path });
    // @ts-expect-error routes or path, not both
    fastifyWebhook({ secret, routes, path, on });
    // @ts-expect-error one of them is required
    fastifyWebhook({ secret, on });
    // @ts-expect-error the handler options take effect only with on
    fastifyWebhook({ secret, routes, schemas });
  });
});

describe('fetch options with on', () => {
  it('infer the schemas, whatever the key order, and type each handler by them', () => {
    fetchWebhook({ secret, on: { 'call.missed': (missed) => expectTypeOf(missed).toEqualTypeOf<CallMissedOutput>() }, schemas });
    expectTypeOf(fetchWebhook({ schemas, secret, on })).toEqualTypeOf<FetchWebhook>();
    fetchWebhook({ secret, on: { 'call.missed': onMissed }, onUnknown: onAny, onHandlerError: (_error, event, { id }) => void [event.type, id] });
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
    // @ts-expect-error onUnknown takes effect only with on
    fetchWebhook({ secret, onUnknown: 'reject' }, handler);
    // @ts-expect-error the handler answers a Response or nothing
    fetchWebhook({ secret }, () => ({ statusCode: 204 }));
  });
});

describe('lambda options with on', () => {
  it('infer the schemas, whatever the key order, and type each handler by them', () => {
    lambdaWebhook({ on: { 'call.missed': (missed) => expectTypeOf(missed.data.object.from).toEqualTypeOf<string>() }, secret, schemas });
    expectTypeOf(lambdaWebhook({ secret, schemas, on })).toEqualTypeOf<LambdaWebhook>();
    lambdaWebhook({ secret, on: { 'call.missed': onMissed }, onUnknown: 'reject' });
  });

  it('refuse a misspelled type, a handler of another type, a schema for an unknown type', () => {
    // @ts-expect-error 'call.answered' is not a known event type: it goes to onUnknown
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

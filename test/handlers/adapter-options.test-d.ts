/**
 * Type tests of `on` in each adapter's options, run by `vitest --typecheck`
 * (and by `tsc` in `npm test`): the schemas are inferred from the options
 * object, so each handler receives exactly its event or its schema's output
 * and a misspelled key does not compile; Fastify takes `path` with `on` and
 * `routes` without it. A `@ts-expect-error` that stops erroring fails too.
 */
import { type } from 'arktype';
import type { FastifyInstance } from 'fastify';
import * as v from 'valibot';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { verifyWebhook as expressWebhook } from '../../adapters/express.js';
import { verifyWebhook as fastifyWebhook } from '../../adapters/fastify.js';
import { verifyWebhook as honoWebhook } from '../../adapters/hono.js';
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

/**
 * Type tests, run by `vitest --typecheck` (and by `tsc` in `npm test`): the
 * keys of `on` are the known event types, each handler receives its own
 * event or its schema's output, and `onUnknownEvent` receives
 * UnknownWebhookEvent; every handler gets the WebhookDelivery.
 * A `@ts-expect-error` that stops erroring fails too.
 */
import { type } from 'arktype';
import * as v from 'valibot';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  dispatch,
  type CallMissedEvent,
  type DispatchResult,
  type EventHandlers,
  type EventSchemas,
  type MiddlewareMode,
  type KnownEventMap,
  type KnownEventType,
  type MessageReceivedEvent,
  type ReceiverOptions,
  type SingleEndpoint,
  type StandardSchema,
  type UnknownWebhookEvent,
  type WebhookDelivery,
  type WebhookEvent,
} from '../../src/index.js';

declare const delivery: WebhookDelivery;

/** The shape a middleware's factory takes: receiver options and what runs in one object, `S` inferred. */
declare function adapter<S extends EventSchemas = {}>(options: ReceiverOptions & SingleEndpoint & MiddlewareMode<S>): void;

const zodCallMissed = z.object({
  id: z.string(),
  type: z.literal('call.missed'),
  data: z.object({ object: z.object({ id: z.string(), from: z.string() }) }),
});
const valibotMessage = v.object({
  id: v.string(),
  type: v.literal('message.received'),
  data: v.object({ object: v.object({ id: v.string(), text: v.string() }) }),
});
const arktypeTranscript = type({ id: 'string', type: "'transcript.ready'", data: { object: { id: 'string', words: 'number' } } });

describe('on', () => {
  it('gives the call.missed handler a CallMissedEvent and the delivery', () => {
    void dispatch(delivery, {
      on: {
        'call.missed': async (missed, context) => {
          expectTypeOf(missed).toEqualTypeOf<CallMissedEvent>();
          expectTypeOf(context).toEqualTypeOf<WebhookDelivery>();
          expectTypeOf(context.dedupKey).toEqualTypeOf<string>();
          expectTypeOf(context.tenant).toEqualTypeOf<string | undefined>();
        },
      },
    });
  });

  it('gives every known type its own event', () => {
    expectTypeOf<Parameters<NonNullable<EventHandlers['message.received']>>[0]>().toEqualTypeOf<MessageReceivedEvent>();
    type Received<T extends KnownEventType> = Parameters<NonNullable<EventHandlers[T]>>[0];
    expectTypeOf<{ [T in KnownEventType]: Received<T> }>().toEqualTypeOf<{ [T in KnownEventType]: KnownEventMap[T] }>();
  });

  it('refuses a misspelled or unknown type as a key', () => {
    // @ts-expect-error 'call.mised' is not a known event type
    void dispatch(delivery, { on: { 'call.mised': async () => {} } });
    // @ts-expect-error unknown types go to onUnknownEvent, not on
    adapter({ secret: 'whsec_c2VjcmV0', on: { 'call.answered': () => {} } });
  });

  it('refuses a handler written for another type', () => {
    const onMessage = (message: MessageReceivedEvent): string => message.data.object.id;
    // @ts-expect-error a MessageReceivedEvent handler cannot handle call.missed
    void dispatch(delivery, { on: { 'call.missed': onMessage } });
    // @ts-expect-error a handler must be a function
    void dispatch(delivery, { on: { 'call.missed': 'queue' } });
  });

  it('accepts a handler that takes any event, since every event is one', () => {
    const anyEvent = (any: WebhookEvent): string => any.type;
    void dispatch(delivery, { on: { 'call.missed': anyEvent, 'webhook.test': anyEvent } });
  });

  it('types a handlers object declared apart', () => {
    const on: EventHandlers = {
      'ai_summary.ready': (summary) => expectTypeOf(summary.type).toEqualTypeOf<'ai_summary.ready'>(),
    };
    void dispatch(delivery, { on });
  });
});

describe('unknown types', () => {
  it('gives onUnknownEvent an UnknownWebhookEvent and the delivery', () => {
    void dispatch(delivery, {
      on: {},
      onUnknownEvent: (unknown, context) => {
        expectTypeOf(unknown).toEqualTypeOf<UnknownWebhookEvent>();
        expectTypeOf(context).toEqualTypeOf<WebhookDelivery>();
      },
    });
  });

  it("takes the policy 'accept' or 'reject' as unknownEvents, and nothing else", () => {
    void dispatch(delivery, { on: {}, unknownEvents: 'accept' });
    void dispatch(delivery, { on: {}, unknownEvents: 'reject' });
    // @ts-expect-error only 'accept' or 'reject'
    void dispatch(delivery, { on: {}, unknownEvents: 'ignore' });
    // @ts-expect-error a policy is no handler: a handler goes to onUnknownEvent
    void dispatch(delivery, { on: {}, unknownEvents: () => {} });
  });
});

describe('schemas', () => {
  it("gives each handler its schema's output: zod, valibot and arktype", () => {
    void dispatch(delivery, {
      on: {
        'call.missed': (missed) => expectTypeOf(missed).toEqualTypeOf<z.output<typeof zodCallMissed>>(),
        'message.received': (message) => expectTypeOf(message).toEqualTypeOf<v.InferOutput<typeof valibotMessage>>(),
        'transcript.ready': (transcript) => expectTypeOf(transcript).toEqualTypeOf<typeof arktypeTranscript.infer>(),
        'webhook.test': (test) => expectTypeOf(test).toEqualTypeOf<KnownEventMap['webhook.test']>(),
      },
      schemas: { 'call.missed': zodCallMissed, 'message.received': valibotMessage, 'transcript.ready': arktypeTranscript },
    });
  });

  it('infers the schemas inside an adapter-shaped options object, whatever the key order', () => {
    adapter({
      secret: 'whsec_c2VjcmV0',
      on: { 'call.missed': (missed) => expectTypeOf(missed.data.object.from).toEqualTypeOf<string>() },
      schemas: { 'call.missed': zodCallMissed },
      onHandlerError: (error, failed, context) => {
        expectTypeOf(error).toEqualTypeOf<unknown>();
        expectTypeOf(failed).toEqualTypeOf<WebhookEvent>();
        expectTypeOf(context).toEqualTypeOf<WebhookDelivery>();
      },
    });
    adapter({
      secret: 'whsec_c2VjcmV0',
      schemas: { 'transcript.ready': arktypeTranscript },
      on: { 'transcript.ready': (transcript) => expectTypeOf(transcript.data.object.words).toEqualTypeOf<number>() },
    });
  });

  it('refuses a schema for an unknown type, and a value that is no Standard Schema', () => {
    // @ts-expect-error schemas are keyed by known event types only
    void dispatch(delivery, { on: {}, schemas: { 'call.mised': zodCallMissed } });
    // @ts-expect-error a schema needs ~standard
    void dispatch(delivery, { on: {}, schemas: { 'call.missed': { parse: (value: unknown) => value } } });
  });

  it('takes the three libraries as Standard Schemas', () => {
    expectTypeOf(zodCallMissed).toExtend<StandardSchema>();
    expectTypeOf(valibotMessage).toExtend<StandardSchema>();
    expectTypeOf(arktypeTranscript).toExtend<StandardSchema>();
  });
});

describe('dispatch', () => {
  it('resolves to the answer', () => {
    expectTypeOf(dispatch(delivery, { on: {} })).toEqualTypeOf<Promise<DispatchResult>>();
    // @ts-expect-error dispatch takes the delivery (from verifyDelivery), not the event alone
    void dispatch(delivery.event, { on: {} });
    // @ts-expect-error on is required
    void dispatch(delivery, {});
  });
});

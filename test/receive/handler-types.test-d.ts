/**
 * Type tests, run by `vitest --typecheck` (and by `tsc` in `npm test`): the
 * keys of `on` are the known event types, each handler receives its own
 * event or its schema's output, and `onUnknown` receives UnknownWebhookEvent.
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
  type HandlerContext,
  type HandlerOptions,
  type KnownEventMap,
  type KnownEventType,
  type MessageReceivedEvent,
  type ReceiverOptions,
  type StandardSchema,
  type UnknownWebhookEvent,
  type WebhookEvent,
} from '../../src/index.js';

declare const event: WebhookEvent;

/** The shape an adapter's factory takes: receiver options and handler options in one object, `S` inferred. */
declare function adapter<S extends EventSchemas = {}>(options: ReceiverOptions & HandlerOptions<S>): void;

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
  it('gives the call.missed handler a CallMissedEvent and the context', () => {
    void dispatch(event, {
      'call.missed': async (missed, context) => {
        expectTypeOf(missed).toEqualTypeOf<CallMissedEvent>();
        expectTypeOf(context).toEqualTypeOf<HandlerContext>();
        expectTypeOf(context.id).toEqualTypeOf<string>();
      },
    });
  });

  it('gives every known type its own event', () => {
    expectTypeOf<Parameters<NonNullable<EventHandlers['message.received']>>[0]>().toEqualTypeOf<MessageReceivedEvent>();
    type Received<T extends KnownEventType> = Parameters<NonNullable<EventHandlers[T]>>[0];
    expectTypeOf<{ [T in KnownEventType]: Received<T> }>().toEqualTypeOf<KnownEventMap>();
  });

  it('refuses a misspelled or unknown type as a key', () => {
    // @ts-expect-error 'call.mised' is not a known event type
    void dispatch(event, { 'call.mised': async () => {} });
    // @ts-expect-error unknown types go to onUnknown, not on
    adapter({ secret: 'whsec_c2VjcmV0', on: { 'call.answered': () => {} } });
  });

  it('refuses a handler written for another type', () => {
    const onMessage = (message: MessageReceivedEvent): string => message.data.object.id;
    // @ts-expect-error a MessageReceivedEvent handler cannot handle call.missed
    void dispatch(event, { 'call.missed': onMessage });
    // @ts-expect-error a handler must be a function
    void dispatch(event, { 'call.missed': 'queue' });
  });

  it('accepts a handler that takes any event, since every event is one', () => {
    const anyEvent = (any: WebhookEvent): string => any.type;
    void dispatch(event, { 'call.missed': anyEvent, 'webhook.test': anyEvent });
  });

  it('types a handlers object declared apart', () => {
    const on: EventHandlers = {
      'ai_summary.ready': (summary) => expectTypeOf(summary.type).toEqualTypeOf<'ai_summary.ready'>(),
    };
    void dispatch(event, on);
  });
});

describe('onUnknown', () => {
  it('gives its function an UnknownWebhookEvent', () => {
    void dispatch(event, {}, {
      onUnknown: (unknown, context) => {
        expectTypeOf(unknown).toEqualTypeOf<UnknownWebhookEvent>();
        expectTypeOf(context).toEqualTypeOf<HandlerContext>();
      },
    });
    void dispatch(event, {}, { onUnknown: 'accept' });
    void dispatch(event, {}, { onUnknown: 'reject' });
    // @ts-expect-error only 'accept', 'reject' or a function
    void dispatch(event, {}, { onUnknown: 'ignore' });
  });
});

describe('schemas', () => {
  it("gives each handler its schema's output: zod, valibot and arktype", () => {
    void dispatch(
      event,
      {
        'call.missed': (missed) => expectTypeOf(missed).toEqualTypeOf<z.output<typeof zodCallMissed>>(),
        'message.received': (message) => expectTypeOf(message).toEqualTypeOf<v.InferOutput<typeof valibotMessage>>(),
        'transcript.ready': (transcript) => expectTypeOf(transcript).toEqualTypeOf<typeof arktypeTranscript.infer>(),
        'webhook.test': (test) => expectTypeOf(test).toEqualTypeOf<KnownEventMap['webhook.test']>(),
      },
      { schemas: { 'call.missed': zodCallMissed, 'message.received': valibotMessage, 'transcript.ready': arktypeTranscript } },
    );
  });

  it('infers the schemas inside an adapter-shaped options object, whatever the key order', () => {
    adapter({
      secret: 'whsec_c2VjcmV0',
      on: { 'call.missed': (missed) => expectTypeOf(missed.data.object.from).toEqualTypeOf<string>() },
      schemas: { 'call.missed': zodCallMissed },
      onHandlerError: (error, failed, context) => {
        expectTypeOf(error).toEqualTypeOf<unknown>();
        expectTypeOf(failed).toEqualTypeOf<WebhookEvent>();
        expectTypeOf(context).toEqualTypeOf<HandlerContext>();
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
    void dispatch(event, {}, { schemas: { 'call.mised': zodCallMissed } });
    // @ts-expect-error a schema needs ~standard
    void dispatch(event, {}, { schemas: { 'call.missed': { parse: (value: unknown) => value } } });
  });

  it('takes the three libraries as Standard Schemas', () => {
    expectTypeOf(zodCallMissed).toExtend<StandardSchema>();
    expectTypeOf(valibotMessage).toExtend<StandardSchema>();
    expectTypeOf(arktypeTranscript).toExtend<StandardSchema>();
  });
});

describe('dispatch', () => {
  it('resolves to the answer', () => {
    expectTypeOf(dispatch(event, {})).toEqualTypeOf<Promise<DispatchResult>>();
  });
});

/**
 * `dispatch`: a verified delivery to the handler of its event's type, and the answer: unknown types,
 * failing handlers (their error goes to onHandlerError, the sender gets one
 * fixed 500), and the schemas of every Standard Schema library, whose
 * failures answer 422 naming paths, never values.
 */
import { type } from 'arktype';
import fc from 'fast-check';
import * as v from 'valibot';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  dispatch as dispatchDelivery,
  MemoryDedupStore,
  KNOWN_EVENT_TYPES,
  WebhookHandlerError,
  type EventHandlers,
  type EventSchemas,
  type HandlerOptions,
  type StandardSchema,
  type StandardSchemaIssue,
  type WebhookDelivery,
  type WebhookEvent,
} from '../../src/index.js';
import { eventOf, recordingHandlers } from '../helpers/events.js';
import { failingBothWays } from '../helpers/failing-callbacks.js';
import { deliveryOfEvent } from '../helpers/signed-request.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

/** `dispatch` on a delivery of `event`, with `on` and the other handler options apart, as the tests read best. */
function dispatch<S extends EventSchemas = {}>(event: WebhookEvent, on: EventHandlers<S>, options: Omit<HandlerOptions<S>, 'on'> = {}) {
  return dispatchDelivery(deliveryOfEvent(event), { ...options, on } as HandlerOptions<S>);
}

const HANDLER_FAILED_BODY = { error: { code: 'handler_failed', message: 'the handler for this event failed; retry later' } };
const ACCEPTED = { status: 204, headers: {}, body: undefined };
const quiet = { onHandlerError: () => {} };
// Any string, and near misses of known types (' call.missed', 'call.missed.', 'call.Missed'): none is known.
const knownType = fc.constantFrom(...KNOWN_EVENT_TYPES);
const around = fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '.', '_', 'x') });
const upperCased = fc.tuple(knownType, fc.nat()).map(([type, at]) => {
  const i = at % type.length;
  return type.slice(0, i) + type.charAt(i).toUpperCase() + type.slice(i + 1);
});
const unknownType = fc
  .oneof(fc.string(), fc.tuple(around, knownType, around).map((parts) => parts.join('')), upperCased)
  .filter((type) => !(KNOWN_EVENT_TYPES as readonly string[]).includes(type));

afterEach(() => {
  vi.restoreAllMocks();
});

describe('dispatch', () => {
  it("answers 204 once the type's handler resolves, handing it the event and its id", async () => {
    const seen: Array<[WebhookEvent, WebhookDelivery]> = [];
    const event = eventOf('call.missed', 'evt_42');
    const result = await dispatch(event, {
      'call.missed': async (missed, context) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        seen.push([missed, context]);
      },
    });
    expect(result).toEqual(ACCEPTED);
    expect(result.error).toBe(undefined);
    expect(seen).toEqual([[event, deliveryOfEvent(event)]]);
    expect(seen[0]![0]).toBe(event);
  });

  it.each([null, undefined, 'on', 5])('throws a TypeError for options that are %s, before running anything', (options) => {
    expect(() => dispatchDelivery(deliveryOfEvent(eventOf('call.missed')), options as never)).toThrow(
      new WebhookOptionsError('svc-webhooks: dispatch needs options with on, an object of handlers by event type'),
    );
  });

  it('answers 204 for a handler that returns a value without a promise, and ignores the value', async () => {
    expect(await dispatch(eventOf('webhook.test'), { 'webhook.test': () => 'ignored' })).toEqual(ACCEPTED);
  });

  it('runs only the handler of the event type', async () => {
    const { on, calls } = recordingHandlers();
    for (const type of KNOWN_EVENT_TYPES) await dispatch(eventOf(type), on);
    expect(calls).toEqual(KNOWN_EVENT_TYPES);
  });

  it.each(failingBothWays(new Error('db password hunter2 for obj_evt_1')))('answers 500 handler_failed with a fixed message when the handler %s, and tells onHandlerError', async (_name, handler) => {
    const reports: unknown[][] = [];
    const event = eventOf('call.missed');
    const result = await dispatch(event, { 'call.missed': handler }, { onHandlerError: (...args) => reports.push(args) });
    expect(result).toMatchObject({ status: 500, headers: {}, body: HANDLER_FAILED_BODY });
    expect(result.error).toBeInstanceOf(WebhookHandlerError);
    expect(result.error).toMatchObject({ code: 'handler_failed', status: 500 });
    expect(JSON.stringify(result)).not.toContain('hunter2');
    expect(reports).toEqual([[new Error('db password hunter2 for obj_evt_1'), event, deliveryOfEvent(event)]]);
  });

  it('logs one line by default, naming the event and what the handler threw, which the answer never quotes', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const thrown = new RangeError('text "call me at 555-0100" too long');
    const result = await dispatch(eventOf('message.received', 'evt_7'), {
      'message.received': () => {
        throw thrown;
      },
    });
    expect(log).toHaveBeenCalledTimes(1);
    const [line] = log.mock.calls[0]!;
    expect(String(line).split('\n')[0]).toBe(
      'svc-webhooks: event "evt_7" of type "message.received": the handler failed (RangeError: text "call me at 555-0100" too long); the sender will retry it',
    );
    expect(result.body).toEqual({ error: { code: 'handler_failed', message: 'the handler for this event failed; retry later' } });
    // What was thrown is the refusal's cause, for the operator: never in the body.
    expect(result.error?.cause).toBe(thrown);
  });

  it.each(failingBothWays(new Error('reporter down')))('still answers 500 when onHandlerError %s', async (_name, onHandlerError) => {
    const failing = (): never => {
      throw new Error('boom');
    };
    const result = await dispatch(eventOf('call.missed'), { 'call.missed': failing }, { onHandlerError });
    expect(result).toMatchObject({ status: 500, body: HANDLER_FAILED_BODY });
  });

  it('answers 204 for a known type without a handler, whatever onUnknown says', async () => {
    const onUnknown = vi.fn();
    expect(await dispatch(eventOf('transcript.ready'), { 'call.missed': () => {} })).toEqual(ACCEPTED);
    expect(await dispatch(eventOf('transcript.ready'), {}, { unknownEvents: 'reject' })).toEqual(ACCEPTED);
    expect(await dispatch(eventOf('transcript.ready'), {}, { onUnknownEvent: onUnknown })).toEqual(ACCEPTED);
    expect(onUnknown).not.toHaveBeenCalled();
  });

  it("answers 204 for an unknown type under 'accept', the default", async () => {
    const { on, calls } = recordingHandlers();
    expect(await dispatch(eventOf('call.answered'), on)).toEqual(ACCEPTED);
    expect(await dispatch(eventOf('call.answered'), on, { unknownEvents: 'accept' })).toEqual(ACCEPTED);
    expect(calls).toEqual([]);
  });

  it("answers 422 unknown_event_type for an unknown type under 'reject'", async () => {
    const result = await dispatch(eventOf('call.answered'), {}, { unknownEvents: 'reject' });
    expect(result).toMatchObject({
      status: 422,
      headers: {},
      body: { error: { code: 'unknown_event_type', message: 'this receiver refuses event types it does not know' } },
      error: { code: 'unknown_event_type' },
    });
  });

  it('runs onUnknownEvent like a handler: 204 when it resolves, 500 when it throws', async () => {
    const seen: unknown[][] = [];
    const event = eventOf('call.answered', 'evt_9');
    expect(await dispatch(event, {}, { onUnknownEvent: async (...args) => void seen.push(args) })).toEqual(ACCEPTED);
    expect(seen).toEqual([[event, deliveryOfEvent(event)]]);
    const failing = async (): Promise<never> => {
      throw new Error('boom');
    };
    expect(await dispatch(event, {}, { onUnknownEvent: failing, ...quiet })).toMatchObject({ status: 500, body: HANDLER_FAILED_BODY });
  });

  it("treats the names of Object.prototype's members as unknown types", async () => {
    const onUnknown = vi.fn();
    for (const type of ['toString', '__proto__', 'constructor', 'hasOwnProperty']) {
      expect(await dispatch(eventOf(type), {}, { onUnknownEvent: onUnknown })).toEqual(ACCEPTED);
    }
    expect(onUnknown).toHaveBeenCalledTimes(4);
  });

  it("works on frozen options and handlers, and leaves the caller's objects as they were", async () => {
    const on = Object.freeze({ 'call.missed': () => {} });
    const options = Object.freeze({ unknownEvents: 'reject' as const });
    expect(await dispatch(eventOf('call.missed'), on, options)).toEqual(ACCEPTED);
    expect(options).toEqual({ unknownEvents: 'reject' });
    expect(Object.keys(on)).toEqual(['call.missed']);
  });

  it('never rejects, and never sends what a handler threw (property)', async () => {
    await fc.assert(
      fc.asyncProperty(knownType, fc.anything(), fc.boolean(), async (type, thrown, async) => {
        const handler = async ? async () => Promise.reject(thrown) : () => {
          throw thrown;
        };
        const result = await dispatch(eventOf(type), { [type]: handler }, quiet);
        expect(result.status).toBe(500);
        expect(result.headers).toEqual({});
        expect(result.body).toEqual(HANDLER_FAILED_BODY);
        expect(result.error?.message).toBe(HANDLER_FAILED_BODY.error.message);
      }),
    );
  });

  it('never sends the message of a thrown Error (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1 }), async (message) => {
        const result = await dispatch(eventOf('call.missed'), { 'call.missed': () => Promise.reject(new Error(`SECRET:${message}`)) }, quiet);
        expect(JSON.stringify(result.body)).not.toContain('SECRET:');
        expect(result.error?.message).not.toContain('SECRET:');
      }),
    );
  });

  it("answers 204 for every unknown type under 'accept' and runs no handler (property)", async () => {
    const { on, calls } = recordingHandlers();
    await fc.assert(
      fc.asyncProperty(unknownType, fc.string(), async (type, id) => {
        expect(await dispatch(eventOf(type, id), on)).toEqual(ACCEPTED);
      }),
    );
    expect(calls).toEqual([]);
  });

  it("answers 422 for every unknown type under 'reject', and 204 for every known type without a handler (property)", async () => {
    await fc.assert(
      fc.asyncProperty(unknownType, knownType, async (unknown, known) => {
        expect((await dispatch(eventOf(unknown), {}, { unknownEvents: 'reject' })).status).toBe(422);
        expect(await dispatch(eventOf(known), {}, { unknownEvents: 'reject' })).toEqual(ACCEPTED);
      }),
    );
  });
});

/** The same call.missed schema in each library: `data.object.id` comes out upper-cased, so the output differs from the input. */
const libraries = {
  zod: z.object({
    id: z.string(),
    type: z.literal('call.missed'),
    data: z.object({
      object: z.object({ id: z.string().transform((id) => id.toUpperCase()), from: z.string(), duration: z.number(), tags: z.array(z.string()) }),
    }),
  }),
  valibot: v.object({
    id: v.string(),
    type: v.literal('call.missed'),
    data: v.object({
      object: v.object({
        id: v.pipe(
          v.string(),
          v.transform((id) => id.toUpperCase()),
        ),
        from: v.string(),
        duration: v.number(),
        tags: v.array(v.string()),
      }),
    }),
  }),
  arktype: type({
    id: 'string',
    type: "'call.missed'",
    data: { object: { id: type('string').pipe((id) => id.toUpperCase()), from: 'string', duration: 'number', tags: 'string[]' } },
  }),
} satisfies Record<string, StandardSchema>;

const valid = (): WebhookEvent => eventOf('call.missed', 'evt_1', { from: '+15550100', duration: 12, tags: ['vip'] });
const invalid = (from: unknown, duration: unknown, tag: unknown): WebhookEvent => eventOf('call.missed', 'evt_1', { from, duration, tags: ['vip', tag] });
const FAILING_PATHS = ['$.data.object.duration', '$.data.object.from', '$.data.object.tags[1]'];

describe.each(Object.entries(libraries))('schemas with %s', (_library, schema) => {
  it("validates the whole event, then hands the handler the schema's output", async () => {
    const seen: unknown[] = [];
    const event = valid();
    const result = await dispatch(event, { 'call.missed': (output) => void seen.push(output) }, { schemas: { 'call.missed': schema } });
    expect(result).toEqual({ status: 204, headers: {}, body: undefined });
    // Keys the schema does not name: zod and valibot drop them, arktype keeps them.
    expect(seen).toMatchObject([{ id: 'evt_1', type: 'call.missed', data: { object: { id: 'OBJ_EVT_1', from: '+15550100', duration: 12, tags: ['vip'] } } }]);
    expect(event).toEqual(valid());
  });

  it('answers 422 invalid_event_data with the failing paths and none of the values, without running the handler', async () => {
    const handler = vi.fn();
    const reports: unknown[] = [];
    const result = await dispatch(
      invalid(5550100999, 'call-lasted-forever', 4242424242),
      { 'call.missed': handler },
      { schemas: { 'call.missed': schema }, onHandlerError: (error) => reports.push(error) },
    );
    expect(result.status).toBe(422);
    expect(result.body?.error.code).toBe('invalid_event_data');
    expect([...(result.body?.error.paths ?? [])].sort()).toEqual(FAILING_PATHS);
    expect(result.error).toMatchObject({ code: 'invalid_event_data', status: 422 });
    for (const value of ['5550100999', 'call-lasted-forever', '4242424242', 'received', 'was']) {
      expect(JSON.stringify(result.body)).not.toContain(value);
      expect(result.error?.message).not.toContain(value);
    }
    expect(handler).not.toHaveBeenCalled();
    expect(reports).toEqual([result.error]);
  });

  it('never sends a value that failed the schema (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.integer({ min: 1_000_000 }), fc.string(), async (text, number, tag) => {
        const markedText = `VALUE:${text}`;
        const result = await dispatch(invalid(number, markedText, { tag }), { 'call.missed': () => {} }, { schemas: { 'call.missed': schema }, ...quiet });
        expect(result.status).toBe(422);
        const sent = JSON.stringify(result);
        expect(sent).not.toContain('VALUE:');
        expect(sent).not.toContain(String(number));
        expect([...(result.body?.error.paths ?? [])].sort()).toEqual(FAILING_PATHS);
      }),
      { numRuns: 50 },
    );
  });
});

/** A hand-made Standard Schema, to reach what the libraries above do not produce. */
function schemaAnswering(validate: StandardSchema['~standard']['validate']): StandardSchema {
  return { '~standard': { version: 1, vendor: 'test', validate } };
}
const failingWith = (issues: StandardSchemaIssue[]): StandardSchema => schemaAnswering(() => ({ issues }));

describe('schema outcomes', () => {
  it('awaits an asynchronous schema (zod with an async refinement)', async () => {
    const knownCaller = z.object({ data: z.object({ object: z.object({ id: z.string().refine(async (id) => id !== 'obj_blocked') }) }) });
    const on = { 'call.missed': () => {} };
    expect((await dispatch(eventOf('call.missed', 'evt_1'), on, { schemas: { 'call.missed': knownCaller } })).status).toBe(204);
    const refused = await dispatch(eventOf('call.missed', 'blocked'), on, { schemas: { 'call.missed': knownCaller }, ...quiet });
    expect(refused.body?.error.paths).toEqual(['$.data.object.id']);
  });

  it.each([
    ...failingBothWays(new Error('schema bug quoting +15550100')).map(([name, validate]) => [name, schemaAnswering(validate)] as const),
    ['answers nothing', schemaAnswering(() => undefined as never)] as const,
  ])('answers 500 handler_failed when the schema %s, without running the handler', async (_name, schema) => {
    const handler = vi.fn();
    const result = await dispatch(eventOf('call.missed'), { 'call.missed': handler }, { schemas: { 'call.missed': schema }, ...quiet });
    expect(result).toMatchObject({ status: 500, body: { error: { code: 'handler_failed' } } });
    expect(JSON.stringify(result)).not.toContain('15550100');
    expect(handler).not.toHaveBeenCalled();
  });

  it('names paths from the root in JSONPath notation', async () => {
    const schema = failingWith([
      { message: 'root', path: [] },
      { message: 'no path' },
      { message: 'segments', path: [{ key: 'data' }, { key: 'items' }, { key: 0 }] },
      { message: 'odd keys', path: ['data', 'a b', 'x"y', '0', 'ok_$1', Symbol('s')] },
      { message: 'duplicate', path: ['data', 'items', 0] },
    ]);
    const result = await dispatch(eventOf('call.missed'), { 'call.missed': () => {} }, { schemas: { 'call.missed': schema }, ...quiet });
    expect(result.body?.error.paths).toEqual(['$', '$.data.items[0]', '$.data["a b"]["x\\"y"]["0"].ok_$1[Symbol(s)]']);
    expect(result.body?.error.message).toBe(`the event failed the schema for its type at ${result.body?.error.paths?.join(', ')}`);
  });

  it('names at most 20 paths', async () => {
    const issues = Array.from({ length: 30 }, (_, i) => ({ message: 'bad', path: ['data', `field${i}`] }));
    const result = await dispatch(eventOf('call.missed'), { 'call.missed': () => {} }, { schemas: { 'call.missed': failingWith(issues) }, ...quiet });
    expect(result.body?.error.paths).toHaveLength(20);
  });

  it('treats an empty issues list as a failure, as the standard says', async () => {
    const result = await dispatch(eventOf('call.missed'), { 'call.missed': () => {} }, { schemas: { 'call.missed': failingWith([]) }, ...quiet });
    expect(result).toMatchObject({ status: 422, body: { error: { message: 'the event failed the schema for its type', paths: [] } } });
  });

  it('logs one line by default with the paths, for the operator to fix the schema within the retry window', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const schema = failingWith([{ message: 'Expected number but received "+15550100"', path: ['data', 'object', 'duration'] }]);
    await dispatch(eventOf('call.missed', 'evt_3'), { 'call.missed': () => {} }, { schemas: { 'call.missed': schema } });
    expect(log.mock.calls).toEqual([
      [
        'svc-webhooks: event "evt_3" of type "call.missed": the event failed the schema for its type at $.data.object.duration; ' +
          'the sender will retry it',
      ],
    ]);
  });

  it('hands onHandlerError the refusal as a WebhookHandlerError', async () => {
    const reports: unknown[] = [];
    const schema = failingWith([{ message: 'bad', path: ['id'] }]);
    await dispatch(eventOf('call.missed'), { 'call.missed': () => {} }, { schemas: { 'call.missed': schema }, onHandlerError: (error) => reports.push(error) });
    expect(reports).toHaveLength(1);
    expect(reports[0]).toBeInstanceOf(WebhookHandlerError);
    expect(reports[0]).toMatchObject({ code: 'invalid_event_data', message: 'the event failed the schema for its type at $.id' });
  });
});

describe('dispatch with dedup and ordering', () => {
  /** Version `version` of msg_1, at that many seconds past noon. */
  const versionOf = (version: number) =>
    deliveryOfEvent({ id: `evt_v${version}`, type: 'message.received', timestamp: `2026-11-29T12:00:0${version}Z`, data: { object: { id: 'msg_1' } } } as WebhookEvent);
  const ordering = { version: (event: WebhookEvent) => event.timestamp };

  it('runs each event once under a claim: a copy is answered 200, skipped as a duplicate, without a body', async () => {
    const store = new MemoryDedupStore();
    let runs = 0;
    const options = { on: { 'message.received': () => void runs++ }, dedup: { store } };
    expect(await dispatchDelivery(versionOf(1), options)).toMatchObject({ status: 204, body: undefined });
    expect(await dispatchDelivery(versionOf(1), options)).toEqual({ status: 200, headers: {}, body: undefined, skipped: 'duplicate' });
    expect(runs).toBe(1);
  });

  it('answers 409 for a copy while the first runs, and releases the claim of a handler that failed', async () => {
    const store = new MemoryDedupStore();
    let release: (() => void) | undefined;
    let fail = true;
    const options = {
      on: { 'message.received': () => new Promise<void>((resolve, reject) => (release = () => (fail ? reject(new Error('down')) : resolve()))) },
      onHandlerError: () => undefined,
      dedup: { store },
    };
    const first = dispatchDelivery(versionOf(1), options);
    await vi.waitFor(() => expect(release).toBeDefined());
    expect((await dispatchDelivery(versionOf(1), options)).error?.code).toBe('delivery_in_progress');
    release!();
    expect((await first).status).toBe(500);
    fail = false;
    release = undefined;
    const retry = dispatchDelivery(versionOf(1), options);
    await vi.waitFor(() => expect(release).toBeDefined());
    release!();
    expect((await retry).status).toBe(204);
  });

  it('skips a stale event with 200 and skipped: stale, or runs it marked stale under staleEvents: run', async () => {
    const seen: Array<boolean | undefined> = [];
    const on = { 'message.received': (_event: unknown, delivery: WebhookDelivery) => void seen.push(delivery.stale) };
    const skip = { on, dedup: { store: new MemoryDedupStore() }, ordering };
    expect((await dispatchDelivery(versionOf(3), skip)).status).toBe(204);
    expect(await dispatchDelivery(versionOf(2), skip)).toEqual({ status: 200, headers: {}, body: undefined, skipped: 'stale' });
    const run = { on, dedup: { store: new MemoryDedupStore() }, ordering: { ...ordering, staleEvents: 'run' as const } };
    await dispatchDelivery(versionOf(3), run);
    expect((await dispatchDelivery(versionOf(2), run)).status).toBe(204);
    expect(seen).toEqual([undefined, undefined, true]);
  });

  it('refuses ordering without dedup, and dedup without a store, or with one that cannot order', () => {
    const on = { 'message.received': () => undefined };
    expect(() => dispatchDelivery(versionOf(1), { on, ordering })).toThrow(new WebhookOptionsError("svc-webhooks: dispatch's ordering needs dedup, with a store that records each object's version"));
    expect(() => dispatchDelivery(versionOf(1), { on, dedup: {} as never })).toThrow(new WebhookOptionsError('svc-webhooks: dispatch needs dedup.store, a DedupStore (begin, complete, release and renew)'));
    const plain = { begin: async () => ({ state: 'done' as const }), complete: async () => true, release: async () => true, renew: async () => true };
    expect(() => dispatchDelivery(versionOf(1), { on, dedup: { store: plain }, ordering })).toThrow(WebhookOptionsError);
  });
});

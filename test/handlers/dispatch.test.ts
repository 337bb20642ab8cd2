import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dispatch, KNOWN_EVENT_TYPES, WebhookVerificationError, type HandlerContext, type WebhookEvent } from '../../src/index.js';
import { failingBothWays } from '../helpers/failing-callbacks.js';
import { eventOf, recordingHandlers } from './events.js';

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
    const seen: Array<[WebhookEvent, HandlerContext]> = [];
    const event = eventOf('call.missed', 'evt_42');
    const result = await dispatch(event, {
      'call.missed': async (missed, context) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        seen.push([missed, context]);
      },
    });
    expect(result).toEqual(ACCEPTED);
    expect(result.error).toBe(undefined);
    expect(seen).toEqual([[event, { id: 'evt_42' }]]);
    expect(seen[0]![0]).toBe(event);
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
    expect(result.error).toBeInstanceOf(WebhookVerificationError);
    expect(result.error).toMatchObject({ code: 'handler_failed', status: 500 });
    expect(JSON.stringify(result)).not.toContain('hunter2');
    expect(reports).toEqual([[new Error('db password hunter2 for obj_evt_1'), event, { id: 'evt_1' }]]);
  });

  it('logs one line by default, naming the event but not quoting the error', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    await dispatch(eventOf('message.received', 'evt_7'), {
      'message.received': () => {
        throw new RangeError('text "call me at 555-0100" too long');
      },
    });
    expect(log).toHaveBeenCalledTimes(1);
    const [line] = log.mock.calls[0]!;
    expect(line).toBe('svc-webhooks: event "evt_7" of type "message.received": the handler failed (RangeError); the sender will retry it');
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
    expect(await dispatch(eventOf('transcript.ready'), {}, { onUnknown: 'reject' })).toEqual(ACCEPTED);
    expect(await dispatch(eventOf('transcript.ready'), {}, { onUnknown })).toEqual(ACCEPTED);
    expect(onUnknown).not.toHaveBeenCalled();
  });

  it("answers 204 for an unknown type under 'accept', the default", async () => {
    const { on, calls } = recordingHandlers();
    expect(await dispatch(eventOf('call.answered'), on)).toEqual(ACCEPTED);
    expect(await dispatch(eventOf('call.answered'), on, { onUnknown: 'accept' })).toEqual(ACCEPTED);
    expect(calls).toEqual([]);
  });

  it("answers 422 unknown_event_type for an unknown type under 'reject'", async () => {
    const result = await dispatch(eventOf('call.answered'), {}, { onUnknown: 'reject' });
    expect(result).toMatchObject({
      status: 422,
      headers: {},
      body: { error: { code: 'unknown_event_type', message: 'this receiver refuses event types it does not know' } },
      error: { code: 'unknown_event_type' },
    });
  });

  it('runs an onUnknown function like a handler: 204 when it resolves, 500 when it throws', async () => {
    const seen: unknown[][] = [];
    const event = eventOf('call.answered', 'evt_9');
    expect(await dispatch(event, {}, { onUnknown: async (...args) => void seen.push(args) })).toEqual(ACCEPTED);
    expect(seen).toEqual([[event, { id: 'evt_9' }]]);
    const failing = async (): Promise<never> => {
      throw new Error('boom');
    };
    expect(await dispatch(event, {}, { onUnknown: failing, ...quiet })).toMatchObject({ status: 500, body: HANDLER_FAILED_BODY });
  });

  it("treats the names of Object.prototype's members as unknown types", async () => {
    const onUnknown = vi.fn();
    for (const type of ['toString', '__proto__', 'constructor', 'hasOwnProperty']) {
      expect(await dispatch(eventOf(type), {}, { onUnknown })).toEqual(ACCEPTED);
    }
    expect(onUnknown).toHaveBeenCalledTimes(4);
  });

  it("works on frozen options and handlers, and leaves the caller's objects as they were", async () => {
    const on = Object.freeze({ 'call.missed': () => {} });
    const options = Object.freeze({ onUnknown: 'reject' as const });
    expect(await dispatch(eventOf('call.missed'), on, options)).toEqual(ACCEPTED);
    expect(options).toEqual({ onUnknown: 'reject' });
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
        expect((await dispatch(eventOf(unknown), {}, { onUnknown: 'reject' })).status).toBe(422);
        expect(await dispatch(eventOf(known), {}, { onUnknown: 'reject' })).toEqual(ACCEPTED);
      }),
    );
  });
});

/**
 * What every adapter does with `on`, over a real listening server: it runs
 * the handler of the event's type under the dedup claim and answers by
 * itself (no route). Each adapter supplies a `ServeHandlers` mounting its
 * `verifyWebhook` at /webhooks.
 */
import { type } from 'arktype';
import * as v from 'valibot';
import { afterEach, beforeEach, expect, it, vi, type MockInstance } from 'vitest';
import { z } from 'zod';
import type { EventSchemas, HandlerOptions, ReceiverOptions, StandardSchema } from '../../src/index.js';
import { OUTCOME_HEADER, parseOutcome } from '../../src/core/outcome-header.js';
import type { EntryOptions } from '../../src/receive/pipeline.js';
import { CUSTOM_ERROR_STATUS, customErrorBody } from './adapter-contract.js';
import type { ServedApp } from './adapter-servers.js';
import { failingBothWays } from './failing-callbacks.js';
import { deliveryOf, keyOf, NOW_SECONDS, OLD_SECRET, SECRET, now, signedRequest, type SignedRequest } from './signed-request.js';
import { TestDedupStore } from './test-dedup-store.js';
import { errorOf } from './refusal.js';
import { recordingLogger } from './recording-logger.js';

/** The delivery a handler of `on` gets: `deliveryOf`'s fields, and on a handler entry the host's request and context besides. */
const delivered = (...spec: Parameters<typeof deliveryOf>) => expect.objectContaining(deliveryOf(...spec));

export type HandlerServeOptions = ReceiverOptions & HandlerOptions<EventSchemas> & Pick<EntryOptions, 'outcomeHeader'> & { readonly secret: string };

/**
 * Serves the adapter with `options` at /webhooks. `onError: 'custom'` adds
 * an `onError` answering CUSTOM_ERROR_STATUS with `customErrorBody(code)`;
 * `'throws'` one that throws.
 */
export type ServeHandlers = (options: HandlerServeOptions, onError?: 'custom' | 'throws') => Promise<ServedApp>;

const HANDLER_FAILED_MESSAGE = 'the handler for this event failed; retry later';
/** A value no answer may repeat: the handler's error message and the schema's failing value carry it. */
const SECRET_VALUE = '4155550100';

const broken = (): never => {
  throw new Error(`cannot reach ${SECRET_VALUE}`);
};

const schemas: ReadonlyArray<[string, StandardSchema]> = [
  ['zod', z.object({ data: z.object({ object: z.object({ from: z.string() }) }) })],
  ['valibot', v.object({ data: v.object({ object: v.object({ from: v.string() }) }) })],
  ['arktype', type({ data: { object: { from: 'string' } } })],
];

/** A signed call.missed whose `data.object.from` is `from`. */
function missedCallFrom(from: unknown): SignedRequest {
  const event = { id: 'evt_1', type: 'call.missed', created_at: '2023-11-14T22:13:20Z', data: { object: { id: 'obj_1', from } } };
  return signedRequest({ body: JSON.stringify(event) });
}

/** Declares the shared tests of `on` for one adapter. */
export function handlerContract(serve: ServeHandlers): void {
  let app: ServedApp | undefined;
  let log: MockInstance<typeof console.error>;
  const quiet = { onHandlerError: () => {} };
  const start = async (options: Partial<HandlerServeOptions> & Pick<HandlerServeOptions, 'on'>, onError?: 'custom' | 'throws'): Promise<void> => {
    app = await serve({ secret: SECRET, now, dedup: { store: new TestDedupStore() }, ...options }, onError);
  };
  const post = ({ body, headers }: SignedRequest = signedRequest()): Promise<Response> =>
    fetch(`${app!.url}/webhooks`, { method: 'POST', body, headers });

  beforeEach(() => {
    log = vi.spyOn(console, 'error').mockImplementation(() => {});
  });
  afterEach(async () => {
    log.mockRestore();
    await app?.close();
    app = undefined;
  });

  it('runs the handler of a known type once, with the event and its webhook-id, and answers 204 without a body', async () => {
    const handler = vi.fn();
    await start({ on: { 'message.received': handler } });
    const response = await post(signedRequest({ id: 'evt_m', type: 'message.received' }));
    expect(response.status).toBe(204);
    expect(response.headers.get('content-type')).toBeNull();
    expect(await response.text()).toBe('');
    expect(handler).toHaveBeenCalledExactlyOnceWith(expect.objectContaining({ id: 'evt_m', type: 'message.received' }), delivered({ id: 'evt_m', type: 'message.received' }));
  });

  it.each(failingBothWays(new Error(`cannot reach ${SECRET_VALUE}`)))(
    'answers 500 handler_failed with a fixed message when the handler %s, and tells onHandlerError',
    async (_how, handler) => {
      const onHandlerError = vi.fn();
      await start({ on: { 'call.missed': handler }, onHandlerError });
      const response = await post();
      expect(response.status).toBe(500);
      expect(await errorOf(response)).toEqual({ code: 'handler_failed', message: HANDLER_FAILED_MESSAGE });
      expect(onHandlerError).toHaveBeenCalledExactlyOnceWith(
        expect.objectContaining({ message: `cannot reach ${SECRET_VALUE}` }),
        expect.objectContaining({ id: 'evt_1', type: 'call.missed' }),
        delivered(),
      );
    },
  );

  it("logs one line with the error's message and stack when the handler throws and there is no onHandlerError; the answer holds neither", async () => {
    await start({ on: { 'call.missed': broken } });
    const response = await post();
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain(SECRET_VALUE);
    expect(log).toHaveBeenCalledOnce();
    const [sentence, frame] = String(log.mock.calls[0]![0]).split('\n');
    expect(sentence).toBe(`svc-webhooks: event "evt_1" of type "call.missed": the handler failed (Error: cannot reach ${SECRET_VALUE}); the sender will retry it`);
    expect(frame).toMatch(/^ {4}at broken \(.*handler-contract\.ts:\d+:\d+\)$/);
  });

  it('answers 204 to an unknown type and to a known type without a handler, running no handler', async () => {
    const handler = vi.fn();
    await start({ on: { 'call.missed': handler } });
    expect((await post(signedRequest({ id: 'evt_u', type: 'call.answered' }))).status).toBe(204);
    expect((await post(signedRequest({ id: 'evt_k', type: 'transcript.ready' }))).status).toBe(204);
    expect(handler).not.toHaveBeenCalled();
  });

  it("answers 422 unknown_event_type to an unknown type under unknownEvents: 'reject'", async () => {
    const handler = vi.fn();
    await start({ on: { 'call.missed': handler }, unknownEvents: 'reject' });
    const response = await post(signedRequest({ type: 'call.answered' }));
    expect(response.status).toBe(422);
    expect((await errorOf(response)).code).toBe('unknown_event_type');
    expect(handler).not.toHaveBeenCalled();
  });

  it('runs onUnknownEvent for an unknown type', async () => {
    const onUnknownEvent = vi.fn();
    await start({ on: {}, onUnknownEvent });
    expect((await post(signedRequest({ type: 'call.answered' }))).status).toBe(204);
    expect(onUnknownEvent).toHaveBeenCalledExactlyOnceWith(expect.objectContaining({ type: 'call.answered' }), delivered({ type: 'call.answered' }));
  });

  it.each(schemas)(
    'answers 422 invalid_event_data with the paths, never the values, when the event fails its %s schema',
    async (_library, schema) => {
      const handler = vi.fn();
      const onHandlerError = vi.fn();
      await start({ on: { 'call.missed': handler }, schemas: { 'call.missed': schema }, onHandlerError });
      const response = await post(missedCallFrom(Number(SECRET_VALUE)));
      expect(response.status).toBe(422);
      const text = await response.clone().text();
      const paths = ['$.data.object.from'];
      expect(await errorOf(response)).toEqual({ code: 'invalid_event_data', message: expect.any(String), paths });
      expect(text).not.toContain(SECRET_VALUE);
      expect(handler).not.toHaveBeenCalled();
      const context = expect.objectContaining({ ...deliveryOf(), event: expect.objectContaining({ id: 'evt_1' }) });
      expect(onHandlerError).toHaveBeenCalledExactlyOnceWith(expect.objectContaining({ code: 'invalid_event_data' }), expect.anything(), context);

      // Released: the retry of an event that passes, as after a fixed schema, is handled, and gets the schema's output.
      const from = `+1${SECRET_VALUE}`;
      expect((await post(missedCallFrom(from))).status).toBe(204);
      expect(handler).toHaveBeenCalledExactlyOnceWith(expect.objectContaining({ data: { object: expect.objectContaining({ from }) } }), context);
    },
  );

  it("processes a thrown handler's event on the retry, then answers a redelivery as a duplicate without running it", async () => {
    const dedup = new TestDedupStore();
    const handler = vi.fn().mockRejectedValueOnce(new Error('db down')).mockResolvedValue(undefined);
    await start({ dedup: { store: dedup }, on: { 'call.missed': handler }, ...quiet });
    expect((await post()).status).toBe(500);
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('absent');
    expect((await post()).status).toBe(204);
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');
    const duplicate = await post();
    expect(duplicate.status).toBe(200);
    expect(await duplicate.json()).toEqual({ received: true, duplicate: true });
    expect(handler).toHaveBeenCalledTimes(2);
  });

  it('runs the handler under the claim: a delivery of the same event meanwhile gets 409', async () => {
    const during: number[] = [];
    await start({ on: { 'call.missed': async () => void during.push((await post()).status) } });
    expect((await post()).status).toBe(204);
    expect(during).toEqual([409]);
  });

  it('answers even when the store never records the outcome, leaving the claim to its lease', async () => {
    const dedup = new TestDedupStore();
    dedup.complete = () => new Promise<boolean>(() => {});
    await start({ dedup: { store: dedup }, on: { 'call.missed': () => {} } });
    expect((await post()).status).toBe(204);
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('leased');
  });

  it('refuses a delivery that fails verification as without on, running no handler', async () => {
    const handler = vi.fn();
    await start({ on: { 'call.missed': handler } });
    const response = await post(signedRequest({ secret: OLD_SECRET }));
    expect(response.status).toBe(400);
    expect((await errorOf(response)).code).toBe('invalid_signature');
    expect(handler).not.toHaveBeenCalled();
  });

  it("lets onError answer the handlers' refusals", async () => {
    const on = { 'call.missed': broken, 'message.received': () => {} };
    await start({ on, schemas: { 'message.received': schemas[0]![1] }, unknownEvents: 'reject', ...quiet }, 'custom');
    for (const [type, code] of [
      ['call.missed', 'handler_failed'],
      ['call.answered', 'unknown_event_type'],
      ['message.received', 'invalid_event_data'],
    ] as const) {
      const response = await post(signedRequest({ type }));
      expect(response.status).toBe(CUSTOM_ERROR_STATUS);
      expect(await response.json()).toEqual(customErrorBody(code));
    }
  });

  it('sends the default answer, paths included, when onError throws', async () => {
    await start({ on: { 'call.missed': () => {} }, schemas: { 'call.missed': schemas[1]![1] }, ...quiet }, 'throws');
    const response = await post(missedCallFrom(null));
    expect(response.status).toBe(422);
    expect(await errorOf(response)).toMatchObject({ code: 'invalid_event_data', paths: ['$.data.object.from'] });
    expect(log).toHaveBeenCalledWith(expect.stringContaining('svc-webhooks: onError failed'));
  });

  it("names on onError's failure line the request's webhook-id, and the event's type once it is verified", async () => {
    const { logger, lines } = recordingLogger();
    await start({ on: { 'call.missed': () => {} }, schemas: { 'call.missed': schemas[1]![1] }, logger, ...quiet }, 'throws');
    expect((await post(missedCallFrom(null))).status).toBe(422);
    expect((await post(signedRequest({ id: 'evt_forged', secret: OLD_SECRET }))).status).toBe(400);
    const message = 'onError failed (onError broke); a request it left unanswered gets the default answer';
    expect(lines.filter(([, { code }]) => code === 'on_error_failed')).toStrictEqual([
      ['error', { code: 'on_error_failed', id: 'evt_1', type: 'call.missed', errorClass: 'Error', errorMessage: 'onError broke' }, message],
      ['error', { code: 'on_error_failed', id: 'evt_forged', errorClass: 'Error', errorMessage: 'onError broke' }, message],
    ]);
  });

  it("adds the outcome header to each answer it makes itself with outcomeHeader 'on': processed and how long the handler ran, the duplicate, a refusal's code, a failed handler", async () => {
    let clockMs = NOW_SECONDS * 1000;
    const on = {
      'call.missed': () => void (clockMs += 25),
      'message.received': () => {
        clockMs += 7;
        throw new Error('down');
      },
    };
    await start({ on, now: () => clockMs, outcomeHeader: 'on', ...quiet });
    const reportOf = (response: Response) => parseOutcome(response.headers.get(OUTCOME_HEADER) ?? 'absent;');
    const processed = await post();
    expect([processed.status, reportOf(processed)]).toEqual([204, { outcome: 'processed', handlerMs: 25, keyId: '0' }]);
    const again = await post();
    expect([again.status, reportOf(again)]).toEqual([200, { outcome: 'duplicate', keyId: '0' }]);
    const tampered = signedRequest({ id: 'evt_t' });
    const refused = await post({ ...tampered, body: tampered.body.replace('obj_', 'obj_x') });
    expect([refused.status, reportOf(refused)]).toEqual([400, { outcome: 'invalid_signature' }]);
    const failed = await post(signedRequest({ id: 'evt_f', type: 'message.received' }));
    expect([failed.status, reportOf(failed)]).toEqual([500, { outcome: 'handler_failed', handlerMs: 7, keyId: '0' }]);
    const unhandled = await post(signedRequest({ id: 'evt_u', type: 'webhook.test' }));
    expect([unhandled.status, reportOf(unhandled)]).toEqual([204, { outcome: 'unhandled', handlerMs: 0, keyId: '0' }]);
  });

  it("counts the handlers' time alone in the outcome header, not the wait for the store to record the outcome", async () => {
    let clockMs = NOW_SECONDS * 1000;
    // A store that takes 700 ms of the receiver's clock to record a completion.
    class SlowToComplete extends TestDedupStore {
      override async complete(id: string, token: string): Promise<boolean> {
        clockMs += 700;
        return super.complete(id, token);
      }
    }
    await start({ on: { 'call.missed': () => void (clockMs += 25) }, dedup: { store: new SlowToComplete() }, now: () => clockMs, outcomeHeader: 'on', ...quiet });
    const processed = await post();
    expect([processed.status, parseOutcome(processed.headers.get(OUTCOME_HEADER) ?? 'absent;')]).toEqual([204, { outcome: 'processed', handlerMs: 25, keyId: '0' }]);
  });

  it('adds no outcome header by default', async () => {
    await start({ on: { 'call.missed': () => {} } });
    const answers = [await post(), await post(), await post(signedRequest({ secret: OLD_SECRET }))];
    expect(answers.map((answer) => [answer.status, answer.headers.get(OUTCOME_HEADER)])).toEqual([
      [204, null],
      [200, null],
      [400, null],
    ]);
  });
}

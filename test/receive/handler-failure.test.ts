/** A failing handler: its error goes to onHandlerError (or one log line), the sender gets one fixed 500. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebhookVerificationError, type WebhookEvent } from '../../src/index.js';
import { checkOnHandlerError, handlerFailed } from '../../src/receive/handler-failure.js';
import { failingBothWays } from '../helpers/failing-callbacks.js';

const event = { id: 'evt_9', type: 'call.missed', timestamp: '2024-01-01T00:00:00Z', data: {} } as unknown as WebhookEvent;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('handlerFailed', () => {
  it('tells onHandlerError what the handler threw, and answers the fixed 500 that quotes none of it', () => {
    const reports: unknown[][] = [];
    const thrown = new Error('db password hunter2');
    const error = handlerFailed((...args) => void reports.push(args), thrown, event, { id: 'evt_9' });
    expect(reports).toEqual([[thrown, event, { id: 'evt_9' }]]);
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect(error).toMatchObject({ code: 'handler_failed', status: 500, message: 'the handler for this event failed; retry later' });
  });

  it.each(failingBothWays(new Error('reporter down')))('answers the same 500 when onHandlerError %s', (_how, onHandlerError) => {
    const error = handlerFailed(onHandlerError, new Error('boom'), event, { id: 'evt_9' });
    expect(error).toMatchObject({ code: 'handler_failed', status: 500 });
  });
});

describe('checkOnHandlerError', () => {
  it('answers the function given', () => {
    const onHandlerError = (): void => undefined;
    expect(checkOnHandlerError(onHandlerError)).toBe(onHandlerError);
  });

  it.each([['a string', 'log'], ['an object', {}], ['null', null]])('refuses %s', (_name, value) => {
    expect(() => checkOnHandlerError(value)).toThrow(new TypeError('svc-webhooks: onHandlerError must be a function'));
  });
});

describe('the default onHandlerError', () => {
  const loggedFor = (error: unknown): unknown[][] => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    checkOnHandlerError()(error, event, { id: 'evt_9' });
    return log.mock.calls;
  };
  const line = (what: string): string => `svc-webhooks: event "evt_9" of type "call.missed": ${what}; the sender will retry it`;

  it("names an Error's class, never its message", () => {
    expect(loggedFor(new TypeError('secret detail'))).toEqual([[line('the handler failed (TypeError)')]]);
  });

  it.each([
    ['string', 'secret detail'],
    ['undefined', undefined],
  ])('names the type of a thrown value that is no Error: %s', (type, thrown) => {
    expect(loggedFor(thrown)).toEqual([[line(`the handler failed (${type})`)]]);
  });

  it("quotes a schema failure's message, which names paths only", () => {
    const invalid = new WebhookVerificationError('invalid_event_data', 'the event failed the schema for its type at $.data.id');
    expect(loggedFor(invalid)).toEqual([[line('the event failed the schema for its type at $.data.id')]]);
  });

  it('names any other refusal by its class, as an Error', () => {
    const other = new WebhookVerificationError('handler_failed', 'secret detail');
    expect(loggedFor(other)).toEqual([[line('the handler failed (WebhookVerificationError)')]]);
  });
});

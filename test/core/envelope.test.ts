/** The envelope checks of parseEvent and isWebhookEvent: each one refuses its own malformation, and only that. */
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { isEventTypeName, isKnownEventType, isWebhookEvent, parseEvent } from '../../src/core/event.js';
import { KNOWN_EVENT_TYPES, WebhookVerificationError } from '../../src/index.js';

const valid = { id: 'evt_1', type: 'call.missed', data: { object: { id: 'call_1' } } };

/** The error parseEvent throws for `body`, as code and message. */
function refusalOf(body: string | Buffer): { code: string; message: string } {
  try {
    parseEvent(body, 'evt_1');
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    return { code: error.code, message: error.message };
  }
  throw new Error('parseEvent accepted the body');
}

// Each differs from a valid envelope in one place; the message names that place.
const MALFORMED: ReadonlyArray<[string, string, RegExp]> = [
  ['not JSON', '{"id":', /not JSON/],
  ['a JSON string', '"evt_1"', /not a JSON object/],
  ['JSON null', 'null', /not a JSON object/],
  ['a JSON array', JSON.stringify([valid]), /not a JSON object/],
  ['no type', JSON.stringify({ ...valid, type: undefined }), /"type"/],
  ['a numeric type', JSON.stringify({ ...valid, type: 7 }), /"type"/],
  ['no id', JSON.stringify({ ...valid, id: undefined }), /string "id"/],
  ['a numeric id', JSON.stringify({ ...valid, id: 1 }), /string "id"/],
  ['an id other than the webhook-id', JSON.stringify({ ...valid, id: 'evt_2' }), /differs from the webhook-id/],
  ['no data', JSON.stringify({ ...valid, data: undefined }), /"data\.object\.id"/],
  ['null data', JSON.stringify({ ...valid, data: null }), /"data\.object\.id"/],
  ['data that is an array', JSON.stringify({ ...valid, data: [{ object: { id: 'call_1' } }] }), /"data\.object\.id"/],
  ['no data.object', JSON.stringify({ ...valid, data: {} }), /"data\.object\.id"/],
  ['a null data.object', JSON.stringify({ ...valid, data: { object: null } }), /"data\.object\.id"/],
  ['a data.object that is an array', JSON.stringify({ ...valid, data: { object: [{ id: 'call_1' }] } }), /"data\.object\.id"/],
  ['a data.object that is a string', JSON.stringify({ ...valid, data: { object: 'call_1' } }), /"data\.object\.id"/],
  ['no data.object.id', JSON.stringify({ ...valid, data: { object: {} } }), /"data\.object\.id"/],
  ['a numeric data.object.id', JSON.stringify({ ...valid, data: { object: { id: 1 } } }), /"data\.object\.id"/],
];

describe('parseEvent', () => {
  it('returns the envelope of a string or a Buffer, other fields untouched', () => {
    const body = JSON.stringify({ ...valid, created_at: '2023-11-14T22:13:20Z', data: { ...valid.data, extra: [1] } });
    expect(parseEvent(body, 'evt_1')).toEqual(JSON.parse(body));
    expect(parseEvent(Buffer.from(body), 'evt_1')).toEqual(JSON.parse(body));
  });

  it('reads a Buffer as UTF-8', () => {
    const body = Buffer.from(JSON.stringify({ ...valid, data: { object: { id: 'café' } } }), 'utf8');
    expect(parseEvent(body, 'evt_1').data.object.id).toBe('café');
  });

  it('knows the event types the spec names', () => {
    expect(KNOWN_EVENT_TYPES).toEqual(['call.missed', 'message.received', 'webhook.test', 'transcript.ready', 'ai_summary.ready']);
    expect(Object.isFrozen(KNOWN_EVENT_TYPES)).toBe(true);
    for (const type of KNOWN_EVENT_TYPES) expect(isKnownEventType(type)).toBe(true);
    // A set lookup: names an object inherits are no event types.
    for (const type of ['call.transferred', '', 'toString', '__proto__', 'constructor', 'CALL.MISSED']) expect(isKnownEventType(type)).toBe(false);
  });

  it('passes an event type this version does not know through as is', () => {
    expect(KNOWN_EVENT_TYPES).not.toContain('call.transferred');
    expect(parseEvent(JSON.stringify({ ...valid, type: 'call.transferred' }), 'evt_1').type).toBe('call.transferred');
  });

  it.each(MALFORMED)('refuses %s with invalid_payload saying what is wrong', (_name, body, says) => {
    for (const form of [body, Buffer.from(body)]) {
      const { code, message } = refusalOf(form);
      expect(code).toBe('invalid_payload');
      expect(message).toMatch(says);
    }
  });

  it('compares the envelope id with the webhook-id exactly', () => {
    const body = JSON.stringify(valid);
    for (const webhookId of ['evt_', 'evt_1 ', 'EVT_1', '']) {
      expect(() => parseEvent(body, webhookId)).toThrow(/differs from the webhook-id/);
    }
  });
});

// The envelope rules a queue's job is held to: parseEvent's, less the webhook-id, which a job has no header for.
describe('isWebhookEvent', () => {
  it('accepts an envelope parseEvent accepts, whatever its id', () => {
    expect(isWebhookEvent(valid)).toBe(true);
    expect(isWebhookEvent({ ...valid, id: 'evt_2', type: 'call.transferred', extra: [1] })).toBe(true);
  });

  // Every malformation of a parsed body but the id compared with the header.
  const PARSED = MALFORMED.filter(([name]) => name !== 'not JSON' && name !== 'an id other than the webhook-id');

  it.each(PARSED)('refuses %s, as parseEvent does', (_name, body) => {
    expect(isWebhookEvent(JSON.parse(body))).toBe(false);
  });

  it('refuses undefined, which no body parses to', () => {
    expect(isWebhookEvent(undefined)).toBe(false);
  });
});

describe('isEventTypeName', () => {
  it.each(['call.missed', 'ai_summary.ready', 'a.b', 'call2.missed_3', 'number.port.completed'])('takes %j, written as the service writes types', (type) => {
    expect(isEventTypeName(type)).toBe(true);
  });

  it.each([
    ['one word', 'call'],
    ['a capital', 'Call.missed'],
    ['a capital after the dot', 'call.Missed'],
    ['a dot at the end', 'call.'],
    ['a dot at the start', '.missed'],
    ['two dots', 'call..missed'],
    ['a digit first', '2call.missed'],
    ['a digit first after the dot', 'call.2missed'],
    ['an underscore first', '_call.missed'],
    ['a hyphen', 'call-back.missed'],
    ['a space after', 'call.missed '],
    ['a space before', ' call.missed'],
    ['a line break after', 'call.missed\n'],
    ["an Object method's name", 'toString'],
  ])('refuses %s', (_name, type) => {
    expect(isEventTypeName(type)).toBe(false);
  });
});

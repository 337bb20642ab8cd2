/** The ids and envelopes `send` and `check` put in their events (spec sections 1 and 2). */
import { describe, expect, it } from 'vitest';
import { defaultData, eventEnvelope, newId } from '../../src/testing/envelope.js';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe('newId', () => {
  it('is the prefix, an underscore and a ULID whose first 10 characters encode the time', () => {
    // The time part of the ULID specification's own example.
    expect(newId('msg', 1469918176385)).toMatch(/^msg_01ARYZ6S41[0-9A-HJKMNP-TV-Z]{16}$/);
    expect(newId('obj', 0)).toMatch(/^obj_0000000000[0-9A-HJKMNP-TV-Z]{16}$/);
    expect(newId('msg', 2 ** 48 - 1).slice(4, 14)).toBe('7ZZZZZZZZZ');
  });

  it('draws its 16 last characters at random from the whole Crockford alphabet', () => {
    const tails = Array.from({ length: 200 }, () => newId('msg', 0).slice(14));
    expect(new Set(tails).size).toBe(200);
    expect(new Set(tails.join(''))).toEqual(new Set('0123456789ABCDEFGHJKMNPQRSTVWXYZ'));
  });

  it('takes the current time by default', () => {
    const before = newId('msg', Date.now()).slice(4, 14);
    const id = newId('msg');
    const after = newId('msg', Date.now()).slice(4, 14);
    expect(id).toMatch(/^msg_/);
    expect(id.slice(4)).toMatch(ULID);
    expect(id.slice(4, 14) >= before && id.slice(4, 14) <= after).toBe(true);
  });
});

describe('eventEnvelope', () => {
  it('is the JSON of id, type, the timestamp in whole seconds, and data, in that order', () => {
    const body = eventEnvelope('msg_1', 'call.missed', { object: { id: 'call_1' } }, Date.UTC(2026, 10, 18, 9, 30, 5, 987));
    expect(body).toBe('{"id":"msg_1","type":"call.missed","timestamp":"2026-11-18T09:30:05Z","data":{"object":{"id":"call_1"}}}');
  });

  it('stamps the current second by default', () => {
    const before = Math.floor(Date.now() / 1000);
    const { timestamp } = JSON.parse(eventEnvelope('msg_1', 'webhook.test', {})) as { timestamp: string };
    const after = Math.floor(Date.now() / 1000);
    expect(timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Date.parse(timestamp) / 1000).toBeGreaterThanOrEqual(before);
    expect(Date.parse(timestamp) / 1000).toBeLessThanOrEqual(after);
  });
});

describe('defaultData', () => {
  it('is an object with a new obj_ id each time', () => {
    const [one, two] = [defaultData(), defaultData()];
    expect(Object.keys(one)).toEqual(['object']);
    expect(one.object.id).toMatch(/^obj_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(two.object.id).not.toBe(one.object.id);
  });
});

/**
 * The testing kit as a receiver's author uses it: a typed test event, a
 * request signed as the service signs it (checked here with node:crypto
 * alone), and simulateDelivery finding the bugs that reach production: a
 * handler without deduplication that runs twice, a handler slower than the
 * answer window.
 */
import { Buffer } from 'node:buffer';
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { verifyWebhook } from '../../adapters/fetch.js';
import { signedHeaders, signedRequest, simulateDelivery, testEvent } from '../../src/testing/index.js';
import { verify } from '../../src/index.js';

const SECRET = `whsec_${Buffer.from('testing-kit-secret-testing-kit!!').toString('base64')}`;
const noWait = async (): Promise<void> => undefined;

describe('testEvent', () => {
  it('makes a valid envelope of the type, with a fresh id of the service form, that verifies', () => {
    const event = testEvent('call.missed', { data: { object: { from: '+15550100' } } });
    expect(event).toMatchObject({ type: 'call.missed', data: { object: { from: '+15550100' } } });
    expect(event.id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(event.data.object.id).toMatch(/^call_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(testEvent('call.missed').id).not.toBe(event.id);
    const body = JSON.stringify(event);
    expect(verify(body, signedHeaders(body, { secret: SECRET }), SECRET)).toEqual(event);
  });

  it('checks the event against the schema of its type, so a fixture and a schema cannot drift apart', () => {
    const schemas = { 'call.missed': z.object({ data: z.object({ object: z.object({ from: z.string() }) }) }) };
    expect(() => testEvent('call.missed', {}, { schemas })).toThrow(new TypeError("svc-webhooks: testEvent('call.missed') fails its schema at data.object.from"));
    expect(testEvent('call.missed', { data: { object: { from: '+15550100' } } }, { schemas }).type).toBe('call.missed');
  });

  it('refuses a type it does not know, at run time too', () => {
    expect(() => testEvent('call.mised' as never)).toThrow(TypeError);
  });
});

describe('signedRequest and signedHeaders', () => {
  it('sign as the service does: HMAC-SHA256 over id.timestamp.body, checked with node:crypto alone', async () => {
    const event = testEvent('webhook.test');
    const request = signedRequest(event, { secret: SECRET, timestamp: 1_700_000_000 });
    const body = await request.text();
    const mac = createHmac('sha256', Buffer.from(SECRET.slice(6), 'base64')).update(`${event.id}.1700000000.${body}`).digest('base64');
    expect([request.method, request.url, body]).toEqual(['POST', 'http://receiver.test/webhooks', JSON.stringify(event)]);
    expect(Object.fromEntries(request.headers)).toEqual({
      'content-type': 'application/json',
      'webhook-id': event.id,
      'webhook-timestamp': '1700000000',
      'webhook-signature': `v1,${mac}`,
    });
  });

  it('sign a body given as it is, pretty-printed included, with the id asked for', () => {
    const body = JSON.stringify(testEvent('webhook.test'), null, 2);
    const headers = signedHeaders(body, { secret: SECRET, id: 'msg_given' });
    expect(headers['webhook-id']).toBe('msg_given');
    expect(() => verify(body, headers, SECRET)).toThrow(expect.objectContaining({ code: 'invalid_payload' }));
  });
});

describe('simulateDelivery', () => {
  it('finds a handler without deduplication that runs twice when two copies arrive at once', async () => {
    const runs: string[] = [];
    const receiver = verifyWebhook({ secret: SECRET, dedup: false }, async (event) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      runs.push(event.id);
    });
    const event = testEvent('call.missed');
    const result = await simulateDelivery(receiver, event, { secret: SECRET, copies: 2, sleep: noWait });
    expect(result.delivered).toBe(true);
    expect(runs).toEqual([event.id, event.id]);
  });

  it('runs a deduplicating receiver once for two copies, the second retried until it gets the duplicate 200', async () => {
    const runs: string[] = [];
    const receiver = verifyWebhook({ secret: SECRET }, async (event) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      runs.push(event.id);
    });
    const event = testEvent('call.missed');
    // Retries a little apart, so that the first copy's handler has ended when one comes.
    const result = await simulateDelivery(receiver, event, { secret: SECRET, copies: 2, sleep: () => new Promise((resolve) => setTimeout(resolve, 30)) });
    expect(result.delivered).toBe(true);
    expect(runs).toEqual([event.id]);
    expect(result.attempts).toContainEqual(expect.objectContaining({ status: 409, code: 'delivery_in_progress' }));
  });

  it('retries a handler slower than the answer window, each attempt signed afresh under the same id', async () => {
    const seen: Array<[string | null, string | null]> = [];
    let calls = 0;
    const receiver = async (request: Request): Promise<Response> => {
      seen.push([request.headers.get('webhook-id'), request.headers.get('webhook-signature')]);
      if (++calls === 1) await new Promise((resolve) => setTimeout(resolve, 200));
      return new Response(null, { status: 204 });
    };
    const event = testEvent('webhook.test');
    const result = await simulateDelivery(receiver, event, { secret: SECRET, answerWindowMs: 50, sleep: () => new Promise((resolve) => setTimeout(resolve, 1100)) });
    expect(result.delivered).toBe(true);
    expect(result.attempts.map(({ copy, status }) => [copy, status ?? 'no answer'])).toEqual([
      [1, 'no answer'],
      [1, 204],
    ]);
    expect(seen.map(([id]) => id)).toEqual([event.id, event.id]);
    // A second later, the timestamp and so the signature differ.
    expect(seen[0]![1]).not.toBe(seen[1]![1]);
  });

  it('delivers to a handler failing twice on the third attempt, under one id with later timestamps, without waiting out the schedule', async () => {
    const seen: Array<[string | null, number]> = [];
    const receiver = (request: Request): Response => {
      seen.push([request.headers.get('webhook-id'), Number(request.headers.get('webhook-timestamp'))]);
      return new Response(null, { status: seen.length < 3 ? 503 : 204 });
    };
    const event = testEvent('call.missed');
    const asked: number[] = [];
    const result = await simulateDelivery(receiver, event, { secret: SECRET, sleep: async (ms) => void asked.push(ms) });
    expect(result.delivered).toBe(true);
    expect(result.attempts.map(({ status }) => status)).toEqual([503, 503, 204]);
    expect(seen.map(([id]) => id)).toEqual([event.id, event.id, event.id]);
    // The service's schedule, 1 s then 2 s, skipped in real time but kept on the signing clock.
    expect(asked).toEqual([1_000, 2_000]);
    const [first, second, third] = seen.map(([, timestamp]) => timestamp);
    expect(second! - first!).toBeGreaterThanOrEqual(1);
    expect(third! - second!).toBeGreaterThanOrEqual(2);
  });

  it('gives up after maxAttempts, and says the event was not delivered', async () => {
    const receiver = (): Response => Response.json({ error: { code: 'handler_failed' } }, { status: 500 });
    const result = await simulateDelivery(receiver, testEvent('webhook.test'), { secret: SECRET, maxAttempts: 3, sleep: noWait });
    expect(result).toEqual({
      delivered: false,
      attempts: [1, 2, 3].map(() => ({ copy: 1, status: 500, code: 'handler_failed', ms: expect.any(Number) })),
    });
  });
});

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
import { WebhookOptionsError } from '../../src/base/options-error.js';

const SECRET = `whsec_${Buffer.from('testing-kit-secret-testing-kit!!').toString('base64')}`;
const noWait = async (): Promise<void> => undefined;
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

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
    expect(() => testEvent('call.missed', {}, { schemas })).toThrow(new WebhookOptionsError("svc-webhooks: testEvent('call.missed') fails its schema at data.object.from"));
    expect(testEvent('call.missed', { data: { object: { from: '+15550100' } } }, { schemas }).type).toBe('call.missed');
  });

  it('refuses what is no event type, at run time too', () => {
    expect(() => testEvent('Call.Missed' as never)).toThrow(new WebhookOptionsError(`svc-webhooks: testEvent takes an event type, as 'call.missed', not "Call.Missed"`));
    expect(() => testEvent('toString' as never)).toThrow(TypeError);
  });

  it('makes an envelope of a type the spec does not name, as a contract adds them', () => {
    const event = testEvent('voicemail.received' as never);
    expect(event).toMatchObject({ type: 'voicemail.received', data: { object: { id: expect.stringMatching(/^obj_/) } } });
    expect(testEvent('call.missed').data.object.id).toMatch(/^call_/);
  });

  it("gives data.object an id of the service's kind for each type the spec names", () => {
    const prefixes = (['call.missed', 'message.received', 'webhook.test', 'transcript.ready', 'ai_summary.ready'] as const).map(
      (type) => testEvent(type).data.object.id.split('_')[0],
    );
    expect(prefixes).toEqual(['call', 'msg', 'we', 'trs', 'sum']);
  });

  it('stamps the envelope from the clock given: the timestamp in whole seconds, the ids on its milliseconds', () => {
    const nowMs = Date.UTC(2024, 4, 6, 7, 8, 9, 999);
    const event = testEvent('call.missed', undefined, { now: () => nowMs });
    expect(event.timestamp).toBe('2024-05-06T07:08:09Z');
    // A ULID's first 10 characters are its milliseconds in Crockford base32.
    const millis = (id: string): number => [...id.slice(id.indexOf('_') + 1, id.indexOf('_') + 11)].reduce((sum, char) => sum * 32 + CROCKFORD.indexOf(char), 0);
    expect(millis(event.id)).toBe(nowMs);
    expect(millis(event.data.object.id)).toBe(nowMs);
  });

  it('merges overrides deeply: an undefined one keeps the field, null or an array replaces it whole', () => {
    const base = testEvent('call.missed', { data: { object: { id: 'call_1', from: { number: '+15550100', name: 'Ann' } } } });
    expect(base.data.object).toEqual({ id: 'call_1', from: { number: '+15550100', name: 'Ann' } });
    const kept = testEvent('call.missed', { id: undefined, data: { object: { id: undefined } } } as never);
    expect(kept.id).toMatch(/^evt_/);
    expect(kept.data.object.id).toMatch(/^call_/);
    expect(testEvent('call.missed', { data: { object: null } } as never).data.object).toBeNull();
    expect(testEvent('call.missed', { data: ['a', 'b'] } as never).data).toEqual(['a', 'b']);
  });

  it("names each failing path of a schema's issues, plain keys or segments, and the root for an issue without one", () => {
    const failing = (issues: unknown[]) => ({ 'call.missed': { '~standard': { version: 1 as const, vendor: 'test', validate: () => ({ issues }) } } }) as never;
    const message = (issues: unknown[]): string => {
      try {
        testEvent('call.missed', {}, { schemas: failing(issues) });
      } catch (error) {
        return (error as Error).message;
      }
      return 'passed';
    };
    expect(message([{ message: 'x', path: [{ key: 'data' }, 'object', 0] }, { message: 'y', path: ['id'] }])).toBe(
      "svc-webhooks: testEvent('call.missed') fails its schema at data.object.0, id",
    );
    expect(message([{ message: 'x' }])).toBe("svc-webhooks: testEvent('call.missed') fails its schema at the root");
    // An empty list still fails, as the standard has it.
    expect(message([])).toBe("svc-webhooks: testEvent('call.missed') fails its schema at the root");
  });

  it('refuses a schema that validates asynchronously, which it cannot check', () => {
    const schemas = { 'call.missed': { '~standard': { version: 1 as const, vendor: 'test', validate: async (value: unknown) => ({ value }) } } };
    expect(() => testEvent('call.missed', {}, { schemas })).toThrow(
      new WebhookOptionsError('svc-webhooks: the schema of call.missed validates asynchronously; testEvent checks synchronously'),
    );
  });

  it('checks an event only against the schema of its own type', () => {
    const schemas = { 'webhook.test': z.object({ never: z.string() }) };
    expect(testEvent('call.missed', {}, { schemas }).type).toBe('call.missed');
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

  it("take the body's id when it is a non-empty string, and a fresh msg_ id for any other body", () => {
    expect(signedHeaders('{"id":"evt_from_body"}', { secret: SECRET })['webhook-id']).toBe('evt_from_body');
    for (const body of ['{"id":""}', '{"id":5}', '{}', 'not json', '']) {
      expect(signedHeaders(body, { secret: SECRET })['webhook-id']).toMatch(/^msg_[0-9A-Za-z]{20,}$/);
    }
  });

  it('send a string body as it is, not as a JSON string', async () => {
    const body = JSON.stringify(testEvent('webhook.test'), null, 2);
    const request = signedRequest(body, { secret: SECRET, url: 'http://receiver.test/hooks/acme' });
    expect([request.url, await request.text()]).toEqual(['http://receiver.test/hooks/acme', body]);
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

  it('delivers to a handler failing twice on the third attempt, under one id, each retry signed later by the wait on a shared fake clock', async () => {
    // The receiver and simulateDelivery share one clock, which only `sleep` moves: the schedule passes without waiting it out.
    let clock = Date.UTC(2024, 0, 1);
    const seen: Array<[string | null, number]> = [];
    let runs = 0;
    const verifying = verifyWebhook({ secret: SECRET, now: () => clock, onHandlerError: () => undefined }, () => {
      if (++runs < 3) throw new Error('not yet');
    });
    const receiver = (request: Request): Promise<Response> => {
      seen.push([request.headers.get('webhook-id'), Number(request.headers.get('webhook-timestamp'))]);
      return verifying(request);
    };
    const event = testEvent('call.missed');
    const asked: number[] = [];
    const sleep = async (ms: number): Promise<void> => {
      asked.push(ms);
      clock += ms;
    };
    const result = await simulateDelivery(receiver, event, { secret: SECRET, now: () => clock, sleep });
    expect(result.delivered).toBe(true);
    expect(result.attempts.map(({ status }) => status)).toEqual([500, 500, 204]);
    expect(seen.map(([id]) => id)).toEqual([event.id, event.id, event.id]);
    expect(asked).toEqual([1_000, 2_000]);
    const start = Date.UTC(2024, 0, 1) / 1000;
    expect(seen.map(([, timestamp]) => timestamp)).toEqual([start, start + 1, start + 3]);
  });

  it('delivers to a receiver that recovers after more than its 300 s tolerance of compressed backoff, signing on its clock', async () => {
    // 15 failures: the waits before the 16th attempt, 1 s, 2 s, 4 s, 8 s, 16 s then 30 s each, come to 331 s.
    let runs = 0;
    const receiver = verifyWebhook({ secret: SECRET, onHandlerError: () => undefined }, () => {
      if (++runs <= 15) throw new Error('not yet');
    });
    const result = await simulateDelivery(receiver, testEvent('call.missed'), { secret: SECRET, maxAttempts: 20, sleep: noWait });
    expect(result.attempts.filter(({ code }) => code === 'timestamp_too_new')).toEqual([]);
    expect(result.delivered).toBe(true);
    expect(result.attempts.map(({ status }) => status)).toEqual([...Array<number>(15).fill(500), 204]);
  });

  it('refuses a clock that is not a function, before sending anything', async () => {
    let sent = 0;
    const receiver = (): Response => {
      sent += 1;
      return new Response(null, { status: 204 });
    };
    await expect(simulateDelivery(receiver, testEvent('webhook.test'), { secret: SECRET, now: 1_700_000_000_000 as never })).rejects.toThrow(
      new WebhookOptionsError('svc-webhooks: now must be a function'),
    );
    expect(sent).toBe(0);
  });

  it("reports a receiver's error code printable: control characters escaped, cut short past 200 characters", async () => {
    const codes = ['x\u001b[2J\r\nattempt 2: 204', 'y'.repeat(60 * 1024)];
    const receiver = (): Response => Response.json({ error: { code: codes.shift() } }, { status: 500 });
    const result = await simulateDelivery(receiver, testEvent('webhook.test'), { secret: SECRET, maxAttempts: 2, sleep: noWait });
    expect(result.attempts.map(({ code }) => code)).toEqual(['x\\x1b[2J\\r\\nattempt 2: 204', `${'y'.repeat(200)}…`]);
  });

  it.each([
    [{ copies: 0 }, 'copies'],
    [{ copies: 1.5 }, 'copies'],
    [{ maxAttempts: 0 }, 'maxAttempts'],
    [{ maxAttempts: Number.NaN }, 'maxAttempts'],
  ])('refuses %j before sending anything', async (counts, name) => {
    let sent = 0;
    const receiver = (): Response => {
      sent += 1;
      return new Response(null, { status: 204 });
    };
    await expect(simulateDelivery(receiver, testEvent('webhook.test'), { secret: SECRET, ...counts })).rejects.toThrow(
      new WebhookOptionsError(`svc-webhooks: ${name} must be a whole number of at least 1`),
    );
    expect(sent).toBe(0);
  });

  it('makes one attempt when maxAttempts is 1, an attempt with no answer carrying no status', async () => {
    const receiver = (): Promise<Response> => new Promise(() => undefined);
    const result = await simulateDelivery(receiver, testEvent('webhook.test'), { secret: SECRET, maxAttempts: 1, answerWindowMs: 20 });
    expect(result).toStrictEqual({ delivered: false, attempts: [{ copy: 1, ms: expect.any(Number) }] });
  });

  it('says an event is delivered only when every copy ended in a 2xx, and marks a duplicate answer alone', async () => {
    const answers = [Response.json({ received: true, duplicate: true }), new Response(null, { status: 300 })];
    const result = await simulateDelivery(() => answers.shift()!, testEvent('webhook.test'), { secret: SECRET, copies: 2, maxAttempts: 1 });
    expect(result.delivered).toBe(false);
    // In the order they ended, which either copy may win.
    expect([...result.attempts].sort((a, b) => a.copy - b.copy)).toStrictEqual([
      { copy: 1, status: 200, duplicate: true, ms: expect.any(Number) },
      { copy: 2, status: 300, ms: expect.any(Number) },
    ]);
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

/**
 * One attempt and a run of attempts as `send` and `check` make them, against
 * a node:http server whose paths each answer one way.
 */
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { answeredApplied, answeredStale, deliver, delivered, describeAttempt, post, postWithAnswer, SERVICE_TIMING, type Attempt } from '../../src/testing/delivery.js';
import { closeServer, listen } from '../helpers/http-harness.js';
import { recordingReceiver } from '../cli/delivery-scenarios.js';
import { recordedTiming } from '../cli/in-process-cli.js';

/** What each path answers: status, then body. */
const ANSWERS: Record<string, readonly [number, string]> = {
  '/error-code': [503, '{"error":{"code":"dedup_unavailable","message":"try again"}}'],
  '/numeric-code': [400, '{"error":{"code":5}}'],
  '/no-error': [200, '{"ok":true}'],
  '/json-null': [500, 'null'],
  '/not-json': [502, '<html>bad gateway</html>'],
  '/empty': [204, ''],
  '/forged-line': [400, '{"error":{"code":"x\\u001b[2J\\r\\nattempt 2: 204"}}'],
  '/long-code': [400, JSON.stringify({ error: { code: 'x'.repeat(60 * 1024) } })],
  '/duplicate': [200, '{"received":true,"duplicate":true}'],
  '/not-duplicate': [200, '{"received":true,"duplicate":"yes"}'],
};

/** What each path sends as Retry-After. */
const RETRY_AFTER: Record<string, string> = { '/in-progress': '60', '/retry-date': 'Wed, 21 Oct 2026 07:28:00 GMT', '/retry-fraction': '1.5' };

const requests: { path: string; method: string; body: string; headers: Record<string, unknown> }[] = [];
let base = '';
const server = createServer(async (req, res) => {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  requests.push({ path: req.url!, method: req.method!, body, headers: req.headers });
  if (req.url === '/hang') return;
  if (req.url === '/redirect') return res.writeHead(307, { location: '/error-code' }).end();
  if (req.url === '/outcome') return res.writeHead(204, { 'svc-webhooks-outcome': 'processed; handler-ms=3; key-id=0' }).end();
  if (req.url === '/long-outcome') return res.writeHead(204, { 'svc-webhooks-outcome': `processed; tenant=${'t'.repeat(1000)}` }).end();
  const retryAfter = RETRY_AFTER[req.url!];
  if (retryAfter !== undefined) return res.writeHead(409, { 'retry-after': retryAfter }).end();
  const [status, text] = ANSWERS[req.url!]!;
  res.writeHead(status, { 'content-type': 'application/json' }).end(text);
});
beforeAll(async () => {
  base = await listen(server);
});
afterAll(() => closeServer(server));

/** The attempt with its latency zeroed, for exact comparison. */
const withoutMs = (attempt: Attempt): Attempt => ({ ...attempt, ms: 0 });

describe('delivered', () => {
  it.each([
    [undefined, false],
    [199, false],
    [200, true],
    [299, true],
    [300, false],
  ])('counts status %s as delivered: %s', (status, expected) => {
    expect(delivered({ ms: 1, ...(status === undefined ? { failure: 'no answer within 10 s' } : { status }) })).toBe(expected);
  });
});

describe('answeredStale and answeredApplied', () => {
  it.each<[string, boolean, boolean, Attempt]>([
    ['a 204 without an outcome header', false, true, { ms: 1, status: 204 }],
    ['a stale body', true, false, { ms: 1, status: 200, stale: true }],
    ['a stale outcome header', true, false, { ms: 1, status: 200, outcome: 'stale; key-id=0' }],
    ['a processed outcome header', false, true, { ms: 1, status: 204, outcome: 'processed; handler-ms=3' }],
    ['a queued outcome header', false, true, { ms: 1, status: 202, outcome: 'queued' }],
    ['an unhandled outcome header on a 200', false, false, { ms: 1, status: 200, outcome: 'unhandled' }],
    ['a duplicate body', false, false, { ms: 1, status: 200, duplicate: true }],
    // A header of no form the receiver sends says nothing either way.
    ['an outcome header of no known form', false, true, { ms: 1, status: 204, outcome: 'Processed!' }],
    ['a 503 with a processed outcome header', false, false, { ms: 1, status: 503, outcome: 'processed' }],
  ])('reads %s as stale: %s, applied: %s', (_title, stale, applied, attempt) => {
    expect([answeredStale(attempt), answeredApplied(attempt)]).toEqual([stale, applied]);
  });
});

describe('SERVICE_TIMING', () => {
  it('pauses for the time it is given before a retry', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let paused = false;
      const pause = SERVICE_TIMING.pause(1000).then(() => {
        paused = true;
      });
      await vi.advanceTimersByTimeAsync(999);
      expect(paused).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await pause;
      expect(paused).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('describeAttempt', () => {
  it('says the status, the error code when there is one, and the latency; or why no answer came', () => {
    expect(describeAttempt({ ms: 8, status: 503, errorCode: 'dedup_unavailable' })).toBe('503 dedup_unavailable (8 ms)');
    expect(describeAttempt({ ms: 3, status: 204 })).toBe('204 (3 ms)');
    expect(describeAttempt({ ms: 10_001, failure: 'no answer within 10 s' })).toBe('no answer within 10 s (10001 ms)');
  });

  it("adds the receiver's own verdict when it sent one", () => {
    expect(describeAttempt({ ms: 3, status: 200, outcome: 'duplicate; key-id=0' })).toBe('200 (3 ms), receiver: duplicate; key-id=0');
  });
});

describe('post', () => {
  it('POSTs the body with the headers given', async () => {
    const headers = { 'content-type': 'application/json', 'webhook-id': 'msg_post_1' };
    await post(`${base}/empty`, '{"id":"msg_post_1"}', headers);
    expect(requests.at(-1)).toMatchObject({ path: '/empty', method: 'POST', body: '{"id":"msg_post_1"}', headers });
  });

  it.each([
    ['/error-code', { ms: 0, status: 503, errorCode: 'dedup_unavailable' }],
    ['/numeric-code', { ms: 0, status: 400 }],
    ['/no-error', { ms: 0, status: 200 }],
    ['/json-null', { ms: 0, status: 500 }],
    ['/not-json', { ms: 0, status: 502 }],
    ['/empty', { ms: 0, status: 204 }],
  ])('reads %s as %j: the error code only from a JSON error envelope', async (path, expected) => {
    expect(withoutMs(await post(`${base}${path}`, '{}', {}))).toStrictEqual(expected);
  });

  it('reads a Retry-After of whole seconds, and no other', async () => {
    expect(withoutMs(await post(`${base}/in-progress`, '{}', {}))).toStrictEqual({ ms: 0, status: 409, retryAfterSeconds: 60 });
    expect(withoutMs(await post(`${base}/retry-date`, '{}', {}))).toStrictEqual({ ms: 0, status: 409 });
    expect(withoutMs(await post(`${base}/retry-fraction`, '{}', {}))).toStrictEqual({ ms: 0, status: 409 });
  });

  it("tells a receiver's duplicate answer, and only one whose duplicate is true", async () => {
    expect(withoutMs(await post(`${base}/duplicate`, '{}', {}))).toStrictEqual({ ms: 0, status: 200, duplicate: true });
    expect(withoutMs(await post(`${base}/not-duplicate`, '{}', {}))).toStrictEqual({ ms: 0, status: 200 });
  });

  it('keeps the error code printable: control characters escaped, cut short past 200 characters', async () => {
    expect(withoutMs(await post(`${base}/forged-line`, '{}', {}))).toStrictEqual({ ms: 0, status: 400, errorCode: 'x\\x1b[2J\\r\\nattempt 2: 204' });
    const { errorCode } = await post(`${base}/long-code`, '{}', {});
    expect(errorCode).toBe(`${'x'.repeat(200)}…`);
  });

  it("reads the receiver's outcome header as sent, and describeAttempt prints it escaped and cut short", async () => {
    expect(withoutMs(await post(`${base}/outcome`, '{}', {}))).toStrictEqual({ ms: 0, status: 204, outcome: 'processed; handler-ms=3; key-id=0' });
    const long = await post(`${base}/long-outcome`, '{}', {});
    expect(long.outcome).toBe(`processed; tenant=${'t'.repeat(1000)}`);
    expect(describeAttempt({ ...long, ms: 1 })).toBe(`204 (1 ms), receiver: processed; tenant=${'t'.repeat(182)}…`);
    expect(describeAttempt({ ms: 1, status: 204, outcome: 'processed\u001b[2J' })).toBe('204 (1 ms), receiver: processed\\x1b[2J');
  });

  it('reports a redirect as it is, without following it', async () => {
    const before = requests.length;
    expect(withoutMs(await post(`${base}/redirect`, '{}', {}))).toStrictEqual({ ms: 0, status: 307 });
    expect(requests.slice(before).map(({ path }) => path)).toEqual(['/redirect']);
  });

  it('measures the latency from sending to the end of the answer', async () => {
    const started = performance.now();
    const { ms } = await post(`${base}/error-code`, '{}', {});
    const took = performance.now() - started;
    expect(ms).toBeGreaterThanOrEqual(0);
    expect(ms).toBeLessThanOrEqual(Math.ceil(took));
  });

  it('leaves no answer-window timer behind once answered, so a finished command exits at once', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      // The first fetch under these timers starts the HTTP client's own housekeeping timer; count after it.
      await post(`${base}/empty`, '{}', {});
      const timers = vi.getTimerCount();
      await post(`${base}/empty`, '{}', {});
      expect(vi.getTimerCount()).toBe(timers);
    } finally {
      vi.useRealTimers();
    }
  });

  it('gives up when the answer window closes', async () => {
    const attempt = await post(`${base}/hang`, '{}', {}, 50);
    expect(withoutMs(attempt)).toStrictEqual({ ms: 0, failure: 'no answer within 0.05 s' });
    expect(attempt.ms).toBeGreaterThanOrEqual(50);
  });

  it('counts a 2xx that came in time though its body streams on for ever, reading at most 64 KiB of it', async () => {
    let written = 0;
    let clientLeft!: () => void;
    const left = new Promise<void>((resolve) => (clientLeft = resolve));
    const endless = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const more = (): void => {
        while (!response.destroyed && response.write(Buffer.alloc(16 * 1024, 0x20))) written += 16 * 1024;
        if (!response.destroyed) response.once('drain', more);
      };
      response.on('close', clientLeft);
      more();
    });
    const url = await listen(endless);
    try {
      const attempt = await post(url, '{}', {}, 5_000);
      expect(delivered(attempt)).toBe(true);
      expect(withoutMs(attempt)).toStrictEqual({ ms: 0, status: 200 });
      // The client hung up rather than read on: what the server got out is bounded by the socket's buffers.
      await left;
      expect(written).toBeLessThan(16 * 1024 * 1024);
    } finally {
      await closeServer(endless);
    }
  });

  it('keeps the status of a 2xx whose body the answer window cut short', async () => {
    const slow = createServer((_request, response) => {
      response.writeHead(202);
      response.write('{"error":');
    });
    const url = await listen(slow);
    try {
      expect(withoutMs(await post(url, '{}', {}, 100))).toStrictEqual({ ms: 0, status: 202 });
    } finally {
      await closeServer(slow);
    }
  });

  it('gives the answer as text, empty for an answer without a body', async () => {
    const { answer } = await postWithAnswer(() => new Response(null, { status: 204 }), '{}', {});
    expect(answer).toBe('');
    expect((await postWithAnswer(`${base}/error-code`, '{}', {})).answer).toBe(ANSWERS['/error-code']![1]);
  });

  it('stops reading once it holds 64 KiB, without waiting for a body that never ends', async () => {
    // Exactly the bound, then nothing more, ever: a reader that asked for more would wait out the window.
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(new Uint8Array(65_536).fill(0x61)),
    });
    const { attempt, answer } = await postWithAnswer(() => new Response(body, { status: 200 }), '{}', {}, 60_000);
    expect(withoutMs(attempt)).toStrictEqual({ ms: 0, status: 200 });
    expect(answer).toBe('a'.repeat(65_536));
  });

  it('names why a connection failed: the system error code, else the error', async () => {
    const closed = await recordingReceiver([]);
    await closed.close();
    expect(withoutMs(await post(closed.url, '{}', {}))).toStrictEqual({ ms: 0, failure: 'connection failed (ECONNREFUSED)' });
    const badHeader = await post(`${base}/empty`, '{}', { 'webhook-id': 'msg\n1' });
    expect(withoutMs(badHeader)).toStrictEqual({ ms: 0, failure: 'connection failed (Headers.append: "msg\\n1" is an invalid header value.)' });
  });
});

describe('deliver', () => {
  it('signs each attempt afresh, numbers them, and stops when retryIf says so', async () => {
    let signed = 0;
    const seen: [number, number | undefined, number | undefined][] = [];
    const retryIf = (attempt: Attempt): boolean => {
      seen.push([0, attempt.status, undefined]);
      return seen.length < 2;
    };
    const timing = recordedTiming();
    const attempts = await deliver({
      url: `${base}/error-code`,
      body: '{}',
      headers: () => ({ 'x-attempt': String(++signed) }),
      retries: 5,
      backoffMs: 100,
      retryIf,
      timing,
      onAttempt: (attempt, number, nextInMs) => seen.push([number, attempt.status, nextInMs]),
    });
    expect(attempts.map(withoutMs)).toStrictEqual([1, 2].map(() => ({ ms: 0, status: 503, errorCode: 'dedup_unavailable' })));
    expect(seen).toEqual([
      [0, 503, undefined],
      [1, 503, 100],
      [0, 503, undefined],
      [2, 503, undefined],
    ]);
    expect(requests.slice(-2).map(({ headers }) => headers['x-attempt'])).toEqual(['1', '2']);
    expect(timing.pauses).toEqual([100]);
  });

  it('does not ask retryIf about a delivered attempt, nor retry it', async () => {
    const timing = recordedTiming();
    const attempts = await deliver({
      url: `${base}/empty`,
      body: '{}',
      headers: () => ({}),
      retries: 3,
      backoffMs: 100,
      retryIf: () => expect.unreachable('retryIf asked about a delivered attempt'),
      timing,
    });
    expect(attempts.map(withoutMs)).toStrictEqual([{ ms: 0, status: 204 }]);
    expect(timing.pauses).toEqual([]);
  });

  it('gives up each attempt when the answer window of its timing closes', async () => {
    const attempts = await deliver({ url: `${base}/hang`, body: '{}', headers: () => ({}), retries: 1, backoffMs: 1, timing: recordedTiming(20) });
    expect(attempts.map(withoutMs)).toStrictEqual([1, 2].map(() => ({ ms: 0, failure: 'no answer within 0.02 s' })));
  });
});

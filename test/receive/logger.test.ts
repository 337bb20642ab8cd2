/**
 * The `logger` option over real HTTP on all five entries, with a real pino
 * logger writing JSON to a stream: a failing store, a throwing handler (its
 * error whole, under pino's `err`), a queue that did not record an event, a
 * failing `onError` and a refused request each give one line with its fields
 * and nothing on `console.error`, and refusals of one code a line a minute;
 * with OpenTelemetry active, a line written inside a delivery carries its
 * trace and span ids (by pino's `mixin`, from the active context); and no
 * line holds the secret, a signature or the body. winston, through the
 * two-line logger docs/observing.md gives, writes the same fields.
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Buffer } from 'node:buffer';
import { Writable } from 'node:stream';
import pino from 'pino';
import winston from 'winston';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { verifyWebhook as fetchWebhook } from '../../adapters/fetch.js';
import { verifyWebhook as lambdaWebhook } from '../../adapters/lambda.js';
import { instrumentWebhooks } from '../../adapters/otel.js';
import type { EntryName, EventHandlers, WebhookLogger } from '../../src/index.js';
import { serveExpressHandlers, serveFastifyHandlers, serveFetch, serveHonoHandlers, serveLambda, type ServedApp } from '../helpers/adapter-servers.js';
import { now, NOW_SECONDS, SECRET, signedRequest, type SignedRequest } from '../helpers/signed-request.js';
import { TestDedupStore } from '../helpers/test-dedup-store.js';

/** A pino logger writing JSON lines to memory; `mixin` adds the active span's ids, as pino's OpenTelemetry instrumentation does. */
function pinoLines(): { readonly logger: WebhookLogger; readonly lines: () => Array<Record<string, unknown>>; readonly text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = pino(
    {
      mixin() {
        const span = trace.getSpan(context.active());
        return span === undefined ? {} : { trace_id: span.spanContext().traceId, span_id: span.spanContext().spanId };
      },
    },
    stream,
  );
  const text = (): string => chunks.join('');
  return { logger, text, lines: () => text().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>) };
}

/** What an entry runs and how it is set up for one test. */
interface Setup {
  readonly logger: WebhookLogger;
  readonly dedup: TestDedupStore | false;
  readonly on?: EventHandlers;
  readonly hand?: () => Promise<void>;
  readonly onError?: () => never;
}
type Serve = (setup: Setup) => Promise<ServedApp>;

/** The options of every entry for `setup`: `on`, or a handoff, with the logger. */
function optionsOf({ logger, dedup, on, hand, onError }: Setup) {
  const runs = hand === undefined ? { on: on ?? {} } : { handoff: { hand } };
  return { secret: SECRET, now, logger, dedup: dedup && { store: dedup }, ...runs, ...(onError !== undefined && { onError }) };
}

const entries: Array<[EntryName, Serve]> = [
  ['express', (setup) => serveExpressHandlers(optionsOf(setup) as never)],
  ['hono', (setup) => serveHonoHandlers(optionsOf(setup) as never)],
  ['fastify', (setup) => serveFastifyHandlers(optionsOf(setup) as never)],
  ['fetch', (setup) => serveFetch(fetchWebhook(optionsOf(setup) as never))],
  ['lambda', (setup) => serveLambda('http-api', lambdaWebhook(optionsOf(setup) as never))],
];

const HANDLER_ERROR = 'CRM rejected message sms_boom';
// Named, so that its frame is found in the stack.
function failingHandler(): never {
  throw new TypeError(HANDLER_ERROR);
}

describe.each(entries)('the logger option on the %s entry, over HTTP, with pino', (entry, serve) => {
  let consoleLines: ReturnType<typeof vi.spyOn>;
  beforeEach(() => {
    consoleLines = vi.spyOn(console, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => vi.restoreAllMocks());

  /** Serves `setup`, posts `request` and answers the status, the app closed after. */
  async function post(setup: Setup, request: SignedRequest): Promise<number> {
    const app = await serve(setup);
    try {
      const response = await fetch(`${app.url}/webhooks`, { method: 'POST', body: request.body, headers: request.headers });
      await response.arrayBuffer();
      return response.status;
    } finally {
      await app.close();
    }
  }

  /** Expects nothing the signature protects or proves in the log: the secret, the signature, the body. */
  function expectNoSecrets(text: string, request: SignedRequest): void {
    expect(text).not.toContain(SECRET.slice('whsec_'.length));
    expect(text).not.toContain(request.headers['webhook-signature']!.slice(3));
    expect(text).not.toContain(request.body);
  }

  it('writes a failing store as one warning with its operation, key and error, and nothing on console.error', async () => {
    const { logger, lines, text } = pinoLines();
    const dedup = new TestDedupStore();
    dedup.failing = true;
    const request = signedRequest({ id: `evt_store_${entry}` });
    expect(await post({ logger, dedup }, request)).toBe(503);
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 40,
        code: 'store_failed',
        operation: 'begin',
        key: expect.stringMatching(new RegExp(`^[\\w-]{16}:evt_store_${entry}$`)),
        errorClass: 'Error',
        errorMessage: 'the test store is down',
        msg: expect.stringContaining('the dedup store failed to begin event'),
      }),
    ]);
    expect(consoleLines).not.toHaveBeenCalled();
    expectNoSecrets(text(), request);
  });

  it("writes a throwing handler as one warning with the event's id, type and key id, and its error whole: under err, its type, message and stack", async () => {
    const { logger, lines, text } = pinoLines();
    const request = signedRequest({ id: `evt_handler_${entry}`, type: 'call.missed' });
    expect(await post({ logger, dedup: false, on: { 'call.missed': failingHandler } }, request)).toBe(500);
    const [line, ...more] = lines();
    expect(more).toEqual([]);
    expect(line).toMatchObject({
      level: 40,
      code: 'handler_failed',
      id: `evt_handler_${entry}`,
      type: 'call.missed',
      keyId: '0',
      errorClass: 'TypeError',
      errorMessage: HANDLER_ERROR,
      err: { type: 'TypeError', message: HANDLER_ERROR, stack: expect.stringMatching(/^TypeError: CRM rejected message sms_boom\n\s+at failingHandler \(.*logger\.test\.ts:\d+:\d+\)/) },
      msg: `event "evt_handler_${entry}" of type "call.missed": the handler failed (TypeError: ${HANDLER_ERROR}); the sender will retry it`,
    });
    expect(consoleLines).not.toHaveBeenCalled();
    expectNoSecrets(text(), request);
  });

  it("writes refused requests as warnings with the refusal's code and the request's id, one line per code a minute", async () => {
    const { logger, lines, text } = pinoLines();
    const app = await serve({ logger, dedup: false });
    const forged = (id: string): SignedRequest => signedRequest({ id, secret: `whsec_${Buffer.from('a-secret-rotated-the-wrong-way!!').toString('base64')}` });
    const sent = [forged(`evt_forged_${entry}`), forged(`evt_forged_again_${entry}`), signedRequest({ id: `evt_stale_${entry}`, timestamp: NOW_SECONDS - 600 })];
    try {
      for (const { body, headers } of sent) {
        const response = await fetch(`${app.url}/webhooks`, { method: 'POST', body, headers });
        expect(response.status).toBe(400);
        await response.arrayBuffer();
      }
    } finally {
      await app.close();
    }
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 40,
        code: 'invalid_signature',
        id: `evt_forged_${entry}`,
        errorClass: 'WebhookVerificationError',
        errorMessage: 'no v1 signature in webhook-signature matches the secret',
        msg: `the request with webhook-id "evt_forged_${entry}" was refused 400 invalid_signature (no v1 signature in webhook-signature matches the secret)`,
      }),
      expect.objectContaining({ level: 40, code: 'timestamp_too_old', id: `evt_stale_${entry}` }),
    ]);
    expect(consoleLines).not.toHaveBeenCalled();
    for (const request of sent) expectNoSecrets(text(), request);
  });

  it('writes a queue that did not record the event as one warning, handoff_failed', async () => {
    const { logger, lines } = pinoLines();
    const request = signedRequest({ id: `evt_queue_${entry}` });
    expect(await post({ logger, dedup: false, hand: () => Promise.reject(new Error('queue down')) }, request)).toBe(503);
    expect(lines()).toEqual([expect.objectContaining({ level: 40, code: 'handoff_failed', id: `evt_queue_${entry}`, type: 'call.missed', errorClass: 'Error' })]);
    expect(consoleLines).not.toHaveBeenCalled();
  });

  it('writes an onError that threw as one error line, and the refusal still gets the default answer', async () => {
    const { logger, lines, text } = pinoLines();
    const onError = (): never => {
      throw new RangeError('onError down');
    };
    const request = signedRequest({ id: `evt_refused_${entry}` });
    const forged = { ...request, headers: { ...request.headers, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` } };
    expect(await post({ logger, dedup: false, on: {}, onError }, forged)).toBe(400);
    expect(lines()).toEqual([
      expect.objectContaining({ level: 40, code: 'invalid_signature', id: `evt_refused_${entry}` }),
      expect.objectContaining({ level: 50, code: 'on_error_failed', id: `evt_refused_${entry}`, errorClass: 'RangeError', errorMessage: 'onError down' }),
    ]);
    expect(consoleLines).not.toHaveBeenCalled();
    expectNoSecrets(text(), forged);
  });

  it("gives a line written inside a delivery its handler span's trace and span ids, with OpenTelemetry active", async () => {
    const spans = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const instrumentation = instrumentWebhooks({ tracerProvider });
    try {
      const { logger, lines } = pinoLines();
      expect(await post({ logger, dedup: false, on: { 'call.missed': failingHandler } }, signedRequest({ id: `evt_traced_${entry}` }))).toBe(500);
      const handle = spans.getFinishedSpans().find((span) => span.name === 'webhook handle call.missed');
      expect(handle).toBeDefined();
      expect(lines()).toEqual([
        expect.objectContaining({ code: 'handler_failed', trace_id: handle!.spanContext().traceId, span_id: handle!.spanContext().spanId }),
      ]);
    } finally {
      instrumentation.stop();
      context.disable();
    }
  });
});

describe('the logger option with winston, through the two lines of docs/observing.md', () => {
  it('writes a throwing handler as one JSON warning with the same fields', async () => {
    const chunks: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString('utf8'));
        done();
      },
    });
    const log = winston.createLogger({ format: winston.format.json(), transports: [new winston.transports.Stream({ stream })] });
    const logger: WebhookLogger = { warn: (fields, message) => log.warn(message, fields), error: (fields, message) => log.error(message, fields) };
    const app = await serveFetch(fetchWebhook({ secret: SECRET, now, dedup: false, logger, on: { 'call.missed': failingHandler } }));
    try {
      const { body, headers } = signedRequest({ id: 'evt_winston' });
      expect((await fetch(`${app.url}/webhooks`, { method: 'POST', body, headers })).status).toBe(500);
    } finally {
      await app.close();
    }
    const lines = chunks.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
    // winston's JSON has no serializer for an Error: `err` comes out empty, and errorMessage holds the message.
    expect(lines).toEqual([
      {
        level: 'warn',
        message: `event "evt_winston" of type "call.missed": the handler failed (TypeError: ${HANDLER_ERROR}); the sender will retry it`,
        code: 'handler_failed',
        id: 'evt_winston',
        type: 'call.missed',
        keyId: '0',
        errorClass: 'TypeError',
        errorMessage: HANDLER_ERROR,
        err: {},
      },
    ]);
  });
});

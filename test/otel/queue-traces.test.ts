/**
 * instrumentWebhooks across a queue, over real HTTP, on both BullMQ majors
 * and each pg-boss major this Node loads: a receiver with a handoff under
 * its server span, a worker in this process, and the OpenTelemetry SDK with
 * AsyncLocalStorageContextManager and the W3C trace context and baggage
 * propagators, as the Node SDK sets them by default. One trace runs
 * from the request to the span the worker's handler starts: the send span
 * under the receiver's handler span, the job carrying its context, the
 * process span its child, the worker's handler span under that. The
 * baggage a sender's header put in the request's context goes no further.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Baggage, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import express from 'express';
import { AsyncLocalStorage } from 'node:async_hooks';
import { tracingChannel } from 'node:diagnostics_channel';
import { createServer } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { verifyWebhook } from '../../adapters/express.js';
import { instrumentWebhooks, type WebhookInstrumentation } from '../../adapters/otel.js';
import { JOB_CHANNEL, type Handoff, type JobTrace } from '../../src/index.js';
import { enqueue as bullmqEnqueue, work as bullmqWork } from '../../src/queues/bullmq/index.js';
import { enqueue as pgBossEnqueue, work as pgBossWork } from '../../src/queues/pg-boss/index.js';
import { queueDelivery, runQueuedJob } from '../../src/queues/queue-traces.js';
import { BULLMQ_MAJORS, connectionTo, dropQueue, uniqueQueueName } from '../helpers/bullmq-majors.js';
import { serveNode } from '../helpers/http-harness.js';
import { PG_BOSS_MAJORS } from '../helpers/pg-boss-majors.js';
import { pgBossSuite } from '../helpers/pg-boss-suite.js';
import { uniqueTable } from '../helpers/postgres-clients.js';
import { redisUrl } from '../helpers/redis-clients.js';
import { deliveryOf, now, SECRET, signedRequest } from '../helpers/signed-request.js';
import { TestDedupStore } from '../helpers/test-dedup-store.js';
import { uncaughtDuring } from '../helpers/uncaught.js';

const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
const tracer = tracerProvider.getTracer('test');

/** The user's code of a worker: it starts a span, as a database client's instrumentation would, or throws. */
type WorkerHandler = () => Promise<void>;

/** One queue of one engine for a test: its handoff, a worker on it, the data of its jobs. */
interface Engine {
  readonly system: 'bullmq' | 'pg-boss';
  readonly queue: string;
  readonly handoff: Handoff;
  startWorker(handler: WorkerHandler): Promise<void>;
  /** The data of every job of the queue, as stored. */
  jobData(): Promise<unknown[]>;
  /** Adds a job with `data` as another program would, bypassing enqueue. */
  addRaw(data: unknown): Promise<void>;
  close(): Promise<void>;
}

type EngineSetUp = { readonly name: string; readonly setUp: () => Promise<Engine> };

const bullmqEngines: EngineSetUp[] = BULLMQ_MAJORS.map((major) => ({
  name: major.name,
  async setUp() {
    const queue = major.queue(uniqueQueueName('otel'), redisUrl());
    const workers: Array<{ close(): Promise<void> }> = [];
    return {
      system: 'bullmq',
      queue: queue.name,
      handoff: bullmqEnqueue(queue),
      async startWorker(handler) {
        const worker = await bullmqWork(queue.name, {
          worker: { connection: connectionTo(redisUrl()) },
          bullmq: major.classes,
          dedup: { store: new TestDedupStore() },
          on: { 'call.missed': handler },
          onHandlerError: () => undefined,
        });
        worker.on('error', () => {});
        workers.push(worker);
      },
      async jobData() {
        const jobs = await (queue as unknown as { getJobs(): Promise<Array<{ data: unknown }>> }).getJobs();
        return jobs.map((job) => job.data);
      },
      async addRaw(data) {
        await queue.add('call.missed', data as never, { jobId: `raw-${uniqueTable('job')}` });
      },
      async close() {
        for (const worker of workers) await worker.close();
        await dropQueue(queue);
      },
    };
  },
}));

const pgBossEngines: EngineSetUp[] = PG_BOSS_MAJORS.map((major) => {
  const suite = pgBossSuite(major);
  return {
    name: major.name,
    async setUp() {
      const { boss, pool, table } = suite;
      const queue = uniqueTable('queue');
      await boss.createQueue(queue, { retryLimit: 0 });
      const workers: string[] = [];
      return {
        system: 'pg-boss',
        queue,
        handoff: pgBossEnqueue(boss, queue, { pool, table }),
        async startWorker(handler) {
          workers.push(await pgBossWork(boss, queue, { on: { 'call.missed': handler }, onHandlerError: () => undefined, worker: { pollingIntervalSeconds: 0.5 } }));
        },
        async jobData() {
          return (await suite.jobs(queue)).map((job) => job.data);
        },
        async addRaw(data) {
          await boss.send(queue, data as object);
        },
        async close() {
          for (const id of workers) await major.offWork(boss, queue, id);
        },
      };
    },
  };
});

/** The suite's code runs with the SDK's context manager and the W3C trace context and baggage propagators as the globals, as a Node SDK sets them. */
function usingGlobalContext(): void {
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  });
  afterAll(() => {
    context.disable();
    propagation.disable();
  });
}

/** Spans by name, once `name` has ended. */
async function finishedWith(name: string): Promise<Map<string, ReadableSpan>> {
  return vi.waitFor(
    () => {
      const finished = spans.getFinishedSpans();
      expect(finished.map((span) => span.name)).toContain(name);
      return new Map(finished.map((span) => [span.name, span]));
    },
    { timeout: 15_000, interval: 50 },
  );
}

const parentOf = (span: ReadableSpan | undefined): string | undefined => span?.parentSpanContext?.spanId;
const idOf = (span: ReadableSpan | Span | undefined): string | undefined => span?.spanContext().spanId;

describe.each([...bullmqEngines, ...pgBossEngines])('instrumentWebhooks across $name', ({ setUp }) => {
  let engine: Engine;
  let instrumentation: WebhookInstrumentation | undefined;

  usingGlobalContext();
  beforeEach(async () => {
    engine = await setUp();
    instrumentation = instrumentWebhooks({ tracerProvider });
    spans.reset();
  });
  afterEach(async () => {
    instrumentation?.stop();
    await engine.close();
  });

  /**
   * POSTs one delivery to an Express receiver whose handoff is the engine's, under a server span, in the context
   * the request's headers give by the global propagator, as an HTTP instrumentation extracts them; answers the status.
   */
  async function deliverUnder(server: Span, id: string, headers: Record<string, string> = {}): Promise<number> {
    const app = express().post('/webhooks', verifyWebhook({ secret: SECRET, now, dedup: false, handoff: engine.handoff }));
    const served = await serveNode(createServer((req, res) => context.with(trace.setSpan(propagation.extract(ROOT_CONTEXT, req.headers), server), () => app(req, res))));
    try {
      const signed = signedRequest({ id, type: 'call.missed' });
      const response = await fetch(`${served.url}/webhooks`, { method: 'POST', body: signed.body, headers: { ...signed.headers, ...headers } });
      await response.arrayBuffer();
      return response.status;
    } finally {
      await served.close();
    }
  }

  it("continues the request's trace in the worker: send under the receiver's handler span, process under send, the worker's handler span under process; the sender's baggage goes no further", async () => {
    const baggage: Array<Baggage | undefined> = [];
    await engine.startWorker(async () => {
      baggage.push(propagation.getBaggage(context.active()));
      tracer.startSpan('UPDATE calls').end();
    });
    const server = tracer.startSpan('POST /webhooks');
    expect(await deliverUnder(server, 'evt_traced', { baggage: 'user.id=admin' })).toBe(202);
    server.end();
    const byName = await finishedWith(`process ${engine.queue}`);
    const receive = byName.get('webhook receive call.missed');
    const send = byName.get(`send ${engine.queue}`);
    const process = byName.get(`process ${engine.queue}`);
    const query = byName.get('UPDATE calls');
    const handles = spans.getFinishedSpans().filter((span) => span.name === 'webhook handle call.missed');
    const receiverHandle = handles.find((span) => span.attributes['webhook.entry'] === 'express');
    const workerHandle = handles.find((span) => span.attributes['webhook.entry'] === engine.system);

    expect(parentOf(receive)).toBe(idOf(server));
    expect(parentOf(receiverHandle)).toBe(idOf(receive));
    expect(parentOf(send)).toBe(idOf(receiverHandle));
    expect(parentOf(process)).toBe(idOf(send));
    expect(parentOf(workerHandle)).toBe(idOf(process));
    expect(parentOf(query)).toBe(idOf(workerHandle));
    for (const span of [receive, receiverHandle, send, process, workerHandle, query]) expect(span?.spanContext().traceId).toBe(server.spanContext().traceId);

    const [data] = (await engine.jobData()) as Array<{ trace?: Record<string, string> }>;
    const jobId = send?.attributes['messaging.message.id'];
    expect(typeof jobId).toBe('string');
    expect(send?.kind).toBe(SpanKind.PRODUCER);
    expect(send?.attributes).toMatchObject({
      'messaging.system': engine.system,
      'messaging.destination.name': engine.queue,
      'messaging.operation.type': 'send',
      'webhook.id': 'evt_traced',
      'webhook.event.type': 'call.missed',
      'webhook.enqueue.outcome': 'queued',
    });
    // Every span of the delivery is found by the event's id.
    for (const span of [receive, receiverHandle, workerHandle]) expect(span?.attributes).toMatchObject({ 'webhook.id': 'evt_traced', 'webhook.event.type': 'call.missed' });
    expect(process?.kind).toBe(SpanKind.CONSUMER);
    expect(process?.attributes).toMatchObject({
      'messaging.system': engine.system,
      'messaging.destination.name': engine.queue,
      'messaging.operation.type': 'process',
      'messaging.message.id': jobId,
      'webhook.id': 'evt_traced',
      'webhook.event.type': 'call.missed',
      'webhook.job.outcome': 'processed',
    });
    expect(process?.status.code).toBe(SpanStatusCode.UNSET);
    expect(workerHandle?.status.code).toBe(SpanStatusCode.UNSET);
    // The job carries the send span's W3C trace context, and nothing else: no baggage the sender's header gave.
    expect(data?.trace).toEqual({ traceparent: `00-${server.spanContext().traceId}-${idOf(send)}-01` });
    expect(baggage).toEqual([undefined]);
  });

  it('marks the process span and the worker handler span failed when the handler throws, the handler span with the exception as thrown', async () => {
    const broken = new RangeError('CRM rejected message sms_boom');
    await engine.startWorker(() => Promise.reject(broken));
    expect(await deliverUnder(tracer.startSpan('POST /webhooks'), 'evt_failing')).toBe(202);
    const byName = await finishedWith(`process ${engine.queue}`);
    const process = byName.get(`process ${engine.queue}`);
    expect(process?.status.code).toBe(SpanStatusCode.ERROR);
    expect(process?.attributes['webhook.job.outcome']).toBe('failed');
    const workerHandle = spans.getFinishedSpans().find((span) => span.name === 'webhook handle call.missed' && span.attributes['webhook.entry'] === engine.system);
    expect(workerHandle?.status.code).toBe(SpanStatusCode.ERROR);
    const thrown = { 'exception.type': 'RangeError', 'exception.message': 'CRM rejected message sms_boom', 'exception.stacktrace': broken.stack };
    expect(workerHandle?.events).toEqual([expect.objectContaining({ name: 'exception', attributes: thrown })]);
    // BullMQ's job rejects with what the handler threw; pg-boss's batch fails the job itself and resolves.
    expect(process?.events).toEqual(engine.system === 'bullmq' ? [expect.objectContaining({ name: 'exception', attributes: thrown })] : []);
  });

  it("names the job in the send span, and says when pg-boss's record found the event queued before", async () => {
    const delivery = deliveryOf({ id: 'evt_twice', type: 'call.missed' });
    expect(await engine.handoff.hand(delivery)).toBeUndefined();
    expect(await engine.handoff.hand(delivery)).toBe(engine.system === 'pg-boss' ? 'duplicate' : undefined);
    const sends = spans.getFinishedSpans().filter((span) => span.name === `send ${engine.queue}`);
    // BullMQ keeps the first job of an id and adds nothing; pg-boss's enqueue finds the record and sends nothing.
    expect(sends.map((span) => span.attributes['webhook.enqueue.outcome'])).toEqual(['queued', engine.system === 'pg-boss' ? 'duplicate' : 'queued']);
    expect(typeof sends[0]?.attributes['messaging.message.id']).toBe('string');
    expect(sends[1]?.attributes['messaging.message.id']).toBe(engine.system === 'pg-boss' ? undefined : sends[0]?.attributes['messaging.message.id']);
    expect(await engine.jobData()).toHaveLength(1);
  });

  it('starts a new trace in the worker for a job that carries no usable context, and carries none when nobody instruments', async () => {
    instrumentation!.stop();
    instrumentation = undefined;
    expect((await engine.handoff.hand(deliveryOf({ id: 'evt_plain', type: 'call.missed' }))) ?? 'queued').toBe('queued');
    expect(await engine.jobData()).toEqual([expect.not.objectContaining({ trace: expect.anything() })]);

    instrumentation = instrumentWebhooks({ tracerProvider });
    await engine.addRaw({ delivery: deliveryOf({ id: 'evt_odd_trace', type: 'call.missed' }), trace: { traceparent: 42, tracestate: ['x'] } });
    let ran = 0;
    // Started inside a span of the application's start-up: its jobs' promises inherit that context, which is no job's parent.
    const startUp = tracer.startSpan('start-up');
    await context.with(trace.setSpan(context.active(), startUp), () => engine.startWorker(async () => void (ran += 1)));
    startUp.end();
    await vi.waitFor(() => expect(spans.getFinishedSpans().filter((span) => span.name === `process ${engine.queue}`)).toHaveLength(2), { timeout: 15_000, interval: 50 });
    expect(ran).toBe(2);
    for (const process of spans.getFinishedSpans().filter((span) => span.name === `process ${engine.queue}`)) expect(process.parentSpanContext).toBeUndefined();
  });
});

describe('instrumentWebhooks on the queue channels themselves', () => {
  let instrumentation: WebhookInstrumentation;
  usingGlobalContext();
  beforeEach(() => {
    instrumentation = instrumentWebhooks({ tracerProvider });
    spans.reset();
  });
  afterEach(() => instrumentation.stop());

  const delivery = deliveryOf({ id: 'evt_channel', type: 'call.missed' });
  const processSpan = (): ReadableSpan | undefined => spans.getFinishedSpans().find((span) => span.name === 'process webhooks');

  it("runs the job's claim and settling with the process span active: a span the store starts is its child", async () => {
    await runQueuedJob('bullmq', 'webhooks', 'job-1', { delivery }, async (run) => {
      tracer.startSpan('EVALSHA begin').end();
      run.ended('processed');
    });
    const claim = spans.getFinishedSpans().find((span) => span.name === 'EVALSHA begin');
    expect(parentOf(claim)).toBe(idOf(processSpan()));
  });

  it('marks a job that failed, with what it threw, and not one BullMQ put back for another worker to finish', async () => {
    const failure = new Error('handler down');
    await expect(
      runQueuedJob('bullmq', 'webhooks', 'job-2', { delivery }, async (run) => {
        run.ended('failed');
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(processSpan()?.status.code).toBe(SpanStatusCode.ERROR);
    expect(processSpan()?.events.map((event) => event.name)).toEqual(['exception']);
    spans.reset();
    await expect(
      runQueuedJob('bullmq', 'webhooks', 'job-3', { delivery }, async (run) => {
        run.ended('postponed');
        throw new Error('DelayedError');
      }),
    ).rejects.toThrow('DelayedError');
    expect(processSpan()?.attributes['webhook.job.outcome']).toBe('postponed');
    expect(processSpan()?.status.code).toBe(SpanStatusCode.UNSET);
    expect(processSpan()?.events).toEqual([]);
  });

  it('marks the send span failed, with what the queue threw, when the job was not queued', async () => {
    const down = new Error('Redis is down');
    await expect(queueDelivery('bullmq', 'webhooks', delivery, () => Promise.reject(down))).rejects.toBe(down);
    const send = spans.getFinishedSpans().find((span) => span.name === 'send webhooks');
    expect(send?.status.code).toBe(SpanStatusCode.ERROR);
    expect(send?.events.map((event) => event.name)).toEqual(['exception']);
    expect(send?.attributes['webhook.enqueue.outcome']).toBeUndefined();
  });

  it('runs the job inside the context an earlier subscriber of the job channel gave it, with the process span active', async () => {
    // Another tool's subscriber, there first: its runWithin is wrapped, not replaced.
    instrumentation.stop();
    const store = new AsyncLocalStorage<string>();
    const none = (): void => undefined;
    const start = (message: unknown): void => {
      (message as JobTrace).runWithin = (code) => store.run('earlier', code);
    };
    const earlier = { start, end: none, asyncStart: none, asyncEnd: none, error: none };
    tracingChannel(JOB_CHANNEL).subscribe(earlier);
    instrumentation = instrumentWebhooks({ tracerProvider });
    const seen: unknown[] = [];
    try {
      await runQueuedJob('bullmq', 'webhooks', 'job-4', { delivery }, async (run) => {
        seen.push(store.getStore(), idOf(trace.getActiveSpan()));
        run.ended('processed');
      });
    } finally {
      tracingChannel(JOB_CHANNEL).unsubscribe(earlier);
    }
    expect(seen).toEqual(['earlier', idOf(processSpan())]);
  });

  it('restarted while jobs are queued and run, throws nothing as they end or fail, and ends none of the spans the stopped one opened', async () => {
    let goOn!: () => void;
    const held = new Promise<void>((resolve) => (goOn = resolve));
    const underWay = [
      queueDelivery('bullmq', 'webhooks', delivery, () => held.then(() => ({ jobId: 'job-5' }))),
      queueDelivery('bullmq', 'webhooks', delivery, () => held.then(() => Promise.reject(new Error('Redis is down')))),
      runQueuedJob('bullmq', 'webhooks', 'job-6', { delivery }, (run) => held.then(() => run.ended('processed'))),
      runQueuedJob('bullmq', 'webhooks', 'job-7', { delivery }, async (run) => {
        await held;
        run.ended('failed');
        throw new Error('handler down');
      }),
    ];
    const { result: settled, uncaught } = await uncaughtDuring(() => {
      instrumentation.stop();
      instrumentation = instrumentWebhooks({ tracerProvider });
      goOn();
      return Promise.allSettled(underWay);
    });
    expect(settled.map(({ status }) => status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    expect(uncaught).toEqual([]);
    expect(spans.getFinishedSpans()).toEqual([]);
  });
});

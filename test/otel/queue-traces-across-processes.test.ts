/**
 * instrumentWebhooks across a queue whose worker runs in another process,
 * on both BullMQ majors and each pg-boss major this Node loads: the trace
 * crosses the process boundary in the job alone. A receiver in this process
 * queues one signed delivery under a server span; a first worker process
 * (traced-worker-process.ts) takes the job and is killed with SIGKILL
 * mid-handler; the engine gives the job to a second worker process (BullMQ
 * finds it stalled, pg-boss expires and retries it). The second worker's
 * process span continues the request's trace as the child of the
 * receiver's send span, its handler span is the process span's child, and
 * the span the handler starts is the handler span's child.
 */
import { context, propagation, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import express from 'express';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { verifyWebhook } from '../../adapters/express.js';
import { instrumentWebhooks, type WebhookInstrumentation } from '../../adapters/otel.js';
import type { Handoff } from '../../src/index.js';
import { enqueue as bullmqEnqueue } from '../../src/queues/bullmq/index.js';
import { enqueue as pgBossEnqueue } from '../../src/queues/pg-boss/index.js';
import { migrateProcessedEvents } from '../../src/stores/postgres/migrate.js';
import { BULLMQ_MAJORS, dropQueue, uniqueQueueName } from '../helpers/bullmq-majors.js';
import { serveNode } from '../helpers/http-harness.js';
import { startTestBoss } from '../helpers/pg-boss-instance.js';
import { PG_BOSS_MAJORS } from '../helpers/pg-boss-majors.js';
import { uniqueTable } from '../helpers/postgres-clients.js';
import { postgresSuite } from '../helpers/postgres-suite.js';
import { randomPrefix, redisUrl } from '../helpers/redis-clients.js';
import { now, SECRET, signedRequest } from '../helpers/signed-request.js';
import type { SpanLine, TracedWorkerSettings } from '../helpers/traced-worker-process.js';
import { until } from '../helpers/until.js';

const WORKER = new URL('../helpers/traced-worker-process.ts', import.meta.url).pathname;
const EVENT = 'evt_across_processes';
/** Loading Node, tsx and an engine takes a few seconds on a busy machine; taking the job, a poll more. */
const STARTED_WITHIN_MS = 10_000;
/** The second worker's start, the engine's retry of the killed worker's job (its stall or expiry), and the run. */
const HANDLED_WITHIN_MS = 14_000;

const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
const tracer = tracerProvider.getTracer('test');

/** A worker process: the spans it wrote, what it printed, and how to kill it. */
interface WorkerProcess {
  readonly spans: readonly SpanLine[];
  /** Resolves once it printed `line`; rejects, with the end of its stderr, if it exited first or `timeoutMs` passed. */
  printed(line: string, timeoutMs: number): Promise<void>;
  /** Whether it printed `line`. */
  hasPrinted(line: string): boolean;
  /** SIGKILLs it, as a crashing host would; resolves once it exited. */
  kill(): Promise<void>;
}

/** The worker processes of the running test, killed after it, and at exit should the run end without its hooks. */
const children = new Set<ChildProcess>();
const killAtExit = (): void => {
  for (const child of children) child.kill('SIGKILL');
};

/** Starts a worker process with `settings`; what it prints is read as it comes, its span lines apart from the rest. */
function startWorker(settings: TracedWorkerSettings): WorkerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(settings)], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const lines: string[] = [];
  const written: SpanLine[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => void (stderr = (stderr + chunk.toString()).slice(-4_000)));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('{')) written.push(JSON.parse(line) as SpanLine);
    else lines.push(line);
  });
  return {
    spans: written,
    async printed(line, timeoutMs) {
      try {
        await until(() => {
          if (lines.includes(line)) return true;
          if (child.exitCode !== null || child.signalCode !== null) throw new Error(`it exited (${child.exitCode ?? child.signalCode})`);
          return false;
        }, timeoutMs);
      } catch (error) {
        throw new Error(`a worker process did not print ${JSON.stringify(line)}: ${(error as Error).message}; it printed ${JSON.stringify(lines)}; stderr: ${stderr}`);
      }
    },
    hasPrinted: (line) => lines.includes(line),
    kill: () => killChild(child),
  };
}

/** SIGKILLs `child` unless it has exited; resolves once it has. */
async function killChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const ended = once(child, 'exit');
  child.kill('SIGKILL');
  await ended;
}

/** One queue of one engine for a test: its handoff, and the settings of worker processes on it. */
interface Engine {
  readonly system: 'bullmq' | 'pg-boss';
  readonly queue: string;
  readonly handoff: Handoff;
  workerSettings(hang: boolean): TracedWorkerSettings;
  close(): Promise<void>;
}

type EngineSetUp = { readonly name: string; readonly setUp: () => Promise<Engine> };

const bullmqEngines: EngineSetUp[] = BULLMQ_MAJORS.map((major) => ({
  name: major.name,
  async setUp() {
    const queue = major.queue(uniqueQueueName('otel-processes'), redisUrl());
    queue.on('error', () => {});
    const dedupPrefix = randomPrefix();
    return {
      system: 'bullmq',
      queue: queue.name,
      handoff: bullmqEnqueue(queue),
      // The killed worker's job stalls once its lock (1 s) lapses, and its claim on the event once its lease (1.5 s) does.
      workerSettings: (hang) => ({ engine: 'bullmq', major: major.name, redisUrl: redisUrl(), queue: queue.name, dedupPrefix, leaseMs: 1_500, stalledMs: 1_000, hang }),
      close: () => dropQueue(queue),
    };
  },
}));

const postgres = postgresSuite();
const pgBossEngines: EngineSetUp[] = PG_BOSS_MAJORS.map((major) => ({
  name: major.name,
  async setUp() {
    const table = postgres.table('processed');
    await migrateProcessedEvents(postgres.pool, { table });
    // This process's pg-boss runs no handler: it fails the killed worker's active job once it expires, for its retry.
    const { boss, schema, close } = await startTestBoss(postgres.url, { schedule: false, ...major.expiryEverySecond }, major);
    const queue = uniqueTable('queue');
    await boss.createQueue(queue, { retryLimit: 1, retryDelay: 0, expireInSeconds: 2 });
    return {
      system: 'pg-boss',
      queue,
      handoff: pgBossEnqueue(boss, queue, { pool: postgres.pool, table }),
      workerSettings: (hang) => ({ engine: 'pg-boss', major: major.major, url: postgres.url, schema, queue, hang }),
      close,
    };
  },
}));

const spanNamed = (from: readonly SpanLine[], name: string): SpanLine | undefined => from.find((span) => span.name === name);

describe.each([...bullmqEngines, ...pgBossEngines])('instrumentWebhooks across worker processes of $name', ({ setUp }) => {
  let engine: Engine | undefined;
  let instrumentation: WebhookInstrumentation | undefined;

  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    process.on('exit', killAtExit);
  });
  afterAll(() => {
    context.disable();
    propagation.disable();
    process.off('exit', killAtExit);
  });
  beforeEach(async () => {
    engine = await setUp();
    instrumentation = instrumentWebhooks({ tracerProvider });
    spans.reset();
  }, 20_000);
  afterEach(async () => {
    instrumentation?.stop();
    // Killed before the queue goes: a worker must not outlive its test, failed or not.
    await Promise.all([...children].map((child) => killChild(child)));
    children.clear();
    await engine?.close();
  }, 20_000);

  /** POSTs one delivery to an Express receiver whose handoff is the engine's, under a server span; answers the status. */
  async function deliverUnder(server: Span, handoff: Handoff): Promise<number> {
    const app = express().post('/webhooks', verifyWebhook({ secret: SECRET, now, dedup: false, handoff }));
    const served = await serveNode(createServer((req, res) => context.with(trace.setSpan(context.active(), server), () => app(req, res))));
    try {
      const response = await fetch(`${served.url}/webhooks`, { method: 'POST', ...signedRequest({ id: EVENT, type: 'call.missed' }) });
      await response.arrayBuffer();
      return response.status;
    } finally {
      await served.close();
    }
  }

  it("continues the request's trace in a second worker process that runs the job after the first was killed mid-handler", async () => {
    const { system, queue, handoff } = engine!;
    const server = tracer.startSpan('POST /webhooks');
    expect(await deliverUnder(server, handoff)).toBe(202);
    server.end();
    const send = spans.getFinishedSpans().find((span) => span.name === `send ${queue}`);
    expect(send?.kind).toBe(SpanKind.PRODUCER);
    expect(typeof send?.attributes['messaging.message.id']).toBe('string');

    const first = startWorker(engine!.workerSettings(true));
    await first.printed(`started ${EVENT}`, STARTED_WITHIN_MS);
    await first.kill();
    expect(first.hasPrinted(`handled ${EVENT}`)).toBe(false);

    const second = startWorker(engine!.workerSettings(false));
    await second.printed(`handled ${EVENT}`, HANDLED_WITHIN_MS);
    // The process span ends after the handler, once the run has settled.
    const processSpan = await vi.waitFor(
      () => {
        const ended = second.spans.find((span) => span.name === `process ${queue}` && span.attributes['webhook.job.outcome'] === 'processed');
        expect(ended).toBeDefined();
        return ended!;
      },
      { timeout: 3_000, interval: 50 },
    );
    const handle = spanNamed(second.spans, 'webhook handle call.missed');
    const query = spanNamed(second.spans, 'UPDATE calls');
    const traceId = server.spanContext().traceId;

    expect(processSpan).toMatchObject({
      traceId,
      parentSpanId: send!.spanContext().spanId,
      kind: SpanKind.CONSUMER,
      statusCode: SpanStatusCode.UNSET,
      attributes: {
        'messaging.system': system,
        'messaging.destination.name': queue,
        'messaging.message.id': send!.attributes['messaging.message.id'],
      },
    });
    expect(handle).toMatchObject({ traceId, parentSpanId: processSpan.spanId, attributes: { 'webhook.entry': system } });
    expect(query).toMatchObject({ traceId, parentSpanId: handle!.spanId });
    // A run before, which found the killed worker's claim still held and put the job back (BullMQ), continues it too.
    for (const span of second.spans) expect(span.traceId).toBe(traceId);
  }, 30_000);
});

/**
 * A worker process of the cross-process trace test, to be killed with
 * SIGKILL: `node --import tsx traced-worker-process.ts <json settings>`.
 * It runs `work()` of BullMQ or pg-boss on the queue under
 * `instrumentWebhooks()`, with the OpenTelemetry SDK as an application
 * would set it up: the AsyncLocalStorage context manager (so that the
 * handler's span is the active one) and the W3C propagator (so that the
 * job's `trace` is read). Its spans are the test's evidence, and the test
 * is in another process: each one, once ended, is written to stdout as one
 * JSON line (a `SpanLine`). Its `call.missed` handler prints
 * `started <event id>`, then either hangs, so that the test can kill it
 * mid-handler, or starts and ends a span `UPDATE calls`, as a database
 * client's instrumentation would, and prints `handled <event id>`. It
 * prints `working` once its worker polls.
 */
import { context, propagation } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode, W3CTraceContextPropagator, type ExportResult } from '@opentelemetry/core';
import { BasicTracerProvider, SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { Redis } from 'ioredis';
import { instrumentWebhooks } from '../../adapters/otel.js';
import { work as bullmqWork } from '../../src/queues/bullmq/index.js';
import { work as pgBossWork } from '../../src/queues/pg-boss/index.js';
import { RedisDedupStore } from '../../src/stores/redis/index.js';
import { BULLMQ_MAJORS, connectionTo } from './bullmq-majors.js';
import { pgBossMajor } from './pg-boss-majors.js';

/** What the test hands the process. */
export type TracedWorkerSettings = {
  readonly queue: string;
  /** Whether the handler hangs after `started`, never resolving: the first worker's, killed mid-handler. */
  readonly hang: boolean;
} & (
  | {
      readonly engine: 'bullmq';
      /** The `name` of one of `BULLMQ_MAJORS` (`'BullMQ 6'`). */
      readonly major: string;
      readonly redisUrl: string;
      /** The key prefix of the workers' shared dedup store, apart from any other test's. */
      readonly dedupPrefix: string;
      /** The dedup store's lease: how long the next worker waits for the event of a killed one. */
      readonly leaseMs: number;
      /** BullMQ's `lockDuration` and `stalledInterval`: how soon the job of a killed worker is found stalled and run again. */
      readonly stalledMs: number;
    }
  | {
      readonly engine: 'pg-boss';
      /** The pg-boss major (`'10'`, `'11'`, `'12'`). */
      readonly major: string;
      readonly url: string;
      /** The schema of the test's pg-boss, which expires the jobs of killed workers. */
      readonly schema: string;
    }
);

/** One ended span, as the process writes it: a line of JSON. */
export interface SpanLine {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  /** Its `SpanKind`. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, unknown>>;
  /** Its `SpanStatusCode`. */
  readonly statusCode: number;
}

/** Writes each span as one line: stdout is a pipe, written synchronously on Linux and macOS, so no span is lost to a kill after it ended. */
class JsonLineExporter implements SpanExporter {
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    for (const span of spans) {
      const { traceId, spanId } = span.spanContext();
      const line: SpanLine = {
        name: span.name,
        traceId,
        spanId,
        parentSpanId: span.parentSpanContext?.spanId,
        kind: span.kind,
        attributes: span.attributes,
        statusCode: span.status.code,
      };
      console.log(JSON.stringify(line));
    }
    done({ code: ExportResultCode.SUCCESS });
  }

  async shutdown(): Promise<void> {}
}

const settings = JSON.parse(process.argv[2]!) as TracedWorkerSettings;

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new JsonLineExporter())] });
const tracer = tracerProvider.getTracer('traced-worker');
instrumentWebhooks({ tracerProvider });

const on = {
  'call.missed': async (event: { readonly id: string }) => {
    console.log(`started ${event.id}`);
    if (settings.hang) await new Promise<never>(() => {});
    tracer.startSpan('UPDATE calls').end();
    console.log(`handled ${event.id}`);
  },
};
// A failure is the test's to see, in the spans (their status) and in stderr.
const onHandlerError = (error: unknown): void => console.error(`traced-worker: handler failed: ${String(error)}`);

if (settings.engine === 'bullmq') {
  const major = BULLMQ_MAJORS.find(({ name }) => name === settings.major);
  if (major === undefined) throw new Error(`no BullMQ major named ${JSON.stringify(settings.major)}`);
  const client = new Redis(settings.redisUrl, { maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  const worker = await bullmqWork(settings.queue, {
    bullmq: major.classes,
    worker: { connection: connectionTo(settings.redisUrl), lockDuration: settings.stalledMs, stalledInterval: settings.stalledMs },
    dedup: {
      // Shared with the worker killed before: its claim on the event ends with its lease, not with this process.
      store: new RedisDedupStore(client, { keyPrefix: settings.dedupPrefix }),
      leaseMs: settings.leaseMs,
      // The event's key outlives the test by a minute, not the four days of the default.
      retentionMs: 60_000,
    },
    on,
    onHandlerError,
  });
  worker.on('error', (error) => console.error(`traced-worker: ${error.message}`));
  await worker.waitUntilReady();
} else {
  const boss = await pgBossMajor(settings.major).create({
    connectionString: settings.url,
    schema: settings.schema,
    max: 2,
    // The test's pg-boss made the schema and the queue, and expires the jobs of killed workers.
    supervise: false,
    schedule: false,
    migrate: false,
  });
  boss.on('error', (error) => console.error(`traced-worker: ${String(error)}`));
  await boss.start();
  await pgBossWork(boss, settings.queue, { on, onHandlerError, worker: { pollingIntervalSeconds: 0.5 } });
}
console.log('working');

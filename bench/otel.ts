/**
 * What `svc-webhooks/otel` costs a request (`npm run bench:otel`): the Fetch
 * entry with a handler of `on`, as built, timed in blocks with nobody
 * subscribed and with `instrumentWebhooks()` subscribed, the blocks
 * interleaved in one process (the instrumentation started before each of
 * its blocks and stopped after). The SDK's tracer and meter providers
 * record, with the `AsyncLocalStorageContextManager` a Node SDK registers,
 * and spans go to a processor that drops them, so the cost is the
 * instrumentation's and the SDK's, not an exporter's. Prints CPU µs per
 * request of each side and the difference, median and quartiles over rounds.
 */
import { Buffer } from 'node:buffer';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { WebhookEvent } from '../src/index.js';
import { built } from './built.js';
import { envelopeOfSize } from './payloads.js';

const { verifyWebhook } = await built<typeof import('../adapters/fetch.js')>('adapters/fetch.js');
const { instrumentWebhooks } = await built<typeof import('../adapters/otel.js')>('adapters/otel.js');
const { sign } = await built<typeof import('../src/index.js')>('src/index.js');

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400);
const SECRET = `whsec_${Buffer.from('bench-secret-bench-secret-bench!').toString('base64')}`;
const SIGNED_AT = 1_700_000_000;
const now = (): number => SIGNED_AT * 1000;

const ID_PLACEHOLDER = 'evt_000000000000000000000000';
const template = envelopeOfSize(ID_PLACEHOLDER, 1024);
const pool = Array.from({ length: 2 * REQUESTS }, (_, i) => {
  const id = `evt_${String(i).padStart(24, '0')}`;
  const body = template.replace(ID_PLACEHOLDER, id);
  return { body, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...sign(body, { id, timestamp: SIGNED_AT, secret: SECRET }) } };
});
let at = 0;
const next = (): Request => {
  const { body, headers } = pool[at++ % pool.length]!;
  return new Request('http://receiver.test/webhooks', { method: 'POST', body, headers });
};

let handled = 0;
const entry = verifyWebhook({ secret: SECRET, now, dedup: false, on: { 'message.received': (_event: WebhookEvent) => void handled++ } });

const dropped: SpanProcessor = { onStart: () => undefined, onEnd: () => undefined, forceFlush: async () => undefined, shutdown: async () => undefined };
const tracerProvider = new BasicTracerProvider({ spanProcessors: [dropped] });
const meterProvider = new MeterProvider();
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

/** CPU µs per request of one block, instrumented or not. */
async function block(instrumented: boolean): Promise<number> {
  const instrumentation = instrumented ? instrumentWebhooks({ tracerProvider, meterProvider }) : undefined;
  const before = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i++) {
    const { status } = await entry(next());
    if (status !== 204) throw new Error(`answered ${status}, not 204`);
  }
  const used = process.cpuUsage(before);
  instrumentation?.stop();
  return (used.user + used.system) / REQUESTS;
}

const quartiles = (values: readonly number[]): [number, number, number] => {
  const sorted = [...values].sort((a, b) => a - b);
  const q = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
  return [q(0.25), q(0.5), q(0.75)];
};

await block(false);
await block(true);
const off: number[] = [];
const on: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  // Each round, the other side first.
  const order = round % 2 === 0 ? [false, true] : [true, false];
  const spent = new Map<boolean, number>();
  for (const instrumented of order) spent.set(instrumented, await block(instrumented));
  off.push(spent.get(false)!);
  on.push(spent.get(true)!);
}
const [offLow, offMid, offHigh] = quartiles(off);
const [onLow, onMid, onHigh] = quartiles(on);
const [dLow, dMid, dHigh] = quartiles(on.map((value, round) => value - off[round]!));
console.log(`Node ${process.version}, Fetch entry with on, ${ROUNDS} rounds of ${REQUESTS} requests per side; CPU µs per request (median, quartiles)`);
console.log(`nobody subscribed: ${offMid.toFixed(2)} (${offLow.toFixed(2)}–${offHigh.toFixed(2)})`);
console.log(`instrumentWebhooks: ${onMid.toFixed(2)} (${onLow.toFixed(2)}–${onHigh.toFixed(2)})`);
console.log(`difference per round: +${dMid.toFixed(2)} µs (${dLow.toFixed(2)}–${dHigh.toFixed(2)}), ${handled} events handled`);

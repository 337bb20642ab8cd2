/**
 * `npm run bench:dev-relay`: what the relay of `svc-webhooks dev` adds to a
 * delivery, and what it holds after many. An Express receiver built with
 * svc-webhooks (`on`, its default dedup store, `outcomeHeader: 'on'`) gets
 * signed deliveries at `BENCH_RATE` a second (100 by default) for
 * `BENCH_SECONDS`, alternately straight and through the relay, each timed
 * from sending to the end of its answer; the figures are the latency
 * percentiles of each side and their difference. The relay runs as users
 * run it, `svc-webhooks dev` in a process of its own (from the sources,
 * through tsx); the receiver and the sender share this one. Then
 * `BENCH_DELIVERIES` (10,000) deliveries go through an in-process relay as
 * fast as four senders make them, and the run reports what its log and the
 * heap hold.
 */
import express from 'express';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { verifyWebhook } from '../adapters/express.js';
import { startRelay } from '../src/cli/dev/relay.js';
import { signedRequest, testEvent } from '../src/testing/index.js';

const RATE = Number(process.env.BENCH_RATE ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 10_000);
const SECRET = 'whsec_YmVuY2gtc2VjcmV0LWZvci10aGUtZGV2LXJlbGF5';

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function timed(url: string): Promise<number> {
  const request = signedRequest(testEvent('message.received'), { secret: SECRET, url });
  const started = performance.now();
  const answer = await fetch(request);
  await answer.arrayBuffer();
  if (answer.status !== 204) throw new Error(`unexpected ${answer.status}`);
  return performance.now() - started;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const app = express();
app.post('/webhooks', verifyWebhook({ secret: SECRET, outcomeHeader: 'on', on: { 'message.received': () => {} } }));
const receiver = createServer(app);
const receiverUrl = `${await listen(receiver)}/webhooks`;
const dev = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'dev', '--forward', receiverUrl, '--port', '0'], {
  env: { ...process.env, WEBHOOK_SECRET: SECRET },
  stdio: ['ignore', 'pipe', 'inherit'],
});
// Read to its end, as a terminal does: the relay prints a line per delivery, and a pipe left full would stall it.
let printed = '';
dev.stdout.setEncoding('utf8').on('data', (text: string) => {
  if (printed.length < 4096) printed += text;
});
while (!/^Webhooks: \S+/m.test(printed)) await once(dev.stdout, 'data');
const relayUrl = /^Webhooks: (\S+)/m.exec(printed)![1]!;

// Warm both paths up.
for (let i = 0; i < 200; i += 1) await Promise.all([timed(receiverUrl), timed(relayUrl)]);

const straight: number[] = [];
const relayed: number[] = [];
const pending: Promise<unknown>[] = [];
const intervalMs = 1000 / RATE;
const start = performance.now();
for (let i = 0; i < RATE * SECONDS; i += 1) {
  const due = start + i * intervalMs;
  const wait = due - performance.now();
  if (wait > 0) await sleep(wait);
  // Alternately, so that both sides meet the same machine.
  pending.push(i % 2 === 0 ? timed(receiverUrl).then((ms) => straight.push(ms)) : timed(relayUrl).then((ms) => relayed.push(ms)));
}
await Promise.all(pending);
dev.kill('SIGINT');

const row = (name: string, values: number[]): string =>
  `| ${name} | ${values.length} | ${percentile(values, 50).toFixed(2)} | ${percentile(values, 90).toFixed(2)} | ${percentile(values, 99).toFixed(2)} |`;
console.log(`${RATE} deliveries/s for ${SECONDS} s, alternately straight and through svc-webhooks dev (ms from sending to the end of the answer):\n`);
console.log('| path | deliveries | p50 | p90 | p99 |\n|---|---:|---:|---:|---:|');
console.log(row('straight to the receiver', straight));
console.log(row('through the relay', relayed));
console.log(`\nadded by the relay: p50 +${(percentile(relayed, 50) - percentile(straight, 50)).toFixed(2)} ms, p99 +${(percentile(relayed, 99) - percentile(straight, 99)).toFixed(2)} ms`);

const relay = await startRelay({ forward: receiverUrl, secrets: [SECRET], port: 0 });
global.gc?.();
const heapBefore = process.memoryUsage().heapUsed;
let sent = 0;
await Promise.all(
  Array.from({ length: 4 }, async () => {
    while (sent < DELIVERIES) {
      sent += 1;
      await timed(relay.webhookUrl);
    }
  }),
);
global.gc?.();
const heapAfter = process.memoryUsage().heapUsed;
const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);
console.log(
  `\nafter ${DELIVERIES} more deliveries: ${relay.log.summaries().length} records kept, ${relay.log.dropped} dropped, ` +
    `${mib(relay.log.size)} MiB counted against the 50 MiB bound, heap ${mib(heapBefore)} -> ${mib(heapAfter)} MiB${global.gc === undefined ? ' (run with --expose-gc for a collected heap)' : ''}`,
);
await relay.close();
receiver.close();

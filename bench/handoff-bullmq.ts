/**
 * `npm run bench:bullmq`: what answering with `handoff` costs. Express
 * routes on the shared Redis, each in a child process of its own that
 * reports its CPU time: a bare route that reads the body and answers 204;
 * verifyWebhook with a RedisDedupStore and a 204 route; and verifyWebhook
 * with the same store and `handoff: enqueue(queue)` on a BullMQ queue, which
 * claims, adds the job, completes the claim and answers 202. Each request
 * is a 1 KiB envelope with an event id of its own. Reports the answer
 * latency (p50 and p99, from autocannon), requests per second and server
 * CPU per request, best of interleaved rounds, and the ratios to the bare
 * route. `BENCH_SECONDS` and `BENCH_ROUNDS` set the length.
 */
import { Buffer } from 'node:buffer';
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { Queue } from 'bullmq';
import express from 'express';
import { Redis } from 'ioredis';
import { verifyWebhook } from '../adapters/express.js';
import { sign } from '../src/index.js';
import { enqueue } from '../src/queues/bullmq/index.js';
import { RedisDedupStore } from '../src/stores/redis/index.js';
import { bestOf, WORST_RUN, type HttpRun } from './best-run.js';
import { kibEnvelope, numberedId } from './payloads.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SIGNED_AT = 1_700_000_000;
const SECRET = `whsec_${Buffer.from('bench-secret-bench-secret-bench!').toString('base64')}`;

/** The routes, each building its Express app in the child process that serves it. */
const ROUTES: Record<string, (prefix: string) => express.Express> = {
  'bare 204': () => express().post('/webhooks', express.raw({ type: '*/*' }), (_req, res) => void res.status(204).end()),
  'verifyWebhook + RedisDedupStore, 204': (prefix) =>
    express().post('/webhooks', verifyWebhook({ secret: SECRET, now: () => SIGNED_AT * 1000, dedup: { store: store(prefix) } }), (_req, res) => void res.status(204).end()),
  'verifyWebhook + RedisDedupStore, handoff to BullMQ (202)': (prefix) => {
    const { hostname, port } = new URL(REDIS_URL);
    const queue = new Queue(`${prefix.slice(0, -1)}-queue`, { connection: { host: hostname, port: Number(port || 6379) } });
    return express().post('/webhooks', verifyWebhook({ secret: SECRET, now: () => SIGNED_AT * 1000, dedup: { store: store(prefix) }, handoff: enqueue(queue) }));
  },
};

function store(prefix: string): RedisDedupStore {
  return new RedisDedupStore(new Redis(REDIS_URL), { keyPrefix: `${prefix}dedup:` });
}

/** Child process: serves one route, sends its port, then answers each message with its CPU time so far, in µs. */
async function serve(route: string, prefix: string): Promise<void> {
  const server = createServer(ROUTES[route]!(prefix)).listen(0, '127.0.0.1');
  await once(server, 'listening');
  process.send!({ port: (server.address() as AddressInfo).port });
  process.on('message', () => {
    const { user, system } = process.cpuUsage();
    process.send!({ cpu: user + system });
  });
}

interface Served {
  readonly child: ChildProcess;
  readonly url: string;
}

const reply = <T>(child: ChildProcess): Promise<T> => once(child, 'message').then(([message]) => message as T);

async function cpuOf(child: ChildProcess): Promise<number> {
  const answer = reply<{ cpu: number }>(child);
  child.send('cpu');
  return (await answer).cpu;
}


let sent = 0;
async function measure(route: string, { child, url }: Served, seconds: number): Promise<HttpRun> {
  const before = await cpuOf(child);
  const result = await autocannon({
    url,
    method: 'POST',
    connections: 10,
    duration: seconds,
    requests: [
      {
        setupRequest: (request) => {
          const id = numberedId(sent++);
          const body = kibEnvelope(id);
          return { ...request, body, headers: { 'content-type': 'application/json', ...sign(body, { id, timestamp: SIGNED_AT, secret: SECRET }) } };
        },
      },
    ],
  });
  const cpu = (await cpuOf(child)) - before;
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${route}: ${result.non2xx} non-2xx answers and ${result.errors} errors`);
  const { p50, p99 } = result.latency;
  return { p50, p99, perSecond: result.requests.average, cpuPerRequest: cpu / result.requests.total };
}

async function main(): Promise<void> {
  const prefix = `svc-webhooks-bench-${randomBytes(6).toString('hex')}:`;
  const routes = Object.keys(ROUTES);
  const served: Served[] = [];
  for (const route of routes) {
    const child = fork(new URL(import.meta.url).pathname, ['serve', route, prefix], { execArgv: process.execArgv });
    const { port } = await reply<{ port: number }>(child);
    served.push({ child, url: `http://127.0.0.1:${port}/webhooks` });
  }
  try {
    for (const [index, route] of routes.entries()) await measure(route, served[index]!, 1);
    const best = routes.map(() => WORST_RUN);
    // Interleaved, keeping each route's best.
    for (let round = 0; round < ROUNDS; round++) {
      for (const [index, route] of routes.entries()) best[index] = bestOf(best[index]!, await measure(route, served[index]!, SECONDS));
    }
    const bare = best[0]!;
    console.log(`Express on Node ${process.versions.node}, 1 KiB envelopes, 10 connections, best of ${ROUNDS} interleaved runs of ${SECONDS} s\n`);
    console.log('| route | p50 ms | p99 ms | req/s | server CPU µs/req | CPU vs bare |\n|---|---:|---:|---:|---:|---:|');
    for (const [index, route] of routes.entries()) {
      const { p50, p99, perSecond, cpuPerRequest } = best[index]!;
      console.log(`| ${route} | ${p50} | ${p99} | ${perSecond.toFixed(0)} | ${cpuPerRequest.toFixed(1)} | ${(cpuPerRequest / bare.cpuPerRequest).toFixed(2)}× |`);
    }
  } finally {
    for (const { child } of served) child.kill();
    const { hostname, port } = new URL(REDIS_URL);
    const queue = new Queue(`${prefix.slice(0, -1)}-queue`, { connection: { host: hostname, port: Number(port || 6379) } });
    await queue.obliterate({ force: true });
    await queue.close();
    const redis = new Redis(REDIS_URL);
    for (let cursor = '0'; ; ) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}dedup:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.unlink(...keys);
      if ((cursor = next) === '0') break;
    }
    redis.disconnect();
  }
}

if (process.argv[2] === 'serve') await serve(process.argv[3]!, process.argv[4]!);
else await main();

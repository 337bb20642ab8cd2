/**
 * `npm run bench:http`: requests per second of each framework's webhook
 * route behind verifyWebhook against the same framework's bare route that
 * reads the raw body and answers 204. Each server runs in its own child
 * process (`bench/http.ts serve <case>`) so the load generator does not share
 * its event loop. Every request carries the same 1 KiB envelope, signed at a
 * fixed time that the receivers' clock (`now`) is pinned to.
 */
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { serve as serveHono } from '@hono/node-server';
import autocannon from 'autocannon';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { Hono } from 'hono';
import { verifyWebhook as expressWebhook } from '../adapters/express.js';
import { verifyWebhook as fastifyWebhook } from '../adapters/fastify.js';
import { verifyWebhook as honoWebhook } from '../adapters/hono.js';
import { sign, type ReceiverOptions } from '../src/index.js';

const SECONDS_PER_RUN = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP_SECONDS = 1;
const SIGNED_AT = 1_700_000_000;
const receiverOptions: ReceiverOptions = {
  secret: `whsec_${Buffer.from('bench-secret-bench-secret-bench!').toString('base64')}`,
  now: () => SIGNED_AT * 1000,
};

/** A message.received envelope of 1 KiB, shaped as the service sends it. */
function envelope(): string {
  const base = {
    id: 'evt_01HV6Q7Z8K3M2N4P5R6S7T8V9W',
    type: 'message.received',
    created_at: '2023-11-14T22:13:20Z',
    data: {
      object: {
        id: 'msg_01HV6Q7Z8K3M2N4P5R6S7T8V9X',
        from: '+15555550123',
        to: '+15555550199',
        direction: 'inbound',
        media: [],
        text: '',
      },
    },
  };
  const text = 'Hi, can you call me back about the appointment tomorrow? '.repeat(20);
  base.data.object.text = text.slice(0, 1024 - JSON.stringify(base).length);
  return JSON.stringify(base);
}

const body = envelope();
const signature = sign(body, { id: 'evt_01HV6Q7Z8K3M2N4P5R6S7T8V9W', timestamp: SIGNED_AT, secret: receiverOptions.secret });
const headers = { 'content-type': 'application/json', ...signature };

/** Starts a server on 127.0.0.1; answers its port. */
type Start = () => Promise<number>;

interface BenchCase {
  readonly framework: string;
  /** `bare` is the baseline the other variants of the framework are compared with. */
  readonly variant: string;
  readonly start: Start;
}

async function listenNode(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

function expressServer(...route: express.RequestHandler[]): Start {
  const app = express();
  app.post('/webhooks', ...route, (_req, res) => {
    res.status(204).end();
  });
  return () => listenNode(createServer(app));
}

function honoServer(route: (app: Hono) => void): Start {
  const app = new Hono();
  route(app);
  return () => listenNode(serveHono({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server);
}

function fastifyServer(register: (app: FastifyInstance) => unknown): Start {
  return async () => {
    const app = Fastify();
    await register(app);
    await app.listen({ port: 0, host: '127.0.0.1' });
    return (app.server.address() as AddressInfo).port;
  };
}

const noContent = async (_request: unknown, reply: { code(status: number): { send(): unknown } }) => reply.code(204).send();

// One entry per measured server; a new variant (say, Express with a dedup store) is one more line.
const cases: readonly BenchCase[] = [
  { framework: 'express', variant: 'bare', start: expressServer(express.raw({ type: '*/*' })) },
  { framework: 'express', variant: 'verifyWebhook', start: expressServer(expressWebhook(receiverOptions)) },
  {
    framework: 'hono',
    variant: 'bare',
    start: honoServer((app) =>
      app.post('/webhooks', async (c) => {
        await c.req.arrayBuffer();
        return c.body(null, 204);
      }),
    ),
  },
  {
    framework: 'hono',
    variant: 'verifyWebhook',
    start: honoServer((app) => app.post('/webhooks', honoWebhook(receiverOptions), (c) => c.body(null, 204))),
  },
  {
    framework: 'fastify',
    variant: 'bare',
    start: fastifyServer(async (app) => {
      app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, raw, done) => done(null, raw));
      app.post('/webhooks', noContent);
    }),
  },
  {
    framework: 'fastify',
    variant: 'verifyWebhook',
    start: fastifyServer((app) =>
      app.register(fastifyWebhook({ ...receiverOptions, routes: (webhooks) => void webhooks.post('/webhooks', noContent) })),
    ),
  },
];

const caseName = (entry: BenchCase): string => `${entry.framework} ${entry.variant}`;

/** Child process: serve one case and print its port. */
async function serveCase(name: string): Promise<void> {
  const entry = cases.find((candidate) => caseName(candidate) === name);
  if (!entry) throw new Error(`no bench case named ${name}`);
  console.log(await entry.start());
}

/** Starts a case's server in a child process; answers its URL and a way to stop it. */
async function spawnServer(entry: BenchCase): Promise<{ url: string; stop: () => void }> {
  const script = new URL(import.meta.url).pathname;
  const child = spawn(process.execPath, [...process.execArgv, script, 'serve', caseName(entry)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [port] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  return { url: `http://127.0.0.1:${port}/webhooks`, stop: () => child.kill() };
}

async function requestsPerSecond(entry: BenchCase, url: string, duration: number): Promise<number> {
  const result = await autocannon({ url, method: 'POST', body, headers, connections: 10, duration });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${caseName(entry)}: ${result.non2xx} non-2xx answers and ${result.errors} errors`);
  }
  return result.requests.average;
}

async function main(): Promise<void> {
  console.log(
    `POST of a ${Buffer.byteLength(body)} byte envelope, 10 connections, ` +
      `best of ${ROUNDS} interleaved runs of ${SECONDS_PER_RUN} s per case\n`,
  );
  const servers = await Promise.all(cases.map(spawnServer));
  try {
    for (const [index, entry] of cases.entries()) await requestsPerSecond(entry, servers[index]!.url, WARMUP_SECONDS);
    // Interleaved rounds and the best run of each: other load on the machine only ever slows a run down.
    const best = cases.map(() => 0);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [index, entry] of cases.entries()) {
        best[index] = Math.max(best[index]!, await requestsPerSecond(entry, servers[index]!.url, SECONDS_PER_RUN));
      }
    }
    printTable(best);
  } finally {
    for (const server of servers) server.stop();
  }
}

function printTable(best: readonly number[]): void {
  const bare = new Map(cases.flatMap((entry, index) => (entry.variant === 'bare' ? [[entry.framework, best[index]!]] : [])));
  const rows = [['framework', 'variant', 'req/s', 'vs bare']];
  for (const [index, entry] of cases.entries()) {
    const perSecond = best[index]!;
    const baseline = bare.get(entry.framework);
    const change =
      entry.variant === 'bare' || baseline === undefined ? '' : `${(((perSecond - baseline) / baseline) * 100).toFixed(1)}%`;
    rows.push([entry.framework, entry.variant, perSecond.toFixed(0), change]);
  }
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  '));
}

if (process.argv[2] === 'serve') await serveCase(process.argv[3] ?? '');
else await main();

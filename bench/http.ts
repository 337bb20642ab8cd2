/**
 * `npm run bench:http`: requests per second of each framework's webhook
 * route behind verifyWebhook, against the same framework's bare route that
 * reads the raw body and answers 204, and against the bare route plus the
 * least verification work done inline with raw node:crypto (the limit). The
 * Express route is also measured with each dedup store; the Fetch adapter is
 * served by Node through @hono/node-server, as its bare Fetch route is, and
 * the h3 entry on an app of each h3 major, as its bare routes are, and the
 * NestJS module on platform-express beside a bare Nest controller that reads
 * the raw body Nest keeps (`rawBody: true`). Each
 * server runs in its own child process (`bench/http.ts serve <case>`) so the
 * load generator does not share its event loop, and reports its own CPU time
 * (process.cpuUsage) around each run. Every request is a 1 KiB envelope with
 * an event id of its own, so dedup stores see new events, signed at a fixed
 * time that the receivers' clock (`now`) is pinned to.
 */
import 'reflect-metadata';
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { serve as serveHono } from '@hono/node-server';
import { Controller, HttpCode, Injectable, Module, Post, Req, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import autocannon from 'autocannon';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { H3, toNodeHandler, type H3Event } from 'h3';
import { createApp, createRouter, defineEventHandler, readRawBody, toNodeListener, type EventHandler } from 'h3-v1';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import { verifyWebhook as expressWebhook } from '../adapters/express.js';
import { verifyWebhook as fastifyWebhook } from '../adapters/fastify.js';
import { verifyWebhook as fetchWebhook } from '../adapters/fetch.js';
import { verifyWebhook as h3Webhook } from '../adapters/h3.js';
import { verifyWebhook as honoWebhook } from '../adapters/hono.js';
import { OnWebhook, WebhooksModule } from '../adapters/nestjs.js';
import { MemoryDedupStore, sign, type ReceiverOptions, type SingleEndpoint } from '../src/index.js';
import { RedisDedupStore } from '../src/stores/redis/index.js';
import { rawVerify } from './limit.js';
import { kibEnvelope, numberedId } from './payloads.js';

const SECONDS_PER_RUN = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP_SECONDS = 1;
const SIGNED_AT = 1_700_000_000;
const SECRET = `whsec_${Buffer.from('bench-secret-bench-secret-bench!').toString('base64')}`;
const KEY = Buffer.from(SECRET.slice(6), 'base64');
// Dedup off unless a case adds a store: the plain verifyWebhook rows measure verification alone.
const receiverOptions: ReceiverOptions & SingleEndpoint = { secret: SECRET, now: () => SIGNED_AT * 1000, dedup: false };

let sent = 0;

/** The next request: a new event id, signed like the service signs it. */
function nextRequest(request: autocannon.Request): autocannon.Request {
  const id = numberedId(sent++);
  const body = kibEnvelope(id);
  const signature = sign(body, { id, timestamp: SIGNED_AT, secret: SECRET });
  return { ...request, body, headers: { 'content-type': 'application/json', ...signature } };
}

/** The limit: verification done inline with raw node:crypto, as little work as gives the same result. */
function verifyInline(headers: (name: string) => string | undefined, body: Buffer): void {
  const header = (name: string) => headers(name) ?? '';
  rawVerify(KEY, header('webhook-id'), header('webhook-timestamp'), header('webhook-signature'), body);
}

/** Starts a server on 127.0.0.1; answers its port. */
type Start = () => Promise<number>;

interface BenchCase {
  readonly framework: string;
  /** `bare` is the baseline, `limit` the bare route plus inline verification. */
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

/** A Fetch handler served by Node's HTTP server through @hono/node-server. */
function fetchServer(fetch: (request: Request) => Response | Promise<Response>): Start {
  return () => listenNode(serveHono({ fetch, port: 0, hostname: '127.0.0.1' }) as Server);
}

function honoServer(route: (app: Hono) => void): Start {
  const app = new Hono();
  route(app);
  return fetchServer(app.fetch);
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

function fastifyBare(verify: boolean): Start {
  return fastifyServer(async (app) => {
    // Raw bytes for every type, JSON included, as the adapter reads them.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, raw, done) => done(null, raw));
    app.post('/webhooks', async (request, reply) => {
      if (verify) verifyInline((name) => request.headers[name] as string | undefined, request.body as Buffer);
      return noContent(request, reply);
    });
  });
}

function fetchBare(verify: boolean): Start {
  return fetchServer(async (request) => {
    const body = Buffer.from(await request.arrayBuffer());
    if (verify) verifyInline((name) => request.headers.get(name) ?? undefined, body);
    return new Response(null, { status: 204 });
  });
}

function honoBare(verify: boolean): Start {
  return honoServer((app) =>
    app.post('/webhooks', async (c) => {
      const body = Buffer.from(await c.req.arrayBuffer());
      if (verify) verifyInline((name) => c.req.header(name), body);
      return c.body(null, 204);
    }),
  );
}

/** h3 2's app with `route` at POST /webhooks, behind Node's HTTP server. */
function h3Server(route: (event: H3Event) => Promise<Response>): Start {
  return () => listenNode(createServer(toNodeHandler(new H3().post('/webhooks', route))));
}

function h3Bare(verify: boolean): Start {
  return h3Server(async (event) => {
    const body = Buffer.from(await event.req.arrayBuffer());
    if (verify) verifyInline((name) => event.req.headers.get(name) ?? undefined, body);
    return new Response(null, { status: 204 });
  });
}

/** h3 1's app and router with `route` at POST /webhooks, behind Node's HTTP server. */
function h3v1Server(route: EventHandler): Start {
  return () => listenNode(createServer(toNodeListener(createApp().use(createRouter().post('/webhooks', route)))));
}

function h3v1Bare(verify: boolean): Start {
  return h3v1Server(
    defineEventHandler(async (event) => {
      const body = (await readRawBody(event, false)) ?? Buffer.alloc(0);
      if (verify) verifyInline((name) => event.node.req.headers[name] as string | undefined, body);
      // h3 1 answers null with 204.
      return null;
    }),
  );
}

/** A Nest app of `module` on platform-express, keeping the raw body as the bare controller needs. */
function nestServer(module: Type): Start {
  return async () => {
    const app = await NestFactory.create(module, { logger: false, rawBody: true });
    await app.listen(0, '127.0.0.1');
    return (app.getHttpServer().address() as AddressInfo).port;
  };
}

function nestBare(verify: boolean): Start {
  @Controller('webhooks')
  class BareController {
    @Post()
    @HttpCode(204)
    receive(@Req() req: express.Request & { rawBody: Buffer }): void {
      if (verify) verifyInline((name) => req.get(name), req.rawBody);
    }
  }
  @Module({ controllers: [BareController] })
  class BareModule {}
  return nestServer(BareModule);
}

function nestModule(): Start {
  @Injectable()
  class Messages {
    @OnWebhook('message.received')
    received(): void {}
  }
  @Module({ imports: [WebhooksModule.forRoot(receiverOptions)], providers: [Messages] })
  class WebhooksAppModule {}
  return nestServer(WebhooksAppModule);
}

// Built in the server's own process, when its case starts.
function redisDedup(): ReceiverOptions & SingleEndpoint {
  const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  return { ...receiverOptions, dedup: { store: new RedisDedupStore(client, { keyPrefix: `svc-webhooks-bench:${randomBytes(6).toString('hex')}:` }) } };
}

const cases: readonly BenchCase[] = [
  { framework: 'express', variant: 'bare', start: expressServer(express.raw({ type: '*/*' })) },
  {
    framework: 'express',
    variant: 'limit',
    start: expressServer(express.raw({ type: '*/*' }), (req, _res, next) => {
      verifyInline((name) => req.get(name), req.body as Buffer);
      next();
    }),
  },
  { framework: 'express', variant: 'verifyWebhook', start: expressServer(expressWebhook(receiverOptions)) },
  {
    framework: 'express',
    variant: 'verifyWebhook + MemoryDedupStore',
    start: () => expressServer(expressWebhook({ ...receiverOptions, dedup: { store: new MemoryDedupStore() } }))(),
  },
  { framework: 'express', variant: 'verifyWebhook + RedisDedupStore', start: () => expressServer(expressWebhook(redisDedup()))() },
  { framework: 'hono', variant: 'bare', start: honoBare(false) },
  { framework: 'hono', variant: 'limit', start: honoBare(true) },
  {
    framework: 'hono',
    variant: 'verifyWebhook',
    start: honoServer((app) => app.post('/webhooks', honoWebhook(receiverOptions), (c) => c.body(null, 204))),
  },
  { framework: 'fetch', variant: 'bare', start: fetchBare(false) },
  { framework: 'fetch', variant: 'limit', start: fetchBare(true) },
  { framework: 'fetch', variant: 'verifyWebhook', start: fetchServer(fetchWebhook(receiverOptions, () => undefined)) },
  { framework: 'h3 2', variant: 'bare', start: h3Bare(false) },
  { framework: 'h3 2', variant: 'limit', start: h3Bare(true) },
  { framework: 'h3 2', variant: 'verifyWebhook', start: h3Server(h3Webhook(receiverOptions, () => undefined)) },
  { framework: 'h3 1', variant: 'bare', start: h3v1Bare(false) },
  { framework: 'h3 1', variant: 'limit', start: h3v1Bare(true) },
  // h3 1's events are of its own H3Event class, which the entry's types (of h3 2 here) do not name.
  { framework: 'h3 1', variant: 'verifyWebhook', start: h3v1Server(h3Webhook(receiverOptions, () => undefined) as unknown as EventHandler) },
  { framework: 'nestjs', variant: 'bare', start: nestBare(false) },
  { framework: 'nestjs', variant: 'limit', start: nestBare(true) },
  { framework: 'nestjs', variant: 'WebhooksModule', start: nestModule() },
  { framework: 'fastify', variant: 'bare', start: fastifyBare(false) },
  { framework: 'fastify', variant: 'limit', start: fastifyBare(true) },
  {
    framework: 'fastify',
    variant: 'verifyWebhook',
    start: fastifyServer((app) =>
      app.register(fastifyWebhook({ ...receiverOptions, routes: (webhooks) => void webhooks.post('/webhooks', noContent) })),
    ),
  },
];

const caseName = (entry: BenchCase): string => `${entry.framework} ${entry.variant}`;

/** Child process: serve one case, print its port, then answer each `cpu` line with its CPU time so far, in µs. */
async function serveCase(name: string): Promise<void> {
  const entry = cases.find((candidate) => caseName(candidate) === name);
  if (!entry) throw new Error(`no bench case named ${name}`);
  console.log(await entry.start());
  createInterface({ input: process.stdin }).on('line', () => {
    const { user, system } = process.cpuUsage();
    console.log(user + system);
  });
}

interface BenchServer {
  readonly url: string;
  /** The server process's CPU time so far (user and system), in µs. */
  cpuMicros(): Promise<number>;
  stop(): void;
}

/** Starts a case's server in a child process. */
async function spawnServer(entry: BenchCase): Promise<BenchServer> {
  const script = new URL(import.meta.url).pathname;
  const child = spawn(process.execPath, [...process.execArgv, script, 'serve', caseName(entry)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const nextLine = async (): Promise<string> => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`${caseName(entry)}: the server exited`);
    return value;
  };
  const port = await nextLine();
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    cpuMicros: async () => {
      child.stdin.write('cpu\n');
      return Number(await nextLine());
    },
    stop: () => child.kill(),
  };
}

interface Run {
  readonly perSecond: number;
  /** The server's CPU time per request answered, in µs. */
  readonly cpuPerRequest: number;
}

async function measure(entry: BenchCase, server: BenchServer, duration: number): Promise<Run> {
  const cpuBefore = await server.cpuMicros();
  const result = await autocannon({ url: server.url, method: 'POST', connections: 10, duration, requests: [{ setupRequest: nextRequest }] });
  const cpu = (await server.cpuMicros()) - cpuBefore;
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${caseName(entry)}: ${result.non2xx} non-2xx answers and ${result.errors} errors`);
  }
  return { perSecond: result.requests.average, cpuPerRequest: cpu / result.requests.total };
}

async function main(): Promise<void> {
  console.log(
    `POST of a ${Buffer.byteLength(kibEnvelope(numberedId(0)))} byte envelope with a new event id each, 10 connections, ` +
      `best of ${ROUNDS} interleaved runs of ${SECONDS_PER_RUN} s per case (the most req/s and, apart, the least server CPU per request)\n`,
  );
  const servers = await Promise.all(cases.map(spawnServer));
  try {
    for (const [index, entry] of cases.entries()) await measure(entry, servers[index]!, WARMUP_SECONDS);
    // Interleaved rounds and the best run of each: other load on the machine only ever slows a run down.
    const best: Run[] = cases.map(() => ({ perSecond: 0, cpuPerRequest: Infinity }));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [index, entry] of cases.entries()) {
        const run = await measure(entry, servers[index]!, SECONDS_PER_RUN);
        const { perSecond, cpuPerRequest } = best[index]!;
        best[index] = { perSecond: Math.max(perSecond, run.perSecond), cpuPerRequest: Math.min(cpuPerRequest, run.cpuPerRequest) };
      }
    }
    printTable(best);
  } finally {
    for (const server of servers) server.stop();
  }
}

function printTable(best: readonly Run[]): void {
  const baseline = (framework: string, variant: string): number | undefined => {
    const index = cases.findIndex((entry) => entry.framework === framework && entry.variant === variant);
    return index === -1 ? undefined : best[index]!.perSecond;
  };
  const change = (perSecond: number, base: number | undefined): string =>
    base === undefined ? '' : `${(((perSecond - base) / base) * 100).toFixed(1)}%`;
  console.log('| framework | route | req/s | vs bare | vs limit | server CPU µs/req |\n|---|---|---:|---:|---:|---:|');
  for (const [index, entry] of cases.entries()) {
    const { perSecond, cpuPerRequest } = best[index]!;
    const vsBare = entry.variant === 'bare' ? '' : change(perSecond, baseline(entry.framework, 'bare'));
    const vsLimit = entry.variant === 'bare' || entry.variant === 'limit' ? '' : change(perSecond, baseline(entry.framework, 'limit'));
    console.log(`| ${entry.framework} | ${entry.variant} | ${perSecond.toFixed(0)} | ${vsBare} | ${vsLimit} | ${cpuPerRequest.toFixed(1)} |`);
  }
}

if (process.argv[2] === 'serve') await serveCase(process.argv[3] ?? '');
else await main();

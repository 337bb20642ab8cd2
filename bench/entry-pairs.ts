/**
 * One entry's request path against a hand-written minimum on the same host
 * (`node bench/entry-pairs.ts <pair>`, run by `entries.ts` in a process of
 * each pair's own): the minimum does the same checks
 * with raw node:crypto (read the body, the three headers, the timestamp
 * window, HMAC with timingSafeEqual, JSON.parse, the id check, the handler,
 * 204). The Fastify, Express, h3 and NestJS pairs time the entry with its
 * defaults, its own MemoryDedupStore included, against a minimum that keeps
 * the ids it has seen in a bounded Map, on apps kept across rounds. Also the
 * Fetch entry with its default MemoryDedupStore, holding about 10,000 events
 * already, against a Map seen-set holding as many; the Fetch entry with a
 * SqliteDedupStore on a WAL file holding as many, against its MemoryDedupStore,
 * and with a handler that commits twice to that file, the least two write transactions cost;
 * and the handlers of `on` against a lookup by type. Each request is a 1 KiB
 * envelope with an event id of its own, signed ahead of time, with the
 * Content-Length every host gives; a Lambda event is parsed from JSON, as
 * the runtime hands it over, an Azure request built as Azure's HttpRequest,
 * as the Functions worker builds it. Prints each side's CPU µs per request in each
 * round (`cpu-rounds.ts`), as JSON; `node bench/entry-pairs.ts <pair> minimum` (or
 * `ours`) times one side alone.
 */
import functions, { type HttpRequest as AzureHttpRequest } from '@azure/functions';
import { Controller, Injectable, Module, Post, Req, Res, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Buffer } from 'node:buffer';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import Database from 'better-sqlite3';
import express from 'express';
import Fastify from 'fastify';
import { H3 } from 'h3';
import { Hono } from 'hono';
import inject, { type DispatchFunc } from 'light-my-request';
import type { WebhookEvent } from '../src/index.js';
import { built } from './built.js';
import { rawVerify } from './limit.js';
import { cpuRounds, type CpuCase } from './cpu-rounds.js';
import { BLOCKS, PAIRS, REQUESTS, ROUNDS, STORED, type PairName } from './entry-pair-names.js';
import { kibEnvelope, numberedId } from './payloads.js';

const { verifyWebhook: azureWebhook } = await built<typeof import('../adapters/azure.js')>('adapters/azure.js');
const { verifyWebhook: expressWebhook } = await built<typeof import('../adapters/express.js')>('adapters/express.js');
const { verifyWebhook: fastifyWebhook } = await built<typeof import('../adapters/fastify.js')>('adapters/fastify.js');
const { verifyWebhook: fetchWebhook } = await built<typeof import('../adapters/fetch.js')>('adapters/fetch.js');
const { verifyWebhook: h3Webhook } = await built<typeof import('../adapters/h3.js')>('adapters/h3.js');
const { verifyWebhook: honoWebhook } = await built<typeof import('../adapters/hono.js')>('adapters/hono.js');
const { verifyWebhook: lambdaWebhook } = await built<typeof import('../adapters/lambda.js')>('adapters/lambda.js');
const { OnWebhook, WebhooksModule } = await built<typeof import('../adapters/nestjs.js')>('adapters/nestjs.js');
const { sign, MemoryDedupStore } = await built<typeof import('../src/index.js')>('src/index.js');
const { SqliteDedupStore } = await built<typeof import('../src/stores/sqlite/index.js')>('src/stores/sqlite/index.js');

const SECRET = `whsec_${Buffer.from('bench-secret-bench-secret-bench!').toString('base64')}`;
const KEY = Buffer.from(SECRET.slice(6), 'base64');
const SIGNED_AT = 1_700_000_000;
const now = (): number => SIGNED_AT * 1000;
const pair = PAIRS[process.argv[2] as PairName];
if (pair === undefined) throw new Error(`name a pair: ${Object.keys(PAIRS).join(', ')}`);
const requests = REQUESTS * pair.scale;
// As many as one case sends in a round, warm-up included: a store, new each round, never sees an id twice.
const POOL = (BLOCKS + 1) * requests;
const RETENTION_MS = 3 * 24 * 3_600_000;

interface Delivery {
  readonly id: string;
  readonly body: string;
  readonly headers: Record<string, string>;
}

/** The delivery of the `i`th event id, signed. */
function delivery(i: number): Delivery {
  const id = numberedId(i);
  const body = kibEnvelope(id);
  const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...sign(body, { id, timestamp: SIGNED_AT, secret: SECRET }) };
  return { id, body, headers };
}
const pool: Delivery[] = Array.from({ length: POOL }, (_, i) => delivery(i));
let signed = POOL;
/** A round's worth of deliveries with ids this process never signed before, for a store kept across rounds. */
const freshPool = (): Delivery[] => Array.from({ length: POOL }, () => delivery(signed++));
/** A case's own walk over `items`, from the first each round. */
function walk<T>(items: readonly T[]): () => T {
  let at = 0;
  return () => items[at++ % items.length]!;
}
const request = ({ body, headers }: Delivery): Request => new Request('http://receiver.test/webhooks', { method: 'POST', body, headers });

let handled = 0;
const handler = (_event: WebhookEvent): void => void handled++;

/** The minimum's checks on raw bytes; `null` when a check fails. */
function checked(header: (name: string) => string | null | undefined, body: string | Buffer): WebhookEvent | null {
  const id = header('webhook-id');
  const timestamp = header('webhook-timestamp');
  const signature = header('webhook-signature');
  if (!id || !timestamp || !signature) return null;
  if (Math.abs(now() / 1000 - Number(timestamp)) > 300) return null;
  const event = rawVerify(KEY, id, timestamp, signature, body) as WebhookEvent;
  return event.id === id ? event : null;
}

async function minimumFetch(incoming: Request, seen?: Map<string, true>): Promise<Response> {
  const body = Buffer.from(await incoming.arrayBuffer());
  const event = checked((name) => incoming.headers.get(name), body);
  if (event === null) return new Response(null, { status: 400 });
  if (seen !== undefined) {
    if (seen.has(event.id)) return new Response(null, { status: 200 });
    seen.set(event.id, true);
  }
  handler(event);
  return new Response(null, { status: 204 });
}

const byType: Record<string, (event: WebhookEvent) => void> = { 'message.received': handler };
async function minimumDispatch(incoming: Request): Promise<Response> {
  const body = Buffer.from(await incoming.arrayBuffer());
  const event = checked((name) => incoming.headers.get(name), body);
  if (event === null) return new Response(null, { status: 400 });
  byType[event.type]?.(event);
  return new Response(null, { status: 204 });
}

/** A function URL's event as the runtime hands it over: parsed from JSON. */
function lambdaEvent({ body, headers }: Delivery) {
  const event = {
    version: '2.0',
    routeKey: 'POST /webhooks',
    rawPath: '/webhooks',
    rawQueryString: '',
    headers: { ...headers, host: 'abc.lambda-url.us-east-1.on.aws' },
    requestContext: { http: { method: 'POST', path: '/webhooks' } },
    body,
    isBase64Encoded: false,
  };
  return JSON.parse(JSON.stringify(event)) as typeof event;
}
const lambdaPool = pool.map(lambdaEvent);
const lambdaContext = {} as never;

// Async, as a Lambda handler that answers must be: the runtime ignores a result a handler returns synchronously.
async function minimumLambda(event: (typeof lambdaPool)[number]): Promise<{ statusCode: number }> {
  // The text as the event holds it: the HMAC and JSON.parse take a string with no copy to bytes and back.
  const body = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : event.body;
  const parsed = checked((name) => event.headers[name as keyof typeof event.headers], body);
  if (parsed === null) return { statusCode: 400 };
  handler(parsed);
  return { statusCode: 204 };
}

// CommonJS whose named exports Node 20 cannot see from an ES module.
const { HttpRequest, InvocationContext } = functions;

/** The request the Azure Functions worker hands over. */
const azureRequest = ({ body, headers }: Delivery): AzureHttpRequest =>
  new HttpRequest({ method: 'POST', url: 'http://receiver.test/api/webhooks', headers, body: { string: body } });
const azureContext = new InvocationContext({ invocationId: 'bench', functionName: 'webhooks' });

async function minimumAzure(incoming: AzureHttpRequest): Promise<{ status: number }> {
  const body = Buffer.from(await incoming.arrayBuffer());
  const event = checked((name) => incoming.headers.get(name), body);
  if (event === null) return { status: 400 };
  handler(event);
  return { status: 204 };
}

const options = { secret: SECRET, now };

/** The ids an in-process dedup store holds at most, `MemoryDedupStore`'s default: past it the oldest goes. */
const SEEN_BOUND = 100_000;

/** The minimum's dedup: whether `id` was seen, recording it if not, in a Map bounded as the entries' default store is. */
function seenBefore(seen: Map<string, true>, id: string): boolean {
  if (seen.has(id)) return true;
  if (seen.size >= SEEN_BOUND) seen.delete(seen.keys().next().value!);
  seen.set(id, true);
  return false;
}

/**
 * A case on an app made once and kept across rounds, as a user's app lives as long as its process (a
 * Fastify app made anew each round had V8 remake its code for the new app's request class, which a receiver
 * pays once), each round walking deliveries its dedup store has never seen.
 */
function kept(make: () => Promise<(delivery: Delivery) => Promise<number>> | ((delivery: Delivery) => Promise<number>)): CpuCase {
  let send: ((delivery: Delivery) => Promise<number>) | undefined;
  return async () => {
    send ??= await make();
    const answer = send;
    const next = walk(freshPool());
    return () => answer(next());
  };
}

/** A Node request's body, read by hand: its chunks, joined. */
function bytesOf(incoming: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    incoming
      .on('data', (chunk: Buffer) => chunks.push(chunk))
      .on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)))
      .on('error', reject);
  });
}

/** Answers `delivery` through light-my-request, as Fastify's inject() does, on a Node request handler. */
const injectedInto =
  (dispatch: DispatchFunc) =>
  async (sent: Delivery): Promise<number> =>
    (await inject(dispatch, { method: 'POST', url: '/webhooks', ...injected(sent) })).statusCode;

/** A Nest app of `module` on platform-express, keeping the raw body as the minimum's controller reads it; answers its Express app. */
async function nestApp(module: Type): Promise<DispatchFunc> {
  const app = await NestFactory.create(module, { logger: false, rawBody: true });
  await app.init();
  return app.getHttpAdapter().getInstance();
}

/** A Map seen-set holding `STORED` events. */
function filledMap(): Map<string, true> {
  const seen = new Map<string, true>();
  for (let i = 0; i < STORED; i++) seen.set(`evt_stored_${i}`, true);
  return seen;
}

/** The store the Fetch entry creates by default, holding `STORED` processed events, as its claims leave them. */
async function filledStore(): Promise<InstanceType<typeof MemoryDedupStore>> {
  const store = new MemoryDedupStore({ now });
  for (let i = 0; i < STORED; i++) {
    const key = `stored:evt_stored_${i}`;
    const begun = await store.begin(key, 60_000);
    if (begun.state !== 'claimed') throw new Error(`the store answered ${begun.state} to a new key`);
    await store.complete(key, begun.token, RETENTION_MS);
  }
  return store;
}

let sqlite: Database.Database | undefined;
let sqliteTables = 0;

/**
 * The WAL file of this process's own, removed at exit, with `synchronous = NORMAL` (a commit is written to
 * the WAL, and made durable at the next checkpoint).
 */
function sqliteFile(): Database.Database {
  if (sqlite === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-bench-sqlite-'));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    sqlite = new Database(join(dir, 'dedup.db'));
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
  }
  return sqlite;
}

/** A handler that also commits twice to the WAL file, each time a one-row update: the least two write transactions cost. */
function committingHandler(): (event: WebhookEvent) => void {
  const db = sqliteFile();
  const table = `commits_${++sqliteTables}`;
  db.exec(`CREATE TABLE ${table} (id INTEGER PRIMARY KEY, n INTEGER NOT NULL); INSERT INTO ${table} VALUES (1, 0)`);
  const update = db.prepare(`UPDATE ${table} SET n = n + 1 WHERE id = 1`);
  return (event) => {
    update.run();
    update.run();
    handler(event);
  };
}

/** A SqliteDedupStore on the WAL file: a table new each round, holding `STORED` processed events, as its claims leave them. */
function filledSqliteStore(): InstanceType<typeof SqliteDedupStore> {
  const db = sqliteFile();
  const table = `dedup_${++sqliteTables}`;
  const store = new SqliteDedupStore(db, { table, now });
  store.migrate();
  const insert = db.prepare(`INSERT INTO ${table} (id, token, expires_at) VALUES (?, NULL, ?)`);
  db.transaction(() => {
    for (let i = 0; i < STORED; i++) insert.run(`stored:evt_stored_${i}`, now() + RETENTION_MS);
  })();
  return store;
}

/** Each pair's minimum and svc-webhooks; every case resolves to the status it answered: 204, as each request is a new event. */
const cases: Record<string, CpuCase> = {
  'Fetch: minimum': () => {
    const next = walk(pool);
    return async () => (await minimumFetch(request(next()))).status;
  },
  'Fetch: verifyWebhook': () => {
    const entry = fetchWebhook({ ...options, dedup: false }, handler);
    const next = walk(pool);
    return async () => (await entry(request(next()))).status;
  },
  'Fetch + dedup: minimum with a Map': () => {
    const seen = filledMap();
    const next = walk(pool);
    return async () => (await minimumFetch(request(next()), seen)).status;
  },
  'Fetch + dedup: verifyWebhook with its MemoryDedupStore': async () => {
    const entry = fetchWebhook({ ...options, dedup: { store: await filledStore() } }, handler);
    const next = walk(pool);
    return async () => (await entry(request(next()))).status;
  },
  // Every event of the pool is about one object at one instant: each is claimed in order, none stale, as a
  // receiver's events mostly are.
  'Fetch + ordering: verifyWebhook with its MemoryDedupStore and ordering': async () => {
    const entry = fetchWebhook({ ...options, dedup: { store: await filledStore() }, ordering: { version: (event) => event.timestamp } }, handler);
    const next = walk(pool);
    return async () => (await entry(request(next()))).status;
  },
  'Fetch + sqlite: verifyWebhook with a SqliteDedupStore': () => {
    const entry = fetchWebhook({ ...options, dedup: { store: filledSqliteStore() } }, handler);
    const next = walk(pool);
    return async () => (await entry(request(next()))).status;
  },
  'Fetch + commits: verifyWebhook with its MemoryDedupStore, the handler committing twice': async () => {
    const entry = fetchWebhook({ ...options, dedup: { store: await filledStore() } }, committingHandler());
    const next = walk(pool);
    return async () => (await entry(request(next()))).status;
  },
  'on: minimum lookup by type': () => {
    const next = walk(pool);
    return async () => (await minimumDispatch(request(next()))).status;
  },
  'on: verifyWebhook with on': () => {
    const entry = fetchWebhook({ ...options, dedup: false, on: { 'message.received': handler } });
    const next = walk(pool);
    return async () => (await entry(request(next()))).status;
  },
  'Lambda: minimum': () => {
    const next = walk(lambdaPool);
    return async () => (await minimumLambda(next())).statusCode;
  },
  'Lambda: verifyWebhook': () => {
    const entry = lambdaWebhook({ ...options, dedup: false }, handler);
    const next = walk(lambdaPool);
    return async () => (await entry(next() as never, lambdaContext)).statusCode;
  },
  'Azure: minimum': () => {
    const next = walk(pool);
    return async () => (await minimumAzure(azureRequest(next()))).status;
  },
  'Azure: verifyWebhook': () => {
    const entry = azureWebhook({ ...options, dedup: false }, handler);
    const next = walk(pool);
    return async () => (await entry(azureRequest(next()), azureContext)).status!;
  },
  'Hono: minimum': () => {
    const app = new Hono().post('/webhooks', async (c) => await minimumFetch(c.req.raw));
    const next = walk(pool);
    return async () => (await app.request(request(next()))).status;
  },
  'Hono: verifyWebhook': () => {
    const app = new Hono().post('/webhooks', honoWebhook({ ...options, dedup: false }), (c) => {
      handler(c.var.webhook.event);
      return c.body(null, 204);
    });
    const next = walk(pool);
    return async () => (await app.request(request(next()))).status;
  },
  'Fastify: minimum': kept(async () => {
    const seen = new Map<string, true>();
    const app = Fastify();
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, raw, done) => done(null, raw));
    app.post('/webhooks', async (incoming, reply) => {
      const event = checked((name) => incoming.headers[name] as string | undefined, incoming.body as Buffer);
      if (event === null) return reply.code(400).send();
      if (seenBefore(seen, event.id)) return reply.code(200).send();
      handler(event);
      return reply.code(204).send();
    });
    await app.ready();
    return async (sent) => (await app.inject({ method: 'POST', url: '/webhooks', ...injected(sent) })).statusCode;
  }),
  'Fastify: verifyWebhook': kept(async () => {
    const app = Fastify();
    await app.register(
      fastifyWebhook({
        ...options,
        routes: (webhooks) =>
          void webhooks.post('/webhooks', async (incoming, reply) => {
            handler(incoming.webhook.event);
            return reply.code(204).send();
          }),
      }),
    );
    await app.ready();
    return async (sent) => (await app.inject({ method: 'POST', url: '/webhooks', ...injected(sent) })).statusCode;
  }),
  'Express: minimum': kept(() => {
    const seen = new Map<string, true>();
    const app = express();
    // The bytes read by hand: express.raw() does more for them (type checks, its own stream handling) than the entry's reader.
    app.post('/webhooks', async (req, res) => {
      const event = checked((name) => req.get(name), await bytesOf(req));
      if (event === null) return void res.status(400).end();
      if (seenBefore(seen, event.id)) return void res.status(200).end();
      handler(event);
      res.status(204).end();
    });
    return injectedInto(app);
  }),
  'Express: verifyWebhook': kept(() => {
    const app = express();
    app.post('/webhooks', expressWebhook(options), (req, res) => {
      handler(req.webhook.event);
      res.status(204).end();
    });
    return injectedInto(app);
  }),
  'h3: minimum': kept(() => {
    const seen = new Map<string, true>();
    const app = new H3().post('/webhooks', async (event) => {
      const body = Buffer.from(await event.req.arrayBuffer());
      const parsed = checked((name) => event.req.headers.get(name), body);
      if (parsed === null) return new Response(null, { status: 400 });
      if (seenBefore(seen, parsed.id)) return new Response(null, { status: 200 });
      handler(parsed);
      return new Response(null, { status: 204 });
    });
    return async (sent) => (await app.fetch(request(sent))).status;
  }),
  'h3: verifyWebhook': kept(() => {
    const app = new H3().post('/webhooks', h3Webhook(options, handler));
    return async (sent) => (await app.fetch(request(sent))).status;
  }),
  'NestJS: minimum': kept(async () => {
    const seen = new Map<string, true>();
    @Controller('webhooks')
    class MinimumController {
      @Post()
      receive(@Req() req: express.Request & { rawBody: Buffer }, @Res() res: express.Response): void {
        const event = checked((name) => req.get(name), req.rawBody);
        if (event === null) return void res.status(400).end();
        if (seenBefore(seen, event.id)) return void res.status(200).end();
        handler(event);
        res.status(204).end();
      }
    }
    @Module({ controllers: [MinimumController] })
    class MinimumModule {}
    return injectedInto(await nestApp(MinimumModule));
  }),
  'NestJS: WebhooksModule': kept(async () => {
    @Injectable()
    class Messages {
      @OnWebhook('message.received')
      received(event: WebhookEvent): void {
        handler(event);
      }
    }
    @Module({ imports: [WebhooksModule.forRoot(options)], providers: [Messages] })
    class WebhooksAppModule {}
    return injectedInto(await nestApp(WebhooksAppModule));
  }),
};

function injected({ body, headers }: Delivery) {
  return { payload: body, headers };
}

// `minimum` or `ours` as a second argument times that side alone, in a process the other side never ran in.
const side = process.argv[3];
if (side !== undefined && side !== 'minimum' && side !== 'ours') throw new Error(`a side is minimum or ours, not ${side}`);
const sides = { minimum: cases[pair.minimum]!, ours: cases[pair.ours]! };
const results = await cpuRounds(side === undefined ? sides : { [side]: sides[side] }, { rounds: ROUNDS, blocks: BLOCKS, requests });
if (handled === 0) throw new Error('no handler ran');
console.log(JSON.stringify(Object.fromEntries(results)));

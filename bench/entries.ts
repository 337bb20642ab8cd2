/**
 * The cost of each entry's request path, in one process: every entry
 * against a hand-written minimum on the same host that does the same checks
 * with raw node:crypto (read the body, the three headers, the timestamp
 * window, HMAC with timingSafeEqual, JSON.parse, the id check, the handler,
 * 204). Also the default MemoryDedupStore against a Map seen-set, and the
 * handlers of `on` against a lookup by type. Each request is a 1 KiB
 * envelope with an event id of its own, signed ahead of time.
 */
import { Buffer } from 'node:buffer';
import Fastify from 'fastify';
import { Hono } from 'hono';
import type { WebhookEvent } from '../src/index.js';
import { built } from './built.js';
import { rawVerify } from './limit.js';
import { measure, microseconds, ROUNDS, TIME_MS, type Case } from './measure.js';
import { envelopeOfSize } from './payloads.js';

const { verifyWebhook: fastifyWebhook } = await built<typeof import('../adapters/fastify.js')>('adapters/fastify.js');
const { verifyWebhook: fetchWebhook } = await built<typeof import('../adapters/fetch.js')>('adapters/fetch.js');
const { verifyWebhook: honoWebhook } = await built<typeof import('../adapters/hono.js')>('adapters/hono.js');
const { verifyWebhook: lambdaWebhook } = await built<typeof import('../adapters/lambda.js')>('adapters/lambda.js');
const { sign } = await built<typeof import('../src/index.js')>('src/index.js');

const SECRET = `whsec_${Buffer.from('bench-secret-bench-secret-bench!').toString('base64')}`;
const KEY = Buffer.from(SECRET.slice(6), 'base64');
const SIGNED_AT = 1_700_000_000;
const now = (): number => SIGNED_AT * 1000;
// More than any round sends, so a store never sees an id twice within one.
const POOL = Number(process.env.BENCH_POOL ?? 60_000);

interface Delivery {
  readonly id: string;
  readonly body: string;
  readonly headers: Record<string, string>;
}

const ID_PLACEHOLDER = 'evt_000000000000000000000000';
const template = envelopeOfSize(ID_PLACEHOLDER, 1024);
const pool: Delivery[] = Array.from({ length: POOL }, (_, i) => {
  const id = `evt_${String(i).padStart(24, '0')}`;
  const body = template.replace(ID_PLACEHOLDER, id);
  return { id, body, headers: { 'content-type': 'application/json', ...sign(body, { id, timestamp: SIGNED_AT, secret: SECRET }) } };
});
let next = 0;
const delivery = (): Delivery => pool[next++ % POOL]!;
const request = ({ body, headers }: Delivery): Request => new Request('http://receiver.test/webhooks', { method: 'POST', body, headers });

let handled = 0;
const handler = (_event: WebhookEvent): void => void handled++;

/** The minimum's checks on raw bytes; `null` when a check fails. */
function checked(header: (name: string) => string | null | undefined, body: Buffer): WebhookEvent | null {
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

function lambdaEvent({ body, headers }: Delivery) {
  return {
    version: '2.0',
    routeKey: 'POST /webhooks',
    rawPath: '/webhooks',
    rawQueryString: '',
    headers: { ...headers, 'content-length': String(Buffer.byteLength(body)), host: 'abc.lambda-url.us-east-1.on.aws' },
    requestContext: { http: { method: 'POST', path: '/webhooks' } },
    body,
    isBase64Encoded: false,
  };
}
const lambdaPool = pool.map(lambdaEvent);
const lambdaContext = {} as never;

function minimumLambda(event: (typeof lambdaPool)[number]): { statusCode: number } {
  const body = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body);
  const parsed = checked((name) => event.headers[name as keyof typeof event.headers], body);
  if (parsed === null) return { statusCode: 400 };
  handler(parsed);
  return { statusCode: 204 };
}

const options = { secret: SECRET, now };

/** Every case resolves to the status it answered; the first answer of each is checked before timing. */
const cases: Record<string, () => () => Promise<number> | number> = {
  'Fetch: minimum': () => async () => (await minimumFetch(request(delivery()))).status,
  'Fetch: verifyWebhook': () => {
    const entry = fetchWebhook({ ...options, dedup: false }, handler);
    return async () => (await entry(request(delivery()))).status;
  },
  'Fetch + dedup: minimum with a Map': () => {
    const seen = new Map<string, true>();
    return async () => (await minimumFetch(request(delivery()), seen)).status;
  },
  'Fetch + dedup: verifyWebhook with its MemoryDedupStore': () => {
    const entry = fetchWebhook(options, handler);
    return async () => (await entry(request(delivery()))).status;
  },
  'on: minimum lookup by type': () => async () => (await minimumDispatch(request(delivery()))).status,
  'on: verifyWebhook with on': () => {
    const entry = fetchWebhook({ ...options, dedup: false, on: { 'message.received': handler } });
    return async () => (await entry(request(delivery()))).status;
  },
  'Lambda: minimum': () => () => minimumLambda(lambdaPool[next++ % POOL]!).statusCode,
  'Lambda: verifyWebhook': () => {
    const entry = lambdaWebhook({ ...options, dedup: false }, handler);
    return async () => (await entry(lambdaPool[next++ % POOL]! as never, lambdaContext)).statusCode;
  },
  'Hono: minimum': () => {
    const app = new Hono().post('/webhooks', async (c) => (await minimumFetch(c.req.raw)));
    return async () => (await app.request(request(delivery()))).status;
  },
  'Hono: verifyWebhook': () => {
    const app = new Hono().post('/webhooks', honoWebhook({ ...options, dedup: false }), (c) => {
      handler(c.var.webhook);
      return c.body(null, 204);
    });
    return async () => (await app.request(request(delivery()))).status;
  },
  'Fastify: minimum': () => {
    const app = Fastify();
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, raw, done) => done(null, raw));
    app.post('/webhooks', async (incoming, reply) => {
      const event = checked((name) => incoming.headers[name] as string | undefined, incoming.body as Buffer);
      if (event === null) return reply.code(400).send();
      handler(event);
      return reply.code(204).send();
    });
    return async () => (await app.inject({ method: 'POST', url: '/webhooks', ...injected(delivery()) })).statusCode;
  },
  'Fastify: verifyWebhook': () => {
    const app = Fastify();
    app.register(
      fastifyWebhook({
        ...options,
        dedup: false,
        routes: (webhooks) =>
          void webhooks.post('/webhooks', async (incoming, reply) => {
            handler(incoming.webhook);
            return reply.code(204).send();
          }),
      }),
    );
    return async () => (await app.inject({ method: 'POST', url: '/webhooks', ...injected(delivery()) })).statusCode;
  },
};

function injected({ body, headers }: Delivery) {
  return { payload: body, headers };
}

/** Checks the first answer of each case (204 for a new event), then times it. */
const timed: Record<string, Case> = {};
for (const [name, setup] of Object.entries(cases)) {
  const first = await setup()();
  if (first !== 204) throw new Error(`${name} answered ${first}, not 204`);
  timed[name] = setup;
}
const results = await measure(timed);
if (handled === 0) throw new Error('no handler ran');

const pairs: Array<[string, string, string]> = [
  ['Fetch', 'Fetch: minimum', 'Fetch: verifyWebhook'],
  ['Lambda', 'Lambda: minimum', 'Lambda: verifyWebhook'],
  ['Hono', 'Hono: minimum', 'Hono: verifyWebhook'],
  ['Fastify (inject)', 'Fastify: minimum', 'Fastify: verifyWebhook'],
  ['Fetch + MemoryDedupStore vs a Map', 'Fetch + dedup: minimum with a Map', 'Fetch + dedup: verifyWebhook with its MemoryDedupStore'],
  ['`on` vs a lookup by type', 'on: minimum lookup by type', 'on: verifyWebhook with on'],
];
console.log(`Node ${process.version}, ${ROUNDS} rounds of ${TIME_MS} ms per case, median; 1 KiB envelopes, each a new event\n`);
console.log('| entry | minimum µs/req | svc-webhooks µs/req | ratio |\n|---|---:|---:|---:|');
for (const [entry, minimum, ours] of pairs) {
  const [base, mine] = [results.get(minimum)!, results.get(ours)!];
  console.log(`| ${entry} | ${microseconds(base)} | ${microseconds(mine)} | ${(base / mine).toFixed(2)}× |`);
}

/**
 * A body past the limit, over a raw connection: every adapter answers 413
 * with `Connection: close` and closes the connection instead of reading the
 * rest of the body. A sender that keeps sending must find the connection
 * closed long before it is done.
 */
import { Buffer } from 'node:buffer';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { verifyWebhook as expressWebhook } from '../../adapters/express.js';
import { verifyWebhook as fastifyWebhook } from '../../adapters/fastify.js';
import { verifyWebhook as h3Webhook } from '../../adapters/h3.js';
import { verifyWebhook as honoWebhook } from '../../adapters/hono.js';
import type { ReceiverOptions, SingleEndpoint } from '../../src/index.js';
import { RouteSpy } from '../helpers/adapter-contract.js';
import { h3Route, H3_MAJORS, serveH3 } from '../helpers/adapter-servers.js';
import { serveNode } from '../helpers/http-harness.js';
import { SECRET, now, signedRequest } from '../helpers/signed-request.js';

const LIMIT = 1024;
const options: ReceiverOptions & SingleEndpoint = { secret: SECRET, now, maxPayloadBytes: LIMIT };
/** What the sender would send if nobody stopped it. */
const TOTAL_BYTES = 64 * 1024 * 1024;
const CHUNK_BYTES = 16 * 1024;

interface Served {
  readonly port: number;
  readonly route: RouteSpy;
  close(): Promise<void>;
}

/** `server` served, with the route that answers on it. */
async function serveWith(server: Server, route: RouteSpy): Promise<Served> {
  const { url, close } = await serveNode(server);
  return { port: Number(new URL(url).port), route, close };
}

const adapters: ReadonlyArray<[string, () => Promise<Served>]> = [
  [
    'express',
    () => {
      const route = new RouteSpy();
      const app = express();
      app.post('/webhooks', expressWebhook(options), async (req, res) => {
        res.status(await route.handle(req.webhook.event, req.webhook.id)).end();
      });
      return serveWith(createServer(app), route);
    },
  ],
  [
    'fastify',
    async () => {
      const route = new RouteSpy();
      const app = Fastify();
      await app.register(
        fastifyWebhook({
          ...options,
          routes: (webhooks) => {
            webhooks.post('/webhooks', async (request, reply) => reply.code(await route.handle(request.webhook.event, request.webhook.id)).send());
          },
        }),
      );
      await app.listen({ port: 0, host: '127.0.0.1' });
      return { port: (app.server.address() as AddressInfo).port, route, close: () => app.close() };
    },
  ],
  [
    'hono',
    () => {
      const route = new RouteSpy();
      const app = new Hono();
      app.post('/webhooks', honoWebhook(options), async (c) => c.body(null, (await route.handle(c.var.webhook.event, c.var.webhook.id)) as 204));
      return serveWith(createAdaptorServer({ fetch: app.fetch }) as Server, route);
    },
  ],
  ...H3_MAJORS.map((major): [string, () => Promise<Served>] => [
    major,
    async () => {
      const route = new RouteSpy();
      const { url, close } = await serveH3(h3Webhook(options, h3Route(route)), major);
      return { port: Number(new URL(url).port), route, close };
    },
  ]),
];

interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Body bytes the sender got onto the connection before the server closed it. */
  readonly bytesSent: number;
}

/**
 * POSTs a signed request over a raw connection: with `declaredLength`, the
 * head alone, announcing that length; else a chunked body of TOTAL_BYTES,
 * sent until the server closes the connection. Resolves once it is closed.
 */
async function send(port: number, declaredLength?: number): Promise<Answer> {
  const socket = connect(port, '127.0.0.1');
  // The server closing while the body is still being sent shows up as EPIPE or ECONNRESET: expected.
  socket.on('error', () => {});
  let open = true;
  // Not events.once: it would reject on the EPIPE above.
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      open = false;
      resolve();
    }),
  );
  let received = '';
  let head: string | undefined;
  socket.setEncoding('latin1').on('data', (text: string) => {
    received += text;
    const end = received.indexOf('\r\n\r\n');
    if (head !== undefined || end === -1) return;
    head = received.slice(0, end);
    // Answered on a connection the server means to keep: waiting would show nothing more.
    if (!/^connection: close$/im.test(head)) socket.destroy();
  });
  await once(socket, 'connect');

  const { headers } = signedRequest();
  const framing = declaredLength === undefined ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(declaredLength) };
  const lines = Object.entries({ host: '127.0.0.1', ...headers, ...framing }).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.write(`POST /webhooks HTTP/1.1\r\n${lines.join('')}\r\n`);

  let bytesSent = 0;
  if (declaredLength === undefined) {
    const chunk = Buffer.concat([Buffer.from(`${CHUNK_BYTES.toString(16)}\r\n`), Buffer.alloc(CHUNK_BYTES, 0x20), Buffer.from('\r\n')]);
    const drained = () => new Promise<void>((resolve) => socket.once('drain', () => resolve()));
    while (open && bytesSent < TOTAL_BYTES) {
      if (!socket.write(chunk)) await Promise.race([drained(), closed]);
      bytesSent += CHUNK_BYTES;
    }
    if (open) socket.end('0\r\n\r\n');
  }
  await closed;

  const [statusLine = '', ...fields] = (head ?? '').split('\r\n');
  const answerHeaders = Object.fromEntries(
    fields.map((field) => [field.slice(0, field.indexOf(':')).toLowerCase(), field.slice(field.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers: answerHeaders, bytesSent };
}

/** The delivery of event `id` in an envelope of exactly `bytes` bytes, signed. */
function envelopeOfBytes(id: string, bytes: number): { readonly body: string; readonly headers: Record<string, string> } {
  const envelope = (pad: string): string => JSON.stringify({ id, type: 'call.missed', data: { object: { id: 'obj_1' } }, pad });
  return signedRequest({ id, body: envelope('x'.repeat(bytes - envelope('').length)) });
}

describe.each(adapters)('%s, past the limit', (_name, serve) => {
  it('takes a body of exactly the limit, declared by its Content-Length or chunked', async () => {
    const served = await serve();
    try {
      const url = `http://127.0.0.1:${served.port}/webhooks`;
      const declared = envelopeOfBytes('evt_1', LIMIT);
      expect(Buffer.byteLength(declared.body)).toBe(LIMIT);
      expect((await fetch(url, { method: 'POST', ...declared })).status).toBe(204);
      // A stream of unknown length goes chunked.
      const chunked = envelopeOfBytes('evt_2', LIMIT);
      const stream = new Blob([chunked.body]).stream();
      expect((await fetch(url, { method: 'POST', body: stream, headers: chunked.headers, duplex: 'half' } as RequestInit)).status).toBe(204);
      expect(served.route.calls.map(({ id }) => id)).toEqual(['evt_1', 'evt_2']);
    } finally {
      await served.close();
    }
  });

  it('answers 413 to a chunked body and closes the connection instead of reading the rest', async () => {
    const served = await serve();
    try {
      const answer = await send(served.port);
      expect(answer.status).toBe(413);
      expect(answer.headers.connection).toBe('close');
      expect(answer.bytesSent).toBeLessThan(TOTAL_BYTES / 4);
      expect(served.route.calls).toEqual([]);
    } finally {
      await served.close();
    }
  });

  it('answers 413 to a declared Content-Length past the limit without waiting for the body', async () => {
    const served = await serve();
    try {
      const answer = await send(served.port, TOTAL_BYTES);
      expect(answer.status).toBe(413);
      expect(answer.headers.connection).toBe('close');
      expect(served.route.calls).toEqual([]);
    } finally {
      await served.close();
    }
  });
});

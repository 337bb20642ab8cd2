/**
 * What a sender can do to a receiver over a real socket, on every adapter:
 * repeat a header line, stall mid-body, declare a body past the limit, hang
 * up mid-body, replay a delivery, send any Content-Type.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ReceiverOptions, SingleEndpoint } from '../../src/index.js';
import { RouteSpy } from '../helpers/adapter-contract.js';
import { serveExpress, serveFastify, serveHono, type ServedApp } from '../helpers/adapter-servers.js';
import { EXPRESS_MAJORS, FASTIFY_MAJORS } from '../helpers/host-majors.js';
import { RawConnection } from '../helpers/raw-http.js';
import { OLD_SECRET, SECRET, now, signedRequest, type SignedRequest } from '../helpers/signed-request.js';

const adapters: ReadonlyArray<{ name: string; serve: (options: ReceiverOptions & SingleEndpoint, route: RouteSpy) => Promise<ServedApp> }> = [
  ...EXPRESS_MAJORS.map(([name, express]) => ({ name, serve: (options: ReceiverOptions & SingleEndpoint, route: RouteSpy) => serveExpress(options, route, express) })),
  { name: 'hono', serve: serveHono },
  ...FASTIFY_MAJORS.map(([name, fastify]) => ({ name, serve: (options: ReceiverOptions & SingleEndpoint, route: RouteSpy) => serveFastify(options, route, undefined, fastify) })),
];

/** A request's header lines, in order, without its Content-Length (the connection declares that). */
function lines(request: SignedRequest): Array<[string, string]> {
  return Object.entries(request.headers);
}

async function send(url: string, headerLines: ReadonlyArray<readonly [string, string]>, body: string) {
  const connection = await RawConnection.open(url);
  try {
    connection.post('/webhooks', headerLines, body);
    return await connection.response();
  } finally {
    connection.hangUp();
  }
}

const BODY_TIMEOUT_MS = 300;

/** Sends part of a signed delivery and hangs up, then checks the server still answers the next one 204. */
async function hangUpMidBody(url: string): Promise<void> {
  const request = signedRequest();
  const connection = await RawConnection.open(url);
  connection.post('/webhooks', lines(request), request.body.slice(0, 40), 500);
  // Let the server start reading the body before the hang-up.
  await new Promise((resolve) => setTimeout(resolve, 50));
  connection.hangUp();
  await new Promise((resolve) => setTimeout(resolve, 100));
  const next = signedRequest({ id: 'evt_next' });
  expect((await send(url, lines(next), next.body)).status).toBe(204);
}

describe.each(adapters)('$name against hostile senders, over a socket', ({ serve }) => {
  let route: RouteSpy;
  let app: ServedApp;
  const start = async (options: Partial<ReceiverOptions> = {}): Promise<void> => {
    route = new RouteSpy();
    app = await serve({ secret: SECRET, now, ...options }, route);
  };
  afterEach(async () => {
    await app.close();
  });

  it.each([
    ['valid line first', true],
    ['valid line last', false],
  ])('verifies webhook-signature sent as two header lines, %s', async (_name, validFirst) => {
    await start();
    const valid = signedRequest({ id: 'evt_lines' });
    const other = signedRequest({ id: 'evt_lines', secret: OLD_SECRET });
    const signatureLine = (request: SignedRequest) => lines(request).filter(([name]) => name === 'webhook-signature');
    const signatureLines = validFirst ? [...signatureLine(valid), ...signatureLine(other)] : [...signatureLine(other), ...signatureLine(valid)];
    const headerLines = [...lines(valid).filter(([name]) => name !== 'webhook-signature'), ...signatureLines];
    expect((await send(app.url, headerLines, valid.body)).status).toBe(204);
    expect(route.calls.map((call) => call.id)).toEqual(['evt_lines']);
  });

  it('answers a stalled body 408 body_timeout within bodyTimeoutMs, and closes the connection', async () => {
    await start({ bodyTimeoutMs: BODY_TIMEOUT_MS });
    const request = signedRequest();
    const connection = await RawConnection.open(app.url);
    try {
      connection.post('/webhooks', lines(request), request.body.slice(0, 40), 500);
      const response = await connection.response(BODY_TIMEOUT_MS + 2000);
      expect(response.status).toBe(408);
      expect(JSON.parse(response.body)).toEqual({ error: { code: 'body_timeout', message: expect.any(String) } });
      expect(response.headers.connection).toBe('close');
      await connection.closed();
    } finally {
      connection.hangUp();
    }
    expect(route.calls).toEqual([]);
  });

  it('answers a declared oversized body 413 and closes the connection instead of reading the rest', async () => {
    await start({ maxPayloadBytes: 64 * 1024 });
    const request = signedRequest();
    const connection = await RawConnection.open(app.url);
    try {
      connection.post('/webhooks', lines(request), request.body, 700 * 1024 * 1024);
      const response = await connection.response();
      expect(response.status).toBe(413);
      expect(JSON.parse(response.body)).toMatchObject({ error: { code: 'payload_too_large' } });
      expect(response.headers.connection).toBe('close');
      await connection.closed();
    } finally {
      connection.hangUp();
    }
    expect(route.calls).toEqual([]);
  });

  describe('a sender that hangs up mid-body', () => {
    const logs = ['error', 'warn', 'info', 'log'] as const;
    beforeEach(() => {
      for (const level of logs) vi.spyOn(console, level).mockImplementation(() => undefined);
    });
    afterEach(() => {
      vi.restoreAllMocks();
    });

    it('is answered nothing and logged nothing, and the server goes on serving', async () => {
      await start();
      await hangUpMidBody(app.url);
      expect(route.calls.map((call) => call.id)).toEqual(['evt_next']);
      for (const level of logs) expect(console[level]).not.toHaveBeenCalled();
    });
  });

  it('runs the route once for a replayed delivery, with no dedup option', async () => {
    await start();
    const request = signedRequest({ id: 'evt_replayed' });
    expect((await send(app.url, lines(request), request.body)).status).toBe(204);
    const replay = await send(app.url, lines(request), request.body);
    expect([replay.status, JSON.parse(replay.body)]).toEqual([200, { received: true, duplicate: true }]);
    expect(route.calls).toHaveLength(1);
  });

  it('runs the route for every delivery with dedup: false', async () => {
    await start({ dedup: false });
    const request = signedRequest({ id: 'evt_replayed' });
    for (let i = 0; i < 2; i++) expect((await send(app.url, lines(request), request.body)).status).toBe(204);
    expect(route.calls).toHaveLength(2);
  });

  it.each([
    ['an empty Content-Type', ['']],
    ['a malformed Content-Type', ['nonsense']],
    ['no Content-Type', []],
  ])('verifies a signed delivery with %s, and refuses a bad one with the JSON error shape', async (_name, type) => {
    await start();
    const headerLines = (request: SignedRequest) => [
      ...lines(request).filter(([name]) => name !== 'content-type'),
      ...type.map((value) => ['content-type', value] as const),
    ];
    const valid = signedRequest({ id: 'evt_typed' });
    expect((await send(app.url, headerLines(valid), valid.body)).status).toBe(204);
    expect(route.calls.map((call) => call.id)).toEqual(['evt_typed']);
    const forged = signedRequest({ id: 'evt_forged', secret: OLD_SECRET });
    const refused = await send(app.url, headerLines(forged), forged.body);
    expect([refused.status, JSON.parse(refused.body)]).toEqual([400, { error: { code: 'invalid_signature', message: expect.any(String) } }]);
  });
});

describe('fastify adapter with its own error handler in routes', () => {
  const setErrorHandler = (webhooks: FastifyInstance) => {
    webhooks.setErrorHandler(async (_error, _request, reply) => reply.code(500).send({ mine: true }));
  };

  it('hands it nothing when the sender hangs up mid-body', async () => {
    const route = new RouteSpy();
    const handled: unknown[] = [];
    const app = await serveFastify({ secret: SECRET, now }, route, (webhooks) => {
      webhooks.setErrorHandler(async (error, _request, reply) => {
        handled.push(error);
        return reply.code(500).send({ mine: true });
      });
    });
    try {
      await hangUpMidBody(app.url);
      expect({ handled, calls: route.calls.map((call) => call.id) }).toEqual({ handled: [], calls: ['evt_next'] });
    } finally {
      await app.close();
    }
  });

  it('still answers 413 payload_too_large and 408 body_timeout itself', async () => {
    const route = new RouteSpy();
    const app = await serveFastify({ secret: SECRET, now, maxPayloadBytes: 64 * 1024, bodyTimeoutMs: BODY_TIMEOUT_MS }, route, setErrorHandler);
    try {
      const request = signedRequest();
      for (const [declared, status, code] of [
        [700 * 1024 * 1024, 413, 'payload_too_large'],
        [500, 408, 'body_timeout'],
      ] as const) {
        const connection = await RawConnection.open(app.url);
        connection.post('/webhooks', lines(request), request.body.slice(0, 40), declared);
        const response = await connection.response(BODY_TIMEOUT_MS + 2000);
        connection.hangUp();
        expect([response.status, JSON.parse(response.body).error?.code]).toEqual([status, code]);
      }
      expect(route.calls).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

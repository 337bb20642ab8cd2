/**
 * The relay of `svc-webhooks dev` over HTTP, in front of an Express
 * receiver built with svc-webhooks: each delivery recorded, verified,
 * forwarded and listed; replays and sends; the token, the Host and the
 * bounds; a receiver down or slow.
 */
import { Buffer } from 'node:buffer';
import { readFile } from 'node:fs/promises';
import { Agent, createServer as createHttpServer, request as httpRequest, type RequestListener, type Server } from 'node:http';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveryRecord, RecordSummary } from '../../../src/cli/dev/delivery-log.js';
import { curlCommand } from '../../../src/cli/dev/curl.js';
import { startRelay, type Relay, type RelayOptions } from '../../../src/cli/dev/relay.js';
import { KNOWN_EVENT_TYPES, type WebhookEvent } from '../../../src/index.js';
import { testEvent } from '../../../src/testing/index.js';
import { typesFolder } from '../../helpers/contract-types.js';
import { RELAY_SECRET, startRelayRig, type RelayRig } from '../../helpers/dev-relay.js';
import { withRecordingReceiver } from '../delivery-scenarios.js';

/** Sends `text` as it is to the port on 127.0.0.1, and answers all that comes back before the connection closes. */
async function rawRequest(port: number, text: string): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  // Not ended: a server may close a half-closed connection before it answers. Each request says Connection: close.
  socket.write(text);
  let answer = '';
  for await (const chunk of socket) answer += String(chunk);
  return answer;
}

/** Runs `test` against a relay (`options` its own) in front of a receiver that answers with `listener` (and that `watch` may watch). */
async function withReceiver(
  listener: RequestListener,
  test: (relay: Relay) => Promise<void>,
  options: Partial<RelayOptions> = {},
  watch: (receiver: Server) => void = () => {},
): Promise<void> {
  const receiver = createHttpServer(listener);
  watch(receiver);
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  const { port } = receiver.address() as { port: number };
  const relay = await startRelay({ forward: `http://127.0.0.1:${port}/webhooks`, secrets: [RELAY_SECRET], port: 0, ...options });
  try {
    await test(relay);
  } finally {
    await relay.close();
    receiver.closeAllConnections();
    receiver.close();
  }
}

let rig: RelayRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const list = async (): Promise<{ deliveries: RecordSummary[]; dropped: number }> => (await rig!.api('/api/deliveries')).json() as never;
const detail = async (n: number): Promise<DeliveryRecord> => (await rig!.api(`/api/deliveries/${n}`)).json() as never;
const replay = async (n: number, mode: string): Promise<DeliveryRecord> => {
  const answer = await rig!.api(`/api/deliveries/${n}/replay`, { mode });
  expect(answer.status).toBe(201);
  return answer.json() as never;
};

describe('svc-webhooks dev: the relay', () => {
  it("forwards each delivery byte for byte and answers the sender with the receiver's answer, its outcome included", async () => {
    rig = await startRelayRig();
    const events = KNOWN_EVENT_TYPES.map((type) => testEvent(type));
    for (const event of events) {
      const answer = await rig.deliver(event);
      expect(answer.status).toBe(204);
      expect(answer.headers.get('svc-webhooks-outcome')).toMatch(/^processed; handler-ms=\d+; key-id=0$/);
    }
    expect(rig.handled).toEqual(events.map((event) => event.id));
    const { deliveries, dropped } = await list();
    expect(dropped).toBe(0);
    expect(deliveries.map((one) => [one.n, one.event?.type, one.valid, one.status, one.outcome?.outcome])).toEqual(
      events.map((event, i) => [i + 1, event.type, true, 204, 'processed']).reverse(),
    );
    const first = await detail(1);
    expect(Buffer.from(first.request.bodyBase64, 'base64').toString()).toBe(JSON.stringify(events[0]));
    expect(first.request.headers).toMatchObject({ 'webhook-id': events[0]!.id, 'content-type': 'application/json' });
    expect(first.verdict).toEqual({ valid: true, lines: [`valid: ${events[0]!.type} ${events[0]!.id}`, expect.stringMatching(/^timestamp: /)] });
  });

  it("diagnoses a tampered delivery as verify does, and still forwards it: the receiver's refusal is shown beside", async () => {
    rig = await startRelayRig();
    const answer = await rig.deliver(testEvent('call.missed'), new Date(), true);
    expect(answer.status).toBe(400);
    const record = await detail(1);
    expect(record.verdict).toMatchObject({ valid: false, code: 'invalid_signature' });
    expect(record.verdict.lines[1]).toMatch(/^cause: /);
    expect(record.answer).toMatchObject({ status: 400, outcome: { outcome: 'invalid_signature' } });
    expect(JSON.parse(record.answer.body!)).toMatchObject({ error: { code: 'invalid_signature' } });
  });

  it('replays in three modes: exact and re-signed are duplicates to a receiver that deduplicates, a new id runs the handler again', async () => {
    // The relay's clock runs 2 s ahead, so that a re-signed delivery differs from the first even within its second.
    rig = await startRelayRig({ now: () => Date.now() + 2000 });
    const event = testEvent('message.received');
    await rig.deliver(event);
    const exact = await replay(1, 'exact');
    expect(exact).toMatchObject({ n: 2, source: 'replay', replayOf: 1, mode: 'exact', answer: { status: 200, outcome: { outcome: 'duplicate' } } });
    expect(exact.request.bodyBase64).toBe((await detail(1)).request.bodyBase64);
    const resigned = await replay(1, 'resign');
    expect(resigned).toMatchObject({ event: { id: event.id }, verdict: { valid: true }, answer: { status: 200, outcome: { outcome: 'duplicate' } } });
    expect(resigned.request.headers['webhook-signature']).not.toBe((await detail(1)).request.headers['webhook-signature']);
    const renamed = await replay(1, 'new-id');
    expect(renamed).toMatchObject({ verdict: { valid: true }, answer: { status: 204, outcome: { outcome: 'processed' } } });
    expect(renamed.event!.id).not.toBe(event.id);
    expect(renamed.request.headers['webhook-id']).toBe(renamed.event!.id);
    expect(rig.handled).toEqual([event.id, renamed.event!.id]);
    // The list says of each replay which delivery it replays, and how.
    expect((await list()).deliveries.map((one) => [one.n, one.replayOf, one.mode])).toEqual([
      [4, 1, 'new-id'],
      [3, 1, 'resign'],
      [2, 1, 'exact'],
      [1, undefined, undefined],
    ]);
  });

  it('replays exact bytes that are older than the 5 minutes of tolerance to a refusal, as the receiver would, and says why', async () => {
    rig = await startRelayRig();
    await rig.deliver(testEvent('call.missed'), new Date(Date.now() - 6 * 60_000));
    const exact = await replay(1, 'exact');
    expect(exact.verdict).toMatchObject({ valid: false, code: 'timestamp_too_old' });
    expect(exact.answer).toMatchObject({ status: 400, outcome: { outcome: 'timestamp_too_old' } });
    expect((await replay(1, 'resign')).answer).toMatchObject({ status: 204, outcome: { outcome: 'processed' } });
  });

  it('sends an event built as testEvent builds it, with a msg_ id as send gives, signed, through the relay, so that it is recorded', async () => {
    rig = await startRelayRig();
    const sent = await rig.api('/api/send', { type: 'call.missed', data: { object: { id: 'call_9' }, from: '+15550100' } });
    expect(sent.status).toBe(201);
    const record = (await sent.json()) as DeliveryRecord;
    expect(record).toMatchObject({ n: 1, source: 'send', event: { type: 'call.missed' }, verdict: { valid: true }, answer: { status: 204 } });
    expect(JSON.parse(Buffer.from(record.request.bodyBase64, 'base64').toString())).toMatchObject({ data: { object: { id: 'call_9' }, from: '+15550100' } });
    // Its id is a msg_ id, as svc-webhooks send and the testing kit's signedHeaders give, and the webhook-id.
    expect(record.event!.id).toMatch(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(record.request.headers['webhook-id']).toBe(record.event!.id);
    expect(rig.handled).toEqual([record.event!.id]);
    expect((await rig.api('/api/send', { type: 'Call.Missed' })).status).toBe(400);
    expect((await rig.api('/api/send', { type: 'call.missed', data: [1] })).status).toBe(400);
  });

  it('streams each new delivery to the page as it is answered', async () => {
    rig = await startRelayRig();
    const stream = await fetch(`${new URL('/api/events', rig.relay.webhookUrl)}?token=${rig.relay.token}`);
    expect(stream.headers.get('content-type')).toBe('text/event-stream');
    expect(stream.headers.get('cache-control')).toBe('no-store');
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    const event = testEvent('webhook.test');
    await rig.deliver(event);
    let text = '';
    while (!text.includes('\n\nevent: delivery') && !text.startsWith('event: delivery')) text += (await reader.read()).value ?? '';
    while (!text.endsWith('\n\n')) text += (await reader.read()).value ?? '';
    // A comment first, so that the page knows the stream is open before any delivery.
    expect(text).toMatch(/^: connected\n\nevent: delivery\ndata: /);
    const data = JSON.parse(/data: (.*)\n/.exec(text)![1]!) as { delivery: RecordSummary; dropped: number };
    expect(data).toMatchObject({ delivery: { n: 1, event: { id: event.id }, status: 204 }, dropped: 0 });
    await reader.cancel();
  });
});

describe('svc-webhooks dev: what the page asks of it', () => {
  it("gives a sample of each type the spec names: testEvent's data, a fresh object id of the type's kind", async () => {
    const clock = Date.parse('2030-01-01T00:00:00Z');
    rig = await startRelayRig({ now: () => clock });
    const { samples } = (await (await rig.api('/api/samples')).json()) as { samples: Record<string, { object: { id: string } }> };
    expect(Object.keys(samples)).toEqual(KNOWN_EVENT_TYPES);
    // Made on the relay's clock: the time part of each id is the relay's.
    for (const type of KNOWN_EVENT_TYPES) {
      const made = testEvent(type, undefined, { now: () => clock }).data.object.id;
      expect(samples[type]!.object.id.slice(0, made.indexOf('_') + 11)).toBe(made.slice(0, made.indexOf('_') + 11));
    }
    for (const type of KNOWN_EVENT_TYPES) expect(samples[type]).toStrictEqual({ object: { id: expect.stringMatching(new RegExp(`^${testEvent(type).data.object.id.split('_')[0]}_`)) } });
    const again = (await (await rig.api('/api/samples')).json()) as typeof samples & { samples: typeof samples };
    expect(again.samples['call.missed']!.object.id).not.toBe(samples['call.missed']!.object.id);
  });

  it('clears what it keeps on DELETE, tells every page, and numbers on from where it was', async () => {
    rig = await startRelayRig({ bounds: { maxRecords: 1, maxBytes: 50 * 1024 * 1024 } });
    for (let i = 0; i < 2; i += 1) await rig.deliver(testEvent('webhook.test'));
    expect((await list()).dropped).toBe(1);
    const stream = await fetch(`${new URL('/api/events', rig.relay.webhookUrl)}?token=${rig.relay.token}`);
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    // Without the token, nothing is cleared.
    expect((await fetch(new URL('/api/deliveries', rig.relay.webhookUrl), { method: 'DELETE' })).status).toBe(403);
    expect((await list()).deliveries).toHaveLength(1);
    const cleared = await fetch(new URL('/api/deliveries', rig.relay.webhookUrl), { method: 'DELETE', headers: { authorization: `Bearer ${rig.relay.token}` } });
    expect([cleared.status, cleared.headers.get('cache-control'), await cleared.text()]).toEqual([204, 'no-store', '']);
    expect(await list()).toEqual({ deliveries: [], dropped: 0 });
    expect(rig.relay.log.size).toBe(0);
    let text = '';
    while (!text.includes('event: cleared\ndata: {}\n\n')) text += (await reader.read()).value ?? '';
    await reader.cancel();
    await rig.deliver(testEvent('webhook.test'));
    expect((await list()).deliveries.map((one) => one.n)).toEqual([3]);
  });

  it('gives a delivery as a curl command that sends it to the relay again', async () => {
    rig = await startRelayRig();
    await rig.deliver(testEvent('webhook.test'));
    const record = await detail(1);
    const { command } = (await (await rig.api('/api/deliveries/1/curl')).json()) as { command: string };
    expect(command).toBe(curlCommand(rig.relay.webhookUrl, record.request.headers, Buffer.from(record.request.bodyBase64, 'base64')));
    expect((await rig.api('/api/deliveries/2/curl')).status).toBe(404);
  });
});

describe('svc-webhooks dev: who may read it', () => {
  it.each([
    ['no token', (url: string) => fetch(new URL('/api/deliveries', url))],
    ['a wrong token', (url: string, token: string) => fetch(`${new URL('/api/deliveries', url)}?token=${token.slice(1)}x`)],
    ['a wrong bearer', (url: string) => fetch(new URL('/api/deliveries', url), { headers: { authorization: 'Bearer nope' } })],
    ['the token under another scheme', (url: string, token: string) => fetch(new URL('/api/deliveries', url), { headers: { authorization: `XBearer ${token}` } })],
    ['the page without its token', (url: string) => fetch(new URL('/', url))],
  ])('answers 403 to %s', async (_name, call) => {
    rig = await startRelayRig();
    const answer = await call(rig.relay.webhookUrl, rig.relay.token);
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    await expectProblem(answer, 403, 'forbidden', 'this needs the address the relay printed, with its token');
  });

  it('listens on 127.0.0.1 alone: not on the IPv6 loopback, nor any other address', async () => {
    rig = await startRelayRig();
    const socket = connect(Number(new URL(rig.relay.webhookUrl).port), '::1');
    const error = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
      socket.once('connect', () => resolve(undefined));
      socket.once('error', resolve);
    });
    socket.destroy();
    expect(error?.code).toMatch(/^(ECONNREFUSED|EADDRNOTAVAIL|ENETUNREACH|EAFNOSUPPORT)$/);
  });

  it('answers 403 to a Host that is not its own, token or not (DNS rebinding), and takes deliveries under any Host', async () => {
    rig = await startRelayRig();
    const { port } = new URL(rig.relay.webhookUrl);
    const foreign = await rawRequest(Number(port), `GET /api/deliveries?token=${rig.relay.token} HTTP/1.1\r\nHost: rebind.example:${port}\r\nConnection: close\r\n\r\n`);
    expect(foreign).toMatch(/^HTTP\/1\.1 403 /);
    const own = await rawRequest(Number(port), `GET /api/deliveries?token=${rig.relay.token} HTTP/1.1\r\nHost: localhost:${port}\r\nConnection: close\r\n\r\n`);
    expect(own).toMatch(/^HTTP\/1\.1 200 /);
    const body = JSON.stringify(testEvent('webhook.test'));
    const delivery = await rawRequest(Number(port), `POST /webhooks HTTP/1.1\r\nHost: tunnel.example\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    expect(delivery).toMatch(/^HTTP\/1\.1 400 /);
  });

  it('never shows the secret: not in the page, nor an API answer, nor a saved file', async () => {
    const save = join(await typesFolder(), 'deliveries.jsonl');
    rig = await startRelayRig({ save });
    await rig.deliver(testEvent('call.missed'));
    await rig.deliver(testEvent('call.missed'), new Date(), true);
    await replay(1, 'resign');
    await replay(1, 'new-id');
    await rig.api('/api/send', { type: 'webhook.test' });
    const key = RELAY_SECRET.slice('whsec_'.length);
    const texts = [
      await (await fetch(rig.relay.inspectorUrl)).text(),
      await (await rig.api('/api/deliveries')).text(),
      ...(await Promise.all([1, 2, 3, 4, 5].map(async (n) => (await rig!.api(`/api/deliveries/${n}`)).text()))),
      await readFile(save, 'utf8'),
    ];
    for (const text of texts) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(Buffer.from(key, 'base64').toString());
    }
    expect((await readFile(save, 'utf8')).trim().split('\n').map((line) => (JSON.parse(line) as DeliveryRecord).n)).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('svc-webhooks dev: bounds and faults', () => {
  it('keeps the last records within the bounds, and counts those it dropped', async () => {
    rig = await startRelayRig({ bounds: { maxRecords: 3, maxBytes: 50 * 1024 * 1024 } });
    for (let i = 0; i < 5; i += 1) await rig.deliver(testEvent('webhook.test'));
    const { deliveries, dropped } = await list();
    expect([deliveries.map((one) => one.n), dropped]).toEqual([[5, 4, 3], 2]);
    expect((await rig.api('/api/deliveries/1')).status).toBe(404);
    expect((await rig.api('/api/deliveries/1/replay', { mode: 'exact' })).status).toBe(404);
  });

  it('keeps the records within a byte bound too', async () => {
    rig = await startRelayRig({ bounds: { maxRecords: 500, maxBytes: 8 * 1024 } });
    for (let i = 0; i < 6; i += 1) await rig.deliver(testEvent('webhook.test', { data: { note: 'x'.repeat(1500) } } as never));
    expect(rig.relay.log.size).toBeLessThanOrEqual(8 * 1024);
    expect((await list()).dropped).toBeGreaterThan(0);
  });

  it.each(['http', 'https'])('answers the sender 502 and records the failure when the receiver at an %s address is down', async (scheme) => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const { port } = closed.address() as { port: number };
    await new Promise((resolve) => closed.close(resolve));
    const relay = await startRelay({ forward: `${scheme}://127.0.0.1:${port}/webhooks`, secrets: [RELAY_SECRET], port: 0 });
    try {
      const answer = await fetch(relay.webhookUrl, { method: 'POST', body: '{}' });
      expect(answer.status).toBe(502);
      expect(await answer.json()).toEqual({ error: { code: 'receiver_unreachable', message: 'the receiver gave no answer: connection failed (ECONNREFUSED)' } });
      expect(relay.log.summaries()[0]).toMatchObject({ failure: 'connection failed (ECONNREFUSED)', valid: false });
    } finally {
      await relay.close();
    }
  });

  it('keeps one connection to the receiver for delivery after delivery, and tells of no problem when all went well', async () => {
    const problems: string[] = [];
    let connections = 0;
    await withReceiver(
      (_req, res) => res.writeHead(204).end(),
      async (relay) => {
        for (let i = 0; i < 3; i++) expect((await fetch(relay.webhookUrl, { method: 'POST', body: '{}' })).status).toBe(204);
        // No save was asked for: nothing was appended, nor failed to be.
        expect(problems).toEqual([]);
      },
      { onProblem: (line) => problems.push(line) },
      (server) => server.on('connection', () => connections++),
    );
    expect(connections).toBe(1);
  });

  it('shows no event for a body that is no JSON object, or whose id or type is no string', async () => {
    await withReceiver(
      (_req, res) => res.writeHead(400).end(),
      async (relay) => {
        const bodies = ['{"id":"evt_1","type":5}', '{"id":5,"type":"call.missed"}', 'null', '"evt_1"', 'not json', '{"id":"evt_1","type":"call.missed"}'];
        for (const body of bodies) await fetch(relay.webhookUrl, { method: 'POST', body });
        expect(bodies.map((_, i) => 'event' in relay.log.get(i + 1)!)).toEqual([false, false, false, false, false, true]);
      },
    );
  });

  it('takes a sender that leaves mid-body as no failure of its own, and serves on', async () => {
    const problems: string[] = [];
    await withReceiver(
      (_req, res) => res.writeHead(204).end(),
      async (relay) => {
        const port = Number(new URL(relay.webhookUrl).port);
        const socket = connect(port, '127.0.0.1');
        await new Promise<void>((resolve) => socket.once('connect', resolve));
        socket.write(`POST /webhooks HTTP/1.1\r\nHost: tunnel.example\r\nContent-Length: 100\r\n\r\n{"id":`);
        await new Promise((resolve) => setTimeout(resolve, 50));
        socket.destroy();
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect((await fetch(relay.webhookUrl, { method: 'POST', body: '{}' })).status).toBe(204);
        expect(problems).toEqual([]);
        expect(relay.log.summaries()).toHaveLength(1);
      },
      { onProblem: (line) => problems.push(line) },
    );
  });

  it('answers 500 relay_failed to a request it failed on, and tells of it by its path alone', async () => {
    const problems: string[] = [];
    await withReceiver(
      (_req, res) => res.writeHead(204).end(),
      async (relay) => {
        // A clock that gives no time fails the record of the delivery.
        await expectProblem(await fetch(`${relay.webhookUrl}?token=kept-out`, { method: 'POST', body: '{}' }), 500, 'relay_failed', 'the relay failed on this request');
        expect(problems).toEqual(['a request to /webhooks failed: Invalid time value']);
      },
      { now: () => Number.NaN, onProblem: (line) => problems.push(line) },
    );
  });

  it('gives up on a receiver that does not answer within the window, and serves on', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
    const { port } = silent.address() as { port: number };
    const relay = await startRelay({ forward: `http://127.0.0.1:${port}/webhooks`, secrets: [RELAY_SECRET], port: 0, answerWindowMs: 200 });
    try {
      expect((await fetch(relay.webhookUrl, { method: 'POST', body: '{}' })).status).toBe(502);
      expect(relay.log.summaries()[0]).toMatchObject({ failure: 'no answer within 0.2 s' });
      const relayPort = Number(new URL(relay.webhookUrl).port);
      // Dropped without a word: not even node:http's own 400.
      expect(await rawRequest(relayPort, 'NOT HTTP AT ALL\r\n\r\n')).toBe('');
      expect((await fetch(relay.webhookUrl)).status).toBe(405);
    } finally {
      await relay.close();
      silent.close();
    }
  });
});

describe('svc-webhooks dev: what it keeps of an answer', () => {
  it("forwards the request's own headers, not the hop's, and answers with a receiver's plain answer as it is", async () => {
    await withRecordingReceiver([{ status: 422, code: 'refused_here' }], async ({ url, received }) => {
      const relay = await startRelay({ forward: url, secrets: [RELAY_SECRET], port: 0 });
      try {
        const answer = await fetch(relay.webhookUrl, { method: 'POST', headers: { 'x-trace': 't1' }, body: '{"id":"evt_1"}' });
        expect(answer.status).toBe(422);
        // No outcome header from the receiver: none from the relay either.
        expect(answer.headers.get('svc-webhooks-outcome')).toBeNull();
        expect(await answer.json()).toEqual({ error: { code: 'refused_here', message: 'refused' } });
        expect(received[0]!.headers).toMatchObject({ 'x-trace': 't1', host: new URL(url).host, 'content-length': '14' });
        // An id without a type is no envelope; a sender's delivery is no replay; an answer came, so no failure.
        expect(Object.keys(relay.log.summaries()[0]!)).toEqual(['n', 'receivedAt', 'source', 'valid', 'code', 'status', 'latencyMs']);
        expect(relay.log.get(1)!.answer).toStrictEqual({
          latencyMs: expect.any(Number),
          status: 422,
          headers: expect.arrayContaining([['content-type', 'application/json']]),
          body: '{"error":{"code":"refused_here","message":"refused"}}',
        });
      } finally {
        await relay.close();
      }
    });
  });

  it('does not forward the headers its Connection header names: they were for the hop', async () => {
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      const relay = await startRelay({ forward: url, secrets: [RELAY_SECRET], port: 0 });
      try {
        const { port } = new URL(relay.webhookUrl);
        const answer = await rawRequest(Number(port), 'POST /webhooks HTTP/1.1\r\nHost: t\r\nConnection: close, X-Hop\r\nX-Hop: 1\r\nX-End: 2\r\nContent-Length: 2\r\n\r\n{}');
        expect(answer).toMatch(/^HTTP\/1\.1 204 /);
        expect(received[0]!.headers).toMatchObject({ 'x-end': '2' });
        expect(received[0]!.headers['x-hop']).toBeUndefined();
      } finally {
        await relay.close();
      }
    });
  });

  it("passes the receiver's bytes, type and Retry-After on to the sender as they came", async () => {
    const bytes = Buffer.from([0xff, 0xfe, 0x00, 0x41]);
    await withReceiver(
      (_req, res) => res.writeHead(503, { 'retry-after': '120', 'content-type': 'application/octet-stream', 'x-other': '1' }).end(bytes),
      async (relay) => {
        const answer = await fetch(relay.webhookUrl, { method: 'POST', body: '{}' });
        expect([answer.status, answer.headers.get('retry-after'), answer.headers.get('content-type'), answer.headers.get('x-other')]).toEqual([503, '120', 'application/octet-stream', null]);
        expect(Buffer.from(await answer.arrayBuffer())).toEqual(bytes);
      },
    );
  });

  it('sends a delivery again on a new connection when the receiver closed the kept-alive one as it was reused', async () => {
    // A receiver that keeps connections open without saying for how long, and resets one at its second request.
    const requests: number[] = [];
    const receiver = createServer((socket) => {
      let seen = 0;
      socket.on('data', (chunk) => {
        if (!chunk.includes('\r\n\r\n')) return;
        seen += 1;
        requests.push(seen);
        if (seen > 1) return void socket.resetAndDestroy();
        socket.write('HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
    const relay = await startRelay({ forward: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/webhooks`, secrets: [RELAY_SECRET], port: 0 });
    try {
      expect((await fetch(relay.webhookUrl, { method: 'POST', body: '{}' })).status).toBe(204);
      expect((await fetch(relay.webhookUrl, { method: 'POST', body: '{}' })).status).toBe(204);
      // The second went out twice: on the kept connection, which was reset, then on a new one.
      expect(requests).toEqual([1, 2, 1]);
      expect(relay.log.summaries().map((summary) => summary.status)).toEqual([204, 204]);
    } finally {
      await relay.close();
      receiver.close();
    }
  });

  it('does not send again what a new connection was reset on: that receiver is down', async () => {
    let requests = 0;
    const receiver = createServer((socket) => {
      socket.on('data', () => {
        requests += 1;
        socket.resetAndDestroy();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
    const relay = await startRelay({ forward: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/webhooks`, secrets: [RELAY_SECRET], port: 0 });
    try {
      expect((await fetch(relay.webhookUrl, { method: 'POST', body: '{}' })).status).toBe(502);
      expect([requests, relay.log.summaries()[0]!.failure]).toEqual([1, 'connection failed (ECONNRESET)']);
    } finally {
      await relay.close();
      receiver.close();
    }
  });

  it("keeps an answer's headers as they came, at most 64 of 8 KiB in all, and counts those it left out", async () => {
    // In order, in their case, a repeat kept; one too long for what is left is left out, and those after it still kept.
    const raw = ['X-First', 'one', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2', 'X-Long', 'l'.repeat(7000), 'X-Too-Long', 't'.repeat(2000)];
    for (let i = 0; i < 100; i += 1) raw.push(`X-Pad-${i}`, 'p');
    await withReceiver(
      (_req, res) => res.writeHead(200, raw).end(),
      async (relay) => {
        await fetch(relay.webhookUrl, { method: 'POST', body: '{}' });
        const { headers = [], headersLeftOut } = relay.log.get(1)!.answer;
        const pairs: Array<[string, string]> = [];
        for (let i = 0; i < raw.length; i += 2) pairs.push([raw[i]!, raw[i + 1]!]);
        expect(headers.slice(0, 5)).toEqual([...pairs.slice(0, 4), pairs[5]]);
        expect(headers).toHaveLength(64);
        expect(headers.reduce((sum, [name, value]) => sum + name.length + value.length, 0)).toBeLessThanOrEqual(8 * 1024);
        // Node's own headers after them (Date, Connection, …) are counted too.
        expect(headersLeftOut).toBe(pairs.length + 4 - 64);
        // The byte bound of the log counts them.
        expect(relay.log.size).toBeGreaterThan(JSON.stringify(headers).length + 512);
      },
    );
  });

  it('keeps 64 KiB of a long answer and says it cut it', async () => {
    await withReceiver(
      (_req, res) => res.writeHead(200).end('y'.repeat(70 * 1024)),
      async (relay) => {
        const answer = await fetch(relay.webhookUrl, { method: 'POST', body: '{}' });
        expect((await answer.text()).length).toBe(64 * 1024);
        expect(relay.log.get(1)!.answer).toMatchObject({ status: 200, truncated: true, body: 'y'.repeat(64 * 1024) });
      },
    );
  });

  it('keeps an answer of 64 KiB exactly whole, and does not say it cut it', async () => {
    await withReceiver(
      (_req, res) => res.writeHead(200).end('y'.repeat(64 * 1024)),
      async (relay) => {
        await fetch(relay.webhookUrl, { method: 'POST', body: '{}' });
        const { truncated, body } = relay.log.get(1)!.answer;
        expect([truncated, body]).toEqual([undefined, 'y'.repeat(64 * 1024)]);
      },
    );
  });

  it('answers the sender once 64 KiB of an answer are in, without waiting for a receiver that writes on', async () => {
    let answered: () => void = () => {};
    const sent = new Promise<void>((resolve) => (answered = resolve));
    await withReceiver(
      (_req, res) => {
        res.writeHead(200);
        res.write('y'.repeat(64 * 1024 + 1));
        // The receiver ends only once the sender has its answer.
        void sent.then(() => res.end());
      },
      async (relay) => {
        const answer = await fetch(relay.webhookUrl, { method: 'POST', body: '{}' });
        expect((await answer.text()).length).toBe(64 * 1024);
        answered();
        expect(relay.log.get(1)!.answer).toMatchObject({ status: 200, truncated: true });
      },
      { answerWindowMs: 60_000 },
    );
  });

  it('counts the length of header names in the 8 KiB of headers it keeps', async () => {
    const name = `X-${'n'.repeat(6000)}`;
    await withReceiver(
      (_req, res) => res.writeHead(200, [name, 'v'.repeat(3000)]).end(),
      async (relay) => {
        await fetch(relay.webhookUrl, { method: 'POST', body: '{}' });
        const { headers = [], headersLeftOut } = relay.log.get(1)!.answer;
        expect(headers.map(([kept]) => kept)).not.toContain(name);
        expect(headersLeftOut).toBe(1);
      },
    );
  });

  it("counts the receiver's answer in the byte bound", async () => {
    await withReceiver(
      (_req, res) => res.writeHead(200).end('y'.repeat(10 * 1024)),
      async (relay) => {
        for (let i = 0; i < 2; i += 1) await fetch(relay.webhookUrl, { method: 'POST', body: '{}' });
        // Each record is over 10 KiB for its answer alone: two do not fit in 16 KiB.
        expect(relay.log.summaries().map((one) => one.n)).toEqual([2]);
        expect(relay.log.dropped).toBe(1);
      },
      { bounds: { maxRecords: 500, maxBytes: 16 * 1024 } },
    );
  });

  it('records a header sent more than once as its values joined by a comma', async () => {
    rig = await startRelayRig();
    const { port } = new URL(rig.relay.webhookUrl);
    await rawRequest(Number(port), `POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
    expect((await detail(1)).request.headers['set-cookie']).toBe('a=1, b=2');
  });

  it('keeps the status and the start of an answer whose body does not end within the window', async () => {
    await withReceiver(
      (_req, res) => {
        res.writeHead(202);
        res.write('partial');
      },
      async (relay) => {
        const started = performance.now();
        const answer = await fetch(relay.webhookUrl, { method: 'POST', body: '{}' });
        const elapsed = performance.now() - started;
        expect([answer.status, await answer.text()]).toEqual([202, 'partial']);
        const { latencyMs, headers, ...rest } = relay.log.get(1)!.answer;
        expect(rest).toStrictEqual({ status: 202, body: 'partial' });
        expect(headers).toEqual(expect.arrayContaining([['Transfer-Encoding', 'chunked']]));
        // The latency runs from forwarding to giving up: the whole window, and no more than the sender waited.
        expect(latencyMs).toBeGreaterThanOrEqual(190);
        expect(latencyMs).toBeLessThanOrEqual(Math.ceil(elapsed));
      },
      { answerWindowMs: 200 },
    );
  });

  it('tells of a save that failed, and relays the delivery all the same', async () => {
    const problems: string[] = [];
    const save = '/nonexistent/deliveries.jsonl';
    await withReceiver(
      (_req, res) => res.writeHead(204).end(),
      async (relay) => {
        expect((await fetch(relay.webhookUrl, { method: 'POST', body: '{}' })).status).toBe(204);
        expect(problems).toEqual([`could not append to ${save}: ENOENT: no such file or directory, open '${save}'`]);
      },
      { save, onProblem: (line) => problems.push(line) },
    );
  });
});

describe('svc-webhooks dev: its clock and bounds', () => {
  it("records, verifies, signs and re-signs on the relay's clock", async () => {
    const clock = Date.parse('2030-01-01T00:00:00Z');
    rig = await startRelayRig({ now: () => clock });
    await rig.deliver(testEvent('call.missed'));
    // Signed now, it is four years old to the relay's clock.
    expect(await detail(1)).toMatchObject({ receivedAt: '2030-01-01T00:00:00.000Z', verdict: { valid: false, code: 'timestamp_too_old' } });
    const sent = (await (await rig.api('/api/send', { type: 'webhook.test' })).json()) as DeliveryRecord;
    expect(sent.request.headers).toMatchObject({ 'content-type': 'application/json', 'webhook-timestamp': String(clock / 1000) });
    // The event itself is built on that clock too: its timestamp, and the time part of its id.
    const sentEvent = JSON.parse(Buffer.from(sent.request.bodyBase64, 'base64').toString('utf8')) as WebhookEvent;
    expect([sentEvent.timestamp, sentEvent.id.slice(0, 14)]).toEqual(['2030-01-01T00:00:00Z', `msg_${testEvent('webhook.test', undefined, { now: () => clock }).id.slice(4, 14)}`]);
    expect(sent).toMatchObject({ receivedAt: '2030-01-01T00:00:00.000Z', verdict: { valid: true }, answer: { outcome: { outcome: 'timestamp_too_new' } } });
    const resigned = await replay(1, 'resign');
    expect(resigned).toMatchObject({ request: { headers: { 'webhook-timestamp': String(clock / 1000) } }, verdict: { valid: true } });
  });

  it('keeps the newest record even when it alone passes the byte bound, and counts its bytes once', async () => {
    rig = await startRelayRig({ bounds: { maxRecords: 500, maxBytes: 1 } });
    await rig.deliver(testEvent('webhook.test'));
    const one = rig.relay.log.size;
    expect(await list()).toMatchObject({ deliveries: [{ n: 1 }], dropped: 0 });
    await rig.deliver(testEvent('webhook.test'));
    await rig.deliver(testEvent('webhook.test'));
    expect(await list()).toMatchObject({ deliveries: [{ n: 3 }], dropped: 2 });
    // Records of the same size: those dropped no longer count.
    expect(rig.relay.log.size).toBe(one);
  });
});

/** POSTs `text` as it is to the relay's API, with the token. */
const postText = (path: string, text: string): Promise<Response> =>
  fetch(new URL(path, rig!.relay.webhookUrl), { method: 'POST', headers: { authorization: `Bearer ${rig!.relay.token}` }, body: text });

/** Expects `answer` to be the relay's JSON problem `code` (with `message`) at `status`. */
async function expectProblem(answer: Response, status: number, code: string, message: string): Promise<void> {
  expect(answer.headers.get('content-type')).toBe('application/json');
  expect(answer.headers.get('cache-control')).toBe('no-store');
  expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
  expect([answer.status, await answer.json()]).toEqual([status, { error: { code, message } }]);
}

describe("svc-webhooks dev: the API's mistakes", () => {
  it('answers 404 to a page or operation it does not have, and to a delivery it does not keep', async () => {
    rig = await startRelayRig();
    await rig.deliver(testEvent('webhook.test'));
    const none = 'no such page or operation';
    const cases: Array<[string, 'GET' | 'POST', string]> = [
      ['/api/nope', 'GET', none],
      ['/', 'POST', none],
      ['/api/deliveries', 'POST', none],
      ['/api/events', 'POST', none],
      ['/api/send', 'GET', none],
      ['/api/deliveries/1', 'POST', none],
      ['/api/deliveries/1/replay', 'GET', none],
      ['/api/deliveries/1/curl', 'POST', none],
      ['/api/samples', 'POST', none],
      ['/api/deliveries/1/x', 'GET', none],
      ['/x/api/deliveries/1', 'GET', none],
      ['/api/deliveries/1234567890', 'GET', none],
      ['/api/deliveries/7', 'GET', 'no delivery 7: it was never recorded, or dropped past the bounds'],
    ];
    for (const [path, method, message] of cases) await expectProblem(await rig.api(path, method === 'POST' ? {} : undefined), 404, 'not_found', message);
    // A number of several digits is a delivery's.
    for (let i = 0; i < 9; i++) await rig.deliver(testEvent('webhook.test'));
    expect(((await (await rig.api('/api/deliveries/10')).json()) as DeliveryRecord).n).toBe(10);
  });

  it('answers 405 to a delivery that is no POST, and 404 to a request target that is no URL', async () => {
    rig = await startRelayRig();
    await expectProblem(await fetch(rig.relay.webhookUrl), 405, 'method_not_allowed', 'deliveries are POSTed to /webhooks');
    const { port } = new URL(rig.relay.webhookUrl);
    const answer = await rawRequest(Number(port), `GET http://[ HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 404 /);
    expect(answer).toContain('{"error":{"code":"not_found","message":"no such page or operation"}}');
  });

  it('answers 400 with the reason to a body, a mode or an event it cannot use', async () => {
    rig = await startRelayRig();
    await rig.deliver(testEvent('webhook.test'));
    const modes = 'mode must be one of exact, resign, new-id';
    const cases: Array<[string, string, string]> = [
      ['/api/deliveries/1/replay', '{"mode":"fresh"}', modes],
      // An empty body is an empty object: no mode.
      ['/api/deliveries/1/replay', '', modes],
      ['/api/deliveries/1/replay', 'not json', 'the body is not JSON'],
      ['/api/deliveries/1/replay', '["exact"]', 'the body must be a JSON object'],
      ['/api/deliveries/1/replay', 'null', 'the body must be a JSON object'],
      ['/api/deliveries/1/replay', '5', 'the body must be a JSON object'],
      ['/api/deliveries/1/replay', '"exact"', 'the body must be a JSON object'],
      ['/api/send', '{"type":1}', 'type must be an event type string'],
      ['/api/send', '{"type":"call.missed","data":null}', 'data must be a JSON object'],
      ['/api/send', '{"type":"call.missed","data":"x"}', 'data must be a JSON object'],
      // testEvent's own words, without its prefix: the page shows them as they are.
      ['/api/send', '{"type":"Call.Missed"}', `testEvent takes an event type, as 'call.missed', not "Call.Missed"`],
    ];
    for (const [path, text, message] of cases) await expectProblem(await postText(path, text), 400, 'bad_request', message);
    expect(rig.handled).toHaveLength(1);
  });

  it('keeps the connection of a request it refused once read whole', async () => {
    rig = await startRelayRig();
    const { port } = new URL(rig.relay.webhookUrl);
    const agent = new Agent({ keepAlive: true });
    const answer = await new Promise<{ status?: number; connection?: string }>((resolve, reject) => {
      const request = httpRequest({ port, host: '127.0.0.1', path: '/api/send', method: 'POST', agent, headers: { authorization: `Bearer ${rig!.relay.token}` } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
      });
      request.on('error', reject);
      request.end('not json');
    });
    agent.destroy();
    expect(answer).toEqual({ status: 400, connection: 'keep-alive' });
  });

  it('answers 413 too_large to an API request past 4 MiB', async () => {
    rig = await startRelayRig();
    await expectProblem(await postText('/api/send', 'x'.repeat(4 * 1024 * 1024 + 1)), 413, 'too_large', 'the request is larger than 4 MiB: that is no webhook');
  });

  it('refuses a replay its mode cannot make, and sends nothing', async () => {
    rig = await startRelayRig();
    const { port } = new URL(rig.relay.webhookUrl);
    // Not JSON, and no webhook-id: no new id can go in it, and nothing can be re-signed.
    await rawRequest(Number(port), `POST /webhooks HTTP/1.1\r\nHost: tunnel.example\r\nContent-Length: 4\r\nConnection: close\r\n\r\nnope`);
    for (const [mode, message] of [
      ['new-id', 'new-id needs a body that is a JSON object, to give it a new id'],
      ['resign', 'resign needs the recorded webhook-id, and this delivery has none'],
    ] as const) {
      await expectProblem(await rig.api('/api/deliveries/1/replay', { mode }), 400, 'bad_request', message);
    }
    expect((await list()).deliveries).toHaveLength(1);
  });
});

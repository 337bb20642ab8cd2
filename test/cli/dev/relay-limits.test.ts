/**
 * What a sender or a page cannot make the relay of `svc-webhooks dev` do:
 * hold more than its bounds (deliveries in progress, a page that stopped
 * reading, long ids), break its saved file, or write the run's token or a
 * client's own failure into its problems.
 */
import { Buffer } from 'node:buffer';
import { readFile } from 'node:fs/promises';
import { createServer, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { PageStreams } from '../../../src/cli/dev/page-streams.js';
import { DEFAULT_REQUEST_TIMEOUT_MS, startRelay, type Relay, type RelayOptions } from '../../../src/cli/dev/relay.js';
import { typesFolder } from '../../helpers/contract-types.js';
import { RELAY_SECRET } from '../../helpers/dev-relay.js';
import { RawConnection } from '../../helpers/raw-http.js';
import { SECRET, signedRequest } from '../../helpers/signed-request.js';

/** A receiver that holds its answers: how many it holds, and the call that answers them (and every later one at once). */
interface Holding {
  held(): number;
  release(): void;
}

/** Runs `test` against a relay (`options` its own) in front of a receiver that answers 204, at once unless `hold`. */
async function withRelay(test: (relay: Relay, receiver: Holding) => Promise<void>, options: Partial<RelayOptions> = {}, hold = false): Promise<void> {
  const waiting: Array<() => void> = [];
  let released = !hold;
  const receiver = createServer((_req, res) => {
    const answer = (): void => void res.writeHead(204).end();
    if (released) answer();
    else waiting.push(answer);
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  const { port } = receiver.address() as { port: number };
  const relay = await startRelay({ forward: `http://127.0.0.1:${port}/webhooks`, secrets: [RELAY_SECRET], port: 0, ...options });
  const release = (): void => {
    released = true;
    for (const answer of waiting.splice(0)) answer();
  };
  try {
    await test(relay, { held: () => waiting.length, release });
  } finally {
    release();
    await relay.close();
    receiver.closeAllConnections();
    receiver.close();
  }
}

const post = (relay: Relay, body: string | Buffer): Promise<Response> => fetch(relay.webhookUrl, { method: 'POST', body });

describe('svc-webhooks dev: what is in progress', () => {
  it('answers 503 relay_busy with Retry-After past the deliveries in progress, and relays again once they are answered', async () => {
    await withRelay(
      async (relay, { held: holding, release }) => {
        const held = [post(relay, '{}'), post(relay, '{}')];
        // The two are in progress until the receiver answers.
        await expect.poll(holding).toBe(2);
        const refused = await post(relay, '{}');
        expect([refused.status, refused.headers.get('retry-after'), await refused.json()]).toEqual([
          503,
          '5',
          { error: { code: 'relay_busy', message: 'the relay has 2 deliveries in progress; retry later' } },
        ]);
        release();
        expect((await Promise.all(held)).map((answer) => answer.status)).toEqual([204, 204]);
        expect((await post(relay, '{}')).status).toBe(204);
        // The refused one was never relayed, nor recorded.
        expect(relay.log.summaries()).toHaveLength(3);
      },
      { inProgress: { deliveries: 2, bytes: 1024 * 1024 } },
      true,
    );
  });

  it('answers 503 past the bytes in progress, counting a body by its declared length before it is read', async () => {
    await withRelay(
      async (relay, { held: holding, release }) => {
        const held = post(relay, 'x'.repeat(600));
        await expect.poll(holding).toBe(1);
        expect((await post(relay, 'y'.repeat(500))).status).toBe(503);
        // What fits beside it is relayed.
        const fits = post(relay, 'z'.repeat(400));
        await expect.poll(holding).toBe(2);
        release();
        expect([(await held).status, (await fits).status]).toEqual([204, 204]);
        // Once answered, the bytes no longer count.
        expect((await post(relay, 'y'.repeat(1000))).status).toBe(204);
      },
      { inProgress: { deliveries: 10, bytes: 1000 } },
      true,
    );
  });

  it('holds 64 MiB of bodies declared at once, and answers 503 relay_busy to one byte more, before the bodies have come', async () => {
    await withRelay(async (relay) => {
      // 16 bodies of 4 MiB, each declared whole and begun: 64 KiB of each sent, the rest owed.
      const begun = 'x'.repeat(64 * 1024);
      const senders = await Promise.all(Array.from({ length: 16 }, () => RawConnection.open(relay.webhookUrl)));
      for (const sender of senders) sender.post('/webhooks', [], begun, 4 * 1024 * 1024);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const refused = await post(relay, '{');
      expect([refused.status, refused.headers.get('retry-after')]).toEqual([503, '5']);
      expect(await refused.json()).toEqual({ error: { code: 'relay_busy', message: 'the relay has 16 deliveries in progress; retry later' } });
      // Each of the 16 is relayed once it has come whole.
      const rest = 'x'.repeat(4 * 1024 * 1024 - begun.length);
      for (const sender of senders) sender.write(rest);
      expect((await Promise.all(senders.map((sender) => sender.response(20_000)))).map(({ status }) => status)).toEqual(Array(16).fill(204));
      expect((await post(relay, '{')).status).toBe(204);
    });
  }, 30_000);

  it('counts a body sent in chunks, with no length declared, as it comes: the chunk past the bound is answered 503 relay_busy', async () => {
    await withRelay(
      async (relay) => {
        const [first, second] = [await RawConnection.open(relay.webhookUrl), await RawConnection.open(relay.webhookUrl)];
        first.postChunked('/webhooks', []);
        first.chunk('a'.repeat(600));
        second.postChunked('/webhooks', []);
        second.chunk('b'.repeat(300));
        await new Promise((resolve) => setTimeout(resolve, 200));
        second.chunk('b'.repeat(200));
        const refused = await second.response();
        expect([refused.status, refused.headers['retry-after'], JSON.parse(refused.body)]).toEqual([
          503,
          '5',
          { error: { code: 'relay_busy', message: 'the relay has 1 deliveries in progress; retry later' } },
        ]);
        await second.closed();
        // The first, within the bound, is relayed once it ends; the second never was.
        first.chunk('');
        expect((await first.response()).status).toBe(204);
        expect(relay.log.summaries()).toHaveLength(1);
      },
      { inProgress: { deliveries: 10, bytes: 1000 } },
    );
  });
});

describe('svc-webhooks dev: what a sender sends', () => {
  it('answers 413 too_large to a body past 4 MiB, and relays nothing', async () => {
    await withRelay(async (relay) => {
      const answer = await post(relay, 'x'.repeat(4 * 1024 * 1024 + 1));
      expect([answer.status, await answer.json()]).toEqual([413, { error: { code: 'too_large', message: 'the request is larger than 4 MiB: that is no webhook' } }]);
      expect(relay.log.summaries()).toHaveLength(0);
    });
  });

  it("forwards a body nested 6,000 deep, signed with another secret, and answers with the receiver's status; the diagnosis says what it left out", async () => {
    await withRelay(async (relay) => {
      const body = `{"id":"evt_deep","type":"webhook.test","data":${'['.repeat(6000)}${']'.repeat(6000)}}`;
      const { headers } = signedRequest({ id: 'evt_deep', body, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) });
      const answer = await fetch(relay.webhookUrl, { method: 'POST', headers, body });
      expect(answer.status).toBe(204);
      const { verdict } = relay.log.get(1)!;
      expect([verdict.valid, verdict.code, verdict.lines[2]]).toEqual([
        false,
        'invalid_signature',
        'not tried: the body printed again as compact JSON, JSON indented with 2 spaces or JSON indented with 4 spaces: it nests deeper than 64 levels',
      ]);
    });
  });
});

describe('svc-webhooks dev: a sender that trickles', () => {
  it('gives a request 30 s to come in whole', () => {
    expect(DEFAULT_REQUEST_TIMEOUT_MS).toBe(30_000);
  });

  it('answers 408 request_timeout to a body still coming when the time is up, ends the connection, and relays nothing', async () => {
    const problems: string[] = [];
    await withRelay(
      async (relay) => {
        const sender = await RawConnection.open(relay.webhookUrl);
        sender.post('/webhooks', [], '{', 1000);
        // A byte every 50 ms: never idle, never whole.
        const trickle = setInterval(() => sender.write(' '), 50);
        try {
          const answer = await sender.response();
          expect([answer.status, answer.headers.connection, JSON.parse(answer.body)]).toEqual([
            408,
            'close',
            { error: { code: 'request_timeout', message: 'the request did not come in whole within 0.3 s' } },
          ]);
          await sender.closed();
        } finally {
          clearInterval(trickle);
        }
        expect(relay.log.summaries()).toHaveLength(0);
        // What it held is free again, once the relay has seen the connection end.
        await expect.poll(async () => (await post(relay, '{}')).status).toBe(204);
      },
      { requestTimeoutMs: 300, inProgress: { deliveries: 1, bytes: 1000 }, onProblem: (line) => problems.push(line) },
    );
    expect(problems).toEqual([]);
  });

  it('ends the connection of a sender refused before its body was read that trickles on, when the time is up', async () => {
    await withRelay(
      async (relay) => {
        const sender = await RawConnection.open(relay.webhookUrl);
        sender.post('/webhooks', [], '{', 2000);
        expect((await sender.response()).status).toBe(503);
        const trickle = setInterval(() => sender.write(' '), 50);
        try {
          await sender.closed(2000);
        } finally {
          clearInterval(trickle);
        }
      },
      { requestTimeoutMs: 300, inProgress: { deliveries: 10, bytes: 1000 } },
    );
  });

  it('leaves a request that came whole in time to the receiver, however long it answers', async () => {
    await withRelay(
      async (relay, { held, release }) => {
        const answer = post(relay, '{}');
        await expect.poll(held).toBe(1);
        await new Promise((resolve) => setTimeout(resolve, 500));
        release();
        expect((await answer).status).toBe(204);
      },
      { requestTimeoutMs: 300 },
      true,
    );
  });
});

describe('svc-webhooks dev: what it keeps and saves', () => {
  it('writes one whole line per delivery to --save, large deliveries side by side included', async () => {
    const save = join(await typesFolder(), 'parallel.jsonl');
    await withRelay(
      async (relay) => {
        const bodies = Array.from({ length: 6 }, (_, i) => JSON.stringify({ id: `evt_${i}`, type: 'webhook.test', pad: String(i).repeat(1024 * 1024) }));
        expect((await Promise.all(bodies.map((body) => post(relay, body)))).map((answer) => answer.status)).toEqual([204, 204, 204, 204, 204, 204]);
      },
      { save },
    );
    const lines = (await readFile(save, 'utf8')).split('\n').filter((line) => line !== '');
    const ids = lines.map((line) => (JSON.parse(line) as { event: { id: string } }).event.id).sort();
    expect(ids).toEqual(['evt_0', 'evt_1', 'evt_2', 'evt_3', 'evt_4', 'evt_5']);
  });

  it('shows at most 256 characters of an id and a type, and counts what it shows in the byte bound', async () => {
    await withRelay(async (relay) => {
      const type = `a.${'b'.repeat(1024 * 1024)}`;
      await post(relay, JSON.stringify({ id: 'i'.repeat(5000), type }));
      expect(relay.log.summaries()[0]!.event).toEqual({ id: 'i'.repeat(256), type: type.slice(0, 256) });
      const body = Buffer.byteLength(JSON.stringify({ id: 'i'.repeat(5000), type }));
      // The body in base64, the shown id and type as JSON, the headers, and 512 for the rest.
      expect(relay.log.size).toBeGreaterThan(Math.ceil(body / 3) * 4 + 512 + 512);
    });
  });
});

describe('svc-webhooks dev: the pages that stopped reading', () => {
  /** A stream that takes what is written and never sends it: a page that stopped reading. */
  const stalled = (): Writable => new Writable({ write: () => {} });

  it('ends a stream once it holds more than 1 MiB unsent, and sends on to the others', () => {
    const streams = new PageStreams();
    const stuck = stalled();
    const read: string[] = [];
    streams.add(stuck);
    streams.add(new Writable({ write: (chunk: Buffer, _encoding, done) => (read.push(chunk.toString()), done()) }));
    const data = { pad: 'x'.repeat(64 * 1024) };
    let sent = 0;
    while (!stuck.destroyed && sent < 100) {
      streams.send('delivery', data);
      sent += 1;
    }
    expect(stuck.destroyed).toBe(true);
    // It held a little more than the 1 MiB bound when it was ended, and no more.
    expect(sent).toBe(Math.ceil((1024 * 1024) / JSON.stringify(data).length) + 1);
    expect(streams.size).toBe(1);
    streams.send('delivery', data);
    expect(read).toHaveLength(sent + 1);
    expect(read[0]).toBe(`event: delivery\ndata: ${JSON.stringify(data)}\n\n`);
  });

  it('forgets a stream once it closes', async () => {
    const streams = new PageStreams();
    const one = stalled();
    streams.add(one);
    one.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    expect(streams.size).toBe(0);
  });
});

describe('svc-webhooks dev: its problems', () => {
  it('does not tell of a client that went away mid-request, and never of the token in its query', async () => {
    const problems: string[] = [];
    await withRelay(
      async (relay) => {
        const { port } = new URL(relay.webhookUrl);
        // A body announced longer than sent, then the connection dropped.
        await new Promise<void>((resolve) => {
          const request = httpRequest({ port, host: '127.0.0.1', method: 'POST', path: `/api/send?token=${relay.token}`, headers: { 'content-length': '1000', host: `127.0.0.1:${port}` } });
          request.on('error', () => resolve());
          request.write('{"type":');
          setTimeout(() => request.destroy(), 100);
        });
        await new Promise((resolve) => setTimeout(resolve, 100));
        // A request target no URL can be made of is answered, not reported.
        const answer = await fetch(`http://127.0.0.1:${port}//`, { method: 'GET' }).catch(() => undefined);
        expect(answer?.status).toBe(404);
      },
      { onProblem: (line) => problems.push(line) },
    );
    expect(problems).toEqual([]);
  });
});

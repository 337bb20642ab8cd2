/**
 * `svc-webhooks send` run in this process against receivers that record what
 * they got: the scenarios the packed bin is held to, then the options, the
 * retries and the answer window, with pauses recorded instead of waited out;
 * copies sent at once and bodies changed after signing; and its help.
 */
import { Buffer } from 'node:buffer';
import { createServer, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_COPIES, sendCommand } from '../../../src/cli/send/send.js';
import { SERVICE_TIMING } from '../../../src/testing/delivery.js';
import {
  attemptLines,
  expectDeliveryHelp,
  expectSignedBy,
  expectUnansweredSendFails,
  hmac,
  SECRET,
  SEND_SCENARIOS,
  v1Entries,
  withRecordingReceiver,
  type Received,
} from '../delivery-scenarios.js';
import { inProcessCli, recordedTiming } from '../in-process-cli.js';
import { verifyWebhook } from '../../../adapters/fetch.js';
import { serveFetch } from '../../helpers/adapter-servers.js';
import { closeServer, listen } from '../../helpers/http-harness.js';

const envelopeOf = (body: Buffer): { id: string; type: string; timestamp: string; data: unknown } => JSON.parse(body.toString());

describe('the help of send', () => {
  it('describes each option, the 10 s window and the exit statuses', () =>
    expectDeliveryHelp(sendCommand, ['--secret S', '--type T', '--data D', '--id ID', '--retries N', '--copies N', '--tamper']));

  it("keeps each option's text under it, within 80 columns past the usage line", () => {
    expect(sendCommand.help).toContain(
      "\n  --secret S    the endpoint's secret (whsec_…); give it twice to sign with both\n                keys of a rotation; without it, WEBHOOK_SECRET\n  --type T ",
    );
    for (const line of sendCommand.help.split('\n').slice(1)) expect(line.length).toBeLessThanOrEqual(80);
  });
});

/** A receiver that holds every answer until `count` requests are in, then answers them all 204: copies sent one after another never all get one. */
async function gatedReceiver(count: number): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const held: ServerResponse[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({ method: req.method, headers: req.headers, body: Buffer.concat(chunks) });
    held.push(res);
    if (held.length === count) for (const one of held) one.writeHead(204).end();
  });
  const url = `${await listen(server)}/webhooks`;
  return { url, received, close: () => closeServer(server) };
}

/** The lines of standard output that report a copy's attempt, in copy order. */
const copyLines = (stdout: string): string[] => stdout.split('\n').filter((line) => line.startsWith('copy ')).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));

describe('svc-webhooks send, in process', () => {
  it.each(Object.entries(SEND_SCENARIOS))('%s', (_title, scenario) => scenario(inProcessCli(recordedTiming())));

  it('counts an attempt unanswered within the answer window as failed', () =>
    expectUnansweredSendFails(inProcessCli(recordedTiming(50)), '0.05 s'));

  it('waits 1 s, 2 s, 4 s … between attempts, 30 s at most, and prints no wait after the last', async () => {
    const timing = recordedTiming();
    await withRecordingReceiver([{ status: 503, code: 'dedup_unavailable' }], async ({ url, received }) => {
      const run = await inProcessCli(timing)(['send', url, '--secret', SECRET, '--retries', '6']);
      expect(timing.pauses).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000]);
      expect(attemptLines(run).map((line) => line.replace(/ \(\d+ ms\)/, ''))).toEqual([
        'attempt 1: 503 dedup_unavailable, retrying in 1 s',
        'attempt 2: 503 dedup_unavailable, retrying in 2 s',
        'attempt 3: 503 dedup_unavailable, retrying in 4 s',
        'attempt 4: 503 dedup_unavailable, retrying in 8 s',
        'attempt 5: 503 dedup_unavailable, retrying in 16 s',
        'attempt 6: 503 dedup_unavailable, retrying in 30 s',
        'attempt 7: 503 dedup_unavailable',
      ]);
      expect(received).toHaveLength(7);
      expect(run.stderr).toMatch(/^svc-webhooks send: not delivered in 7 attempt\(s\): the last got 503 dedup_unavailable \(\d+ ms\)\n$/);
      expect(run.code).toBe(1);
    });
  });

  it('makes one attempt when --retries is not given, and stops retrying once delivered', async () => {
    const timing = recordedTiming();
    await withRecordingReceiver([{ status: 500 }, { status: 204 }], async ({ url, received }) => {
      const once = await inProcessCli(timing)(['send', url, '--secret', SECRET]);
      expect([once.code, received.length, timing.pauses]).toEqual([1, 1, []]);
      expect(attemptLines(once)).toEqual([expect.stringMatching(/^attempt 1: 500 \(\d+ ms\)$/)]);
      const again = await inProcessCli(timing)(['send', url, '--secret', SECRET, '--retries', '3']);
      expect([again.code, received.length, timing.pauses]).toEqual([0, 2, []]);
    });
  });

  it('signs every retry afresh at its own time with the same id and body', async () => {
    // A clock that moves only when the sender pauses: the retry is signed exactly 1 s later.
    vi.useFakeTimers({ toFake: ['Date'] });
    const timing = { ...recordedTiming(), pause: async (ms: number) => void vi.advanceTimersByTime(ms) };
    try {
      await withRecordingReceiver([{ status: 503 }, { status: 204 }], async ({ url, received }) => {
        const run = await inProcessCli(timing)(['send', url, '--secret', SECRET, '--retries', '1', '--id', 'msg_resigned']);
        expect(run.code).toBe(0);
        const [first, second] = received.map((request) => Number(request.headers['webhook-timestamp']));
        expect(second! - first!).toBe(1);
        expect(received.map((request) => request.headers['webhook-id'])).toEqual(['msg_resigned', 'msg_resigned']);
        for (const request of received) expectSignedBy(request, SECRET);
      });
    } finally {
      vi.useRealTimers();
    }
  });

  it('reads --data inline and from standard input, and sends it as the envelope data', async () => {
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      const data = { object: { id: 'msg_in_1' }, text: 'héllo' };
      const inline = await inProcessCli(recordedTiming())(['send', url, '--secret', SECRET, '--data', JSON.stringify(data)]);
      const piped = await inProcessCli(recordedTiming())(['send', url, '--secret', SECRET, '--data', '-'], JSON.stringify(data));
      expect([inline.code, piped.code, inline.stderr, piped.stderr]).toEqual([0, 0, '', '']);
      expect(received.map((request) => envelopeOf(request.body).data)).toEqual([data, data]);
    });
  });

  it('warns, and still sends, when --data has no string object.id', async () => {
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      for (const data of ['{}', '{"object":{"id":5}}', '{"object":null}']) {
        const run = await inProcessCli(recordedTiming())(['send', url, '--secret', SECRET, '--data', data]);
        expect(run.stderr).toBe('svc-webhooks send: warning: --data has no string "object.id" (spec section 2)\n');
        expect(run.code).toBe(0);
      }
      expect(received.map((request) => envelopeOf(request.body).data)).toEqual([{}, { object: { id: 5 } }, { object: null }]);
    });
  });

  it("prints the receiver's own verdict beside each attempt when it sends one (outcomeHeader: 'on')", async () => {
    const receiver = await serveFetch(verifyWebhook({ secret: SECRET, on: { 'webhook.test': () => {} }, outcomeHeader: 'on' }));
    try {
      const send = () => inProcessCli(recordedTiming())(['send', `${receiver.url}/webhooks`, '--secret', SECRET, '--id', 'msg_outcome']);
      expect((await send()).stdout).toMatch(/\nattempt 1: 204 \(\d+ ms\), receiver: processed; handler-ms=\d+; key-id=0\n$/);
      expect((await send()).stdout).toMatch(/\nattempt 1: 200 \(\d+ ms\), receiver: duplicate; key-id=0\n$/);
    } finally {
      await receiver.close();
    }
  });

  it('puts the event timestamp of the sending second in the envelope', async () => {
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      await inProcessCli(recordedTiming())(['send', url, '--secret', SECRET]);
      const [request] = received;
      const { timestamp } = envelopeOf(request!.body);
      expect(timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(Date.parse(timestamp) / 1000).toBe(Number(request!.headers['webhook-timestamp']));
    });
  });

  it.each([
    [['--data', 'not json'], '--data is not JSON'],
    [['--data', '[{"object":{"id":"a"}}]'], '--data must be a JSON object'],
    [['--data', 'null'], '--data must be a JSON object'],
    [['--data', '"text"'], '--data must be a JSON object'],
    [['--data', '@/nonexistent/data.json'], '--data: cannot read /nonexistent/data.json (ENOENT)'],
    [['--retries', '2.5'], '--retries must be a whole number of at least 0'],
    [['--copies', '0'], `--copies must be a whole number from 1 to ${MAX_COPIES}`],
    [['--copies', String(MAX_COPIES + 1)], `--copies must be a whole number from 1 to ${MAX_COPIES}`],
    [['--copies', 'many'], `--copies must be a whole number from 1 to ${MAX_COPIES}`],
    [['--tamper', '--retries', '1'], '--tamper sends each copy once: it takes no --retries'],
  ])('refuses %j with exit 2 before sending anything', async (args, message) => {
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      const run = await inProcessCli()(['send', url, '--secret', SECRET, ...args]);
      expect(run.stderr).toBe(`svc-webhooks send: ${message}\nRun "svc-webhooks send --help" for usage.\n`);
      expect([run.code, run.stdout, received.length]).toEqual([2, '', 0]);
    });
  });
});

describe('send --copies', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('sends N identical copies at once, and reports each as it ends', async () => {
    // Sent one after another, the first copy would wait out its window unanswered (and the test its timeout).
    const receiver = await gatedReceiver(3);
    // A clock a second on at each reading: copies signed one by one would carry different timestamps.
    let nowMs = 1_795_000_000_000;
    vi.spyOn(Date, 'now').mockImplementation(() => (nowMs += 1000));
    try {
      const run = await inProcessCli(recordedTiming())(['send', receiver.url, '--secret', SECRET, '--copies', '3', '--id', 'msg_copies']);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout.split('\n')[0]).toBe(`webhook.test msg_copies -> ${receiver.url} (3 copies at once)`);
      expect(copyLines(run.stdout)).toEqual([1, 2, 3].map((copy) => expect.stringMatching(new RegExp(`^copy ${copy}, attempt 1: 204 \\(\\d+ ms\\)$`))));
      expect(receiver.received).toHaveLength(3);
      const [first, ...others] = receiver.received;
      for (const copy of others) {
        expect(copy.body.equals(first!.body)).toBe(true);
        for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) expect(copy.headers[name]).toBe(first!.headers[name]);
      }
      expectSignedBy(first!, SECRET);
    } finally {
      await receiver.close();
    }
  });

  it('retries each copy on its own, and exits 1 naming how many copies got no 2xx', async () => {
    await withRecordingReceiver([{ status: 204 }, { status: 503, code: 'store_unavailable' }], async ({ url, received }) => {
      const run = await inProcessCli(recordedTiming())(['send', url, '--secret', SECRET, '--copies', '3', '--retries', '1']);
      // The first to arrive is answered 204; the two others are refused twice.
      expect(received).toHaveLength(5);
      expect(copyLines(run.stdout).filter((line) => line.includes(': 503 store_unavailable'))).toHaveLength(4);
      expect(run.stderr).toBe('svc-webhooks send: not delivered: 2 of 3 copies got no 2xx\n');
      expect(run.code).toBe(1);
    });
  });

  it(`sends ${MAX_COPIES} copies, the most it takes`, async () => {
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      const run = await inProcessCli(recordedTiming())(['send', url, '--secret', SECRET, '--copies', String(MAX_COPIES)]);
      expect([run.code, received.length, copyLines(run.stdout).length]).toEqual([0, MAX_COPIES, MAX_COPIES]);
    });
  });
});

describe('send --tamper', () => {
  it('sends a body changed after signing, which a receiver built with svc-webhooks refuses: exit 0, in one copy or several', async () => {
    const handled: unknown[] = [];
    const receiver = await serveFetch(verifyWebhook({ secret: SECRET, on: { 'webhook.test': (event) => void handled.push(event) } }));
    try {
      const url = `${receiver.url}/webhooks`;
      const once = await inProcessCli(recordedTiming())(['send', url, '--secret', SECRET, '--tamper', '--id', 'msg_tampered']);
      expect(once).toMatchObject({ code: 0, stderr: '' });
      expect(once.stdout).toMatch(
        new RegExp(`^webhook\\.test msg_tampered -> ${url} \\(body changed after signing\\)\nattempt 1: 400 invalid_signature \\(\\d+ ms\\)\nrefused: the receiver did not accept the body changed after signing\n$`),
      );
      const copies = await inProcessCli(recordedTiming())(['send', url, '--secret', SECRET, '--tamper', '--copies', '3']);
      expect(copies.code).toBe(0);
      expect(copyLines(copies.stdout)).toEqual([1, 2, 3].map((copy) => expect.stringMatching(new RegExp(`^copy ${copy}, attempt 1: 400 invalid_signature`))));
      expect(handled).toEqual([]);
    } finally {
      await receiver.close();
    }
  });

  it('sends the signed body with a field added to its data, under the signature of the body as it was', async () => {
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      await inProcessCli(recordedTiming())(['send', url, '--secret', SECRET, '--tamper']);
      const [request] = received;
      const { data, ...envelope } = JSON.parse(request!.body.toString()) as { data: { tampered?: unknown } };
      const { tampered, ...signedData } = data;
      expect(tampered).toBe(true);
      const id = String(request!.headers['webhook-id']);
      const timestamp = String(request!.headers['webhook-timestamp']);
      expect(v1Entries(request!.headers['webhook-signature'])).toEqual([hmac(SECRET, id, timestamp, JSON.stringify({ ...envelope, data: signedData }))]);
      expect(v1Entries(request!.headers['webhook-signature'])).not.toContain(hmac(SECRET, id, timestamp, request!.body));
    });
  });

  it.each([
    [{ status: 204 }, '204'],
    [{ status: 503, code: 'store_unavailable' }, '503 store_unavailable'],
  ])('exits 1 when the receiver answers %j rather than a 4xx', async (answer, got) => {
    await withRecordingReceiver([answer], async ({ url }) => {
      const run = await inProcessCli(recordedTiming())(['send', url, '--secret', SECRET, '--tamper']);
      expect(run.stderr).toMatch(new RegExp(`^svc-webhooks send: not refused: the body changed after signing got ${got} \\(\\d+ ms\\), where a receiver that checks signatures answers a 4xx\n$`));
      expect(run.code).toBe(1);
    });
  });

  it('counts the copies that were not refused, and those accepted', async () => {
    await withRecordingReceiver([{ status: 400, code: 'invalid_signature' }, { status: 204 }, { status: 500 }], async ({ url }) => {
      const run = await inProcessCli(recordedTiming())(['send', url, '--secret', SECRET, '--tamper', '--copies', '3']);
      expect(run.stderr).toBe('svc-webhooks send: not refused: the body changed after signing got no 4xx for 2 of 3 copies (1 accepted), where a receiver that checks signatures answers a 4xx\n');
      expect(run.code).toBe(1);
    });
  });
});

describe("send's default timing", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reports a refusal with its status and time as soon as it comes, never as a timeout', async () => {
    // Timers that never run: the command ends without the answer window closing.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    await withRecordingReceiver([{ status: 422, code: 'invalid_event_data' }], async ({ url }) => {
      const run = await inProcessCli()(['send', url, '--secret', SECRET]);
      expect(attemptLines(run)).toEqual([expect.stringMatching(/^attempt 1: 422 invalid_event_data \(\d+ ms\)$/)]);
      expect(run.stderr).toMatch(/^svc-webhooks send: not delivered in 1 attempt\(s\): the last got 422 invalid_event_data \(\d+ ms\)\n$/);
      expect(run.code).toBe(1);
    });
  });

  it('gives up on an attempt after 10 s, the spec answer window', async () => {
    expect(SERVICE_TIMING.answerWindowMs).toBe(10_000);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    await withRecordingReceiver([null], async ({ url, untilReceived }) => {
      const running = inProcessCli()(['send', url, '--secret', SECRET]);
      await untilReceived(1);
      await vi.advanceTimersByTimeAsync(10_000);
      const run = await running;
      expect(attemptLines(run)).toEqual([expect.stringMatching(/^attempt 1: no answer within 10 s \(\d+ ms\)$/)]);
      expect(run.stderr).toMatch(/^svc-webhooks send: not delivered in 1 attempt\(s\): the last got no answer within 10 s \(\d+ ms\)\n$/);
      expect(run.code).toBe(1);
    });
  });
});

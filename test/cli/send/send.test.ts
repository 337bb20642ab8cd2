/**
 * `svc-webhooks send` run in this process against receivers that record what
 * they got: the scenarios the packed bin is held to, then the options, the
 * retries and the answer window, with pauses recorded instead of waited out;
 * and its help.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sendCommand } from '../../../src/cli/send/send.js';
import { SERVICE_TIMING } from '../../../src/testing/delivery.js';
import {
  attemptLines,
  expectDeliveryHelp,
  expectSignedBy,
  expectUnansweredSendFails,
  SECRET,
  SEND_SCENARIOS,
  withRecordingReceiver,
} from '../delivery-scenarios.js';
import { inProcessCli, recordedTiming } from '../in-process-cli.js';
import { verifyWebhook } from '../../../adapters/fetch.js';
import { serveFetch } from '../../helpers/adapter-servers.js';

const envelopeOf = (body: Buffer): { id: string; type: string; timestamp: string; data: unknown } => JSON.parse(body.toString());

describe('the help of send', () => {
  it('describes each option, the 10 s window and the exit statuses', () =>
    expectDeliveryHelp(sendCommand, ['--secret S', '--type T', '--data D', '--id ID', '--retries N']));
});

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
      expect(run.stderr).toBe('svc-webhooks send: not delivered: no 2xx within 10 s in 7 attempt(s)\n');
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
  ])('refuses %j with exit 2 before sending anything', async (args, message) => {
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      const run = await inProcessCli()(['send', url, '--secret', SECRET, ...args]);
      expect(run.stderr).toBe(`svc-webhooks send: ${message}\nRun "svc-webhooks send --help" for usage.\n`);
      expect([run.code, run.stdout, received.length]).toEqual([2, '', 0]);
    });
  });
});

describe("send's default timing", () => {
  afterEach(() => {
    vi.useRealTimers();
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
      expect(run.stderr).toContain('no 2xx within 10 s in 1 attempt(s)');
      expect(run.code).toBe(1);
    });
  });
});

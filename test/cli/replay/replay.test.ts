/** `svc-webhooks replay` on a file `svc-webhooks dev --save` wrote, against a receiver built with svc-webhooks. */
import { Buffer } from 'node:buffer';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { testEvent } from '../../../src/testing/index.js';
import { typesFolder } from '../../helpers/contract-types.js';
import { RELAY_SECRET, startRelayRig, type RelayRig } from '../../helpers/dev-relay.js';
import { withRecordingReceiver } from '../delivery-scenarios.js';
import { inProcessCli } from '../in-process-cli.js';

let rig: RelayRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** A saved file of two deliveries through a relay, the first signed `firstAgeMs` ago. */
async function savedFile(firstAgeMs = 0): Promise<string> {
  const save = join(await typesFolder(), 'deliveries.jsonl');
  rig = await startRelayRig({ save });
  await rig.deliver(testEvent('call.missed'), new Date(Date.now() - firstAgeMs));
  await rig.deliver(testEvent('message.received'));
  return save;
}

const replay = (...args: string[]) => inProcessCli()(['replay', ...args]);

/** The line a replay ends with. */
const summary = (sent: number, got2xx: number, failed: number, skipped: number): string =>
  `summary: ${sent} sent, ${got2xx} got a 2xx, ${failed} failed, ${skipped} line(s) skipped\n`;

/** A file of `text`, written by hand. */
async function handWritten(text: string): Promise<string> {
  const file = join(await typesFolder(), 'hand.jsonl');
  await writeFile(file, text);
  return file;
}

/** A line as `dev --save` writes it, with the fields of a record the replay reads. */
const line = (record: { n?: number; headers: Record<string, unknown>; body: string }): string =>
  JSON.stringify({ ...(record.n !== undefined && { n: record.n }), request: { headers: record.headers, bodyBase64: Buffer.from(record.body).toString('base64') } });

describe('svc-webhooks replay', () => {
  it('sends the exact bytes again: a receiver that deduplicates answers each as a duplicate', async () => {
    const file = await savedFile();
    const run = await replay(file, '--to', `${rig!.receiver.url}/webhooks`);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^#1 evt_\w+ -> 200 \(\d+ ms\), receiver: duplicate; key-id=0\n#2 evt_\w+ -> 200 .*duplicate/);
    expect(rig!.handled).toHaveLength(2);
  });

  it('re-signs, or gives each a new id so that the handlers run again', async () => {
    const file = await savedFile();
    const to = `${rig!.receiver.url}/webhooks`;
    expect((await replay(file, '--to', to, '--mode', 'resign', '--secret', RELAY_SECRET)).stdout).toMatch(/receiver: duplicate.*\n.*receiver: duplicate/);
    const renamed = await replay(file, '--to', to, '--mode', 'new-id', '--secret', RELAY_SECRET);
    expect(renamed.code).toBe(0);
    expect(renamed.stdout).toMatch(/^#1 msg_\w+ -> 204 .*processed.*\n#2 msg_\w+ -> 204 .*processed/);
    expect(rig!.handled).toHaveLength(4);
  });

  it('does not send exact bytes past the 5 minutes a receiver allows, and says to re-sign them, exit 1', async () => {
    const file = await savedFile(6 * 60_000);
    const run = await replay(file, '--to', `${rig!.receiver.url}/webhooks`);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^#1: signed 3\d\d s ago, past the 300 s a receiver allows: replay it with --mode resign or --mode new-id\n$/);
    expect(run.stdout).toMatch(/^#2 /);
  });

  it.each([
    ['a line that is not JSON', 'not json', 'line 2 is not JSON: skipped'],
    ['a line without a request', '{"n":1}', 'line 2 holds no recorded request: skipped'],
    ['headers that are no object', '{"request":{"headers":null,"bodyBase64":""}}', 'line 2 holds no recorded request: skipped'],
    ['a body that is no string', '{"request":{"headers":{},"bodyBase64":1}}', 'line 2 holds no recorded request: skipped'],
    ['headers that are a string', '{"request":{"headers":"x-a: 1","bodyBase64":""}}', 'line 2 holds no recorded request: skipped'],
    ['a line over 8 MiB', `{"n":1,"request":{"headers":{},"bodyBase64":""}}${' '.repeat(8 * 1024 * 1024)}`, 'line 2 is over 8 MiB: skipped'],
  ])('names and skips %s, sends the lines around it, exit 1', async (_name, bad, message) => {
    await withRecordingReceiver([{ status: 204 }, { status: 204 }], async ({ url, received }) => {
      const file = await handWritten(`${line({ n: 1, headers: {}, body: 'a' })}\n${bad}\n${line({ n: 3, headers: {}, body: 'b' })}\n`);
      const run = await replay(file, '--to', url);
      expect(run).toMatchObject({ code: 1, stderr: `${message}\n` });
      expect(run.stdout).toMatch(/^#1 .* -> 204 .*\n#3 .* -> 204 /);
      expect(received.map(({ body }) => String(body))).toEqual(['a', 'b']);
    });
  });

  it('counts blank lines in the number it names', async () => {
    const run = await replay(await handWritten('\n  \nnot json\n'), '--to', 'http://127.0.0.1:9/webhooks');
    expect(run).toMatchObject({ code: 1, stdout: summary(0, 0, 0, 1), stderr: 'line 3 is not JSON: skipped\n' });
  });

  it('sends a line of 8 MiB, the most a line may hold', async () => {
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      const record = line({ n: 1, headers: {}, body: 'a' });
      const run = await replay(await handWritten(`${record.padEnd(8 * 1024 * 1024)}\n`), '--to', url);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(received).toHaveLength(1);
    });
  });

  it('sends the record of a 4 MiB body, the most the relay takes, whose line is over 5 MiB in base64', async () => {
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      const body = 'x'.repeat(4 * 1024 * 1024);
      const record = line({ n: 1, headers: {}, body });
      expect(record.length).toBeGreaterThan(5 * 1024 * 1024);
      const run = await replay(await handWritten(`${record}\n`), '--to', url);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(received.map(({ body: sent }) => sent.length)).toEqual([4 * 1024 * 1024]);
    });
  });

  it('skips a line the relay was killed while appending, and sends those it appended after a restart, exit 1', async () => {
    await withRecordingReceiver([{ status: 204 }, { status: 204 }], async ({ url, received }) => {
      // The first line after the restart is appended to the cut one; the last append was cut too.
      const cut = line({ n: 2, headers: {}, body: 'cut' }).slice(0, 30);
      const file = await handWritten(`${line({ n: 1, headers: {}, body: 'a' })}\n${cut}${line({ n: 1, headers: {}, body: 'b' })}\n${line({ n: 2, headers: {}, body: 'c' })}\n${cut}`);
      const run = await replay(file, '--to', url);
      expect(run).toMatchObject({ code: 1, stderr: 'line 2 is not JSON: skipped\nline 4 is not JSON: skipped\n' });
      expect(received.map(({ body }) => String(body))).toEqual(['a', 'c']);
    });
  });

  it('ends at once on a line that never ends, naming the bound, exit 1', async () => {
    const run = await replay('/dev/zero', '--to', 'http://127.0.0.1:9/webhooks');
    expect(run).toMatchObject({ code: 1, stdout: summary(0, 0, 0, 1), stderr: 'line 1 is over 8 MiB and has no end within 16 MiB: the rest is not read\n' });
  });

  it('refuses a file it cannot read, and a mode it does not know', async () => {
    expect((await replay('/nonexistent/deliveries.jsonl', '--to', 'http://127.0.0.1:9/')).stderr).toContain('cannot read /nonexistent/deliveries.jsonl (ENOENT)');
    expect((await replay('x.jsonl', '--to', 'http://127.0.0.1:9/', '--mode', 'fresh')).stderr).toContain('--mode must be one of exact, resign, new-id');
  });

  it('re-signs a delivery past the 5 minutes without a word: only exact bytes grow too old', async () => {
    const file = await savedFile(6 * 60_000);
    const run = await replay(file, '--to', `${rig!.receiver.url}/webhooks`, '--mode', 'resign', '--secret', RELAY_SECRET);
    expect(run).toMatchObject({ code: 0, stderr: '' });
  });

  it('sends the string headers of a line as they are, names a record without a number by its line, and exits 1 on a refusal', async () => {
    await withRecordingReceiver([{ status: 204 }, { status: 400, code: 'invalid_signature' }], async ({ url, received }) => {
      // A timestamp that is no number says nothing of the age: the bytes are sent.
      const file = await handWritten(
        `\n${line({ headers: { 'x-a': '1', 'x-n': 5, host: 'tunnel.example' }, body: '{}' })}\n\n${line({ n: 7, headers: { 'webhook-id': 'msg_1', 'webhook-timestamp': 'soon' }, body: 'x' })}\n`,
      );
      const run = await replay(file, '--to', url);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/^line 2 \(no webhook-id\) -> 204 \(\d+ ms\)\n#7 msg_1 -> 400 invalid_signature \(\d+ ms\)\nsummary: 2 sent, 1 got a 2xx, 1 failed, 0 line\(s\) skipped\n$/);
      expect(received.map(({ headers, body }) => [headers['x-a'], headers['x-n'], headers.host, String(body)])).toEqual([
        ['1', undefined, new URL(url).host, '{}'],
        [undefined, undefined, new URL(url).host, 'x'],
      ]);
    });
  });

  it('says a file without deliveries holds none, exit 1', async () => {
    const file = await handWritten('\n\n');
    expect(await replay(file, '--to', 'http://127.0.0.1:9/webhooks')).toMatchObject({ code: 1, stdout: summary(0, 0, 0, 0), stderr: `${file} holds no delivery\n` });
  });

  it.each([
    ['resign', { 'webhook-timestamp': '1' }, '{}', 'resign needs the recorded webhook-id, and this delivery has none'],
    ['resign', { 'webhook-id': '' }, '{}', 'resign needs the recorded webhook-id, and this delivery has none'],
    ['new-id', { 'webhook-id': 'msg_1' }, '[1]', 'new-id needs a body that is a JSON object, to give it a new id'],
    ['new-id', { 'webhook-id': 'msg_1' }, 'null', 'new-id needs a body that is a JSON object, to give it a new id'],
    ['new-id', { 'webhook-id': 'msg_1' }, 'not json', 'new-id needs a body that is a JSON object, to give it a new id'],
  ])('does not %s a delivery of headers %j and body %s, says why, and sends the next, exit 1', async (mode, headers, body, message) => {
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      const good = line({ n: 2, headers: { 'webhook-id': 'msg_2' }, body: '{"id":"msg_2"}' });
      const file = await handWritten(`${line({ n: 1, headers, body })}\n${good}\n`);
      const run = await replay(file, '--to', url, '--mode', mode, '--secret', RELAY_SECRET);
      expect(run).toMatchObject({ code: 1, stderr: `#1: ${message}\n` });
      expect(run.stdout).toMatch(/^#2 msg_\w+ -> 204 /);
      expect(received).toHaveLength(1);
    });
  });

  it('reads header names in any case, as a request carries them', async () => {
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      const file = await handWritten(`${line({ n: 1, headers: { 'Webhook-Id': 'msg_1', 'WEBHOOK-TIMESTAMP': '1' }, body: '{"id":"msg_1"}' })}\n`);
      const run = await replay(file, '--to', url, '--mode', 'new-id', '--secret', RELAY_SECRET);
      expect(run.code).toBe(0);
      // The recorded id is replaced, not sent beside the new one.
      expect(received[0]!.headers['webhook-id']).toMatch(/^msg_\w+$/);
      expect(received[0]!.headers['webhook-id']).not.toBe('msg_1');
      // And a recorded timestamp in another case is still one: exact bytes that old are not sent.
      const exact = await replay(file, '--to', url);
      expect(exact).toMatchObject({ code: 1, stdout: summary(0, 0, 1, 0) });
      expect(exact.stderr).toMatch(/^#1: signed \d+ s ago/);
    });
  });

  it('names what its command line lacks, exit 2', async () => {
    expect(await replay('--to', 'http://127.0.0.1:9/')).toMatchObject({ code: 2, stderr: expect.stringContaining('<deliveries.jsonl> is missing') });
    expect(await replay('x.jsonl')).toMatchObject({ code: 2, stderr: expect.stringContaining('--to is required') });
  });

  it('joins the values of a header a line names twice, in two letter cases', async () => {
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      const file = await handWritten(`${line({ headers: { 'X-Tag': 'a', 'x-tag': 'b' }, body: '{}' })}\n`);
      expect((await replay(file, '--to', url)).code).toBe(0);
      expect(received[0]!.headers['x-tag']).toBe('a, b');
    });
  });

  it('sends exact bytes signed 300 s ago, the most a receiver allows, and holds back those of 301 s', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_795_000_000_000);
    try {
      await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
        const signedAgo = (seconds: number): string => line({ headers: { 'webhook-id': 'msg_1', 'webhook-timestamp': String(1_795_000_000 - seconds) }, body: '{}' });
        const run = await replay(await handWritten(`${signedAgo(300)}\n${signedAgo(301)}\n`), '--to', url);
        expect(run.stderr).toBe('line 2: signed 301 s ago, past the 300 s a receiver allows: replay it with --mode resign or --mode new-id\n');
        expect(received).toHaveLength(1);
        expect(run.code).toBe(1);
      });
    } finally {
      vi.useRealTimers();
    }
  });

  it('sends the bytes of a timestamp that is no plain number as they are: the receiver judges it', async () => {
    await withRecordingReceiver([{ status: 400, code: 'invalid_timestamp' }], async ({ url, received }) => {
      const stamped = (timestamp: string): string => line({ headers: { 'webhook-id': 'msg_1', 'webhook-timestamp': timestamp }, body: '{}' });
      const run = await replay(await handWritten(`${stamped(' 1')}\n${stamped('1 ')}\n`), '--to', url);
      expect(received.map(({ headers }) => headers['webhook-timestamp'])).toEqual(['1', '1']);
      expect(run).toMatchObject({ code: 1, stderr: '' });
    });
  });

  it('counts each failure apart: a refusal beside a delivery too old, or beside one it cannot re-sign, exits 1', async () => {
    await withRecordingReceiver([{ status: 400, code: 'invalid_signature' }], async ({ url }) => {
      const refused = line({ headers: { 'webhook-id': 'msg_2' }, body: '{}' });
      const tooOld = line({ headers: { 'webhook-id': 'msg_1', 'webhook-timestamp': '1' }, body: '{}' });
      expect((await replay(await handWritten(`${tooOld}\n${refused}\n`), '--to', url)).code).toBe(1);
      const idless = line({ headers: {}, body: '{}' });
      expect((await replay(await handWritten(`${idless}\n${refused}\n`), '--to', url, '--mode', 'resign', '--secret', RELAY_SECRET)).code).toBe(1);
    });
  });

  it('ends with a summary: sent, answered with a 2xx, failed, and lines skipped', async () => {
    await withRecordingReceiver([{ status: 204 }, { status: 500 }, { status: 204 }], async ({ url }) => {
      const tooOld = line({ n: 4, headers: { 'webhook-id': 'msg_4', 'webhook-timestamp': '1' }, body: '{}' });
      const file = await handWritten(
        [line({ n: 1, headers: {}, body: 'a' }), 'not json', line({ n: 2, headers: {}, body: 'b' }), '{"n":3}', tooOld, line({ n: 5, headers: {}, body: 'c' }), ''].join('\n'),
      );
      const run = await replay(file, '--to', url);
      expect(run.stdout.split('\n').slice(0, 3)).toEqual([
        expect.stringMatching(/^#1 .* -> 204 /),
        expect.stringMatching(/^#2 .* -> 500 /),
        expect.stringMatching(/^#5 .* -> 204 /),
      ]);
      // #2 refused and #4 too old to send exactly: two failed of four deliveries, three sent; two lines held none.
      expect(run.stdout.split('\n').slice(3).join('\n')).toBe(summary(3, 2, 2, 2));
      expect(run.code).toBe(1);
    });
  });

  it('ends with a summary of no failure when every delivery got a 2xx, exit 0', async () => {
    const file = await savedFile();
    const run = await replay(file, '--to', `${rig!.receiver.url}/webhooks`);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^#1 .*\n#2 .*\n/);
    expect(run.stdout.split('\n').slice(2).join('\n')).toBe(summary(2, 2, 0, 0));
  });
});

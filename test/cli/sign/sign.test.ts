/**
 * `svc-webhooks sign` in-process: its header lines and curl arguments (run by
 * a shell and curl against a receiver), each option, and signatures checked
 * against an HMAC from node:crypto alone.
 */
import { Buffer } from 'node:buffer';
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CLI_FIXTURES_DIR } from '../../../fixtures/cli/cases.js';
import { runCli } from '../../../src/cli/run.js';
import { typesFolder } from '../../helpers/contract-types.js';
import { expectSignedBy, withRecordingReceiver } from '../delivery-scenarios.js';

const KEY = Buffer.from('sign-test-key-0123456789abcdefgh');
const SECRET = `whsec_${KEY.toString('base64')}`;
const LEGACY_SECRET = 'a-legacy-secret-used-as-its-bytes';
const BODY = '{"id":"msg_sign","type":"webhook.test","data":{"object":{"id":"we_1"}}}';
const STAMP = '1795000000';

const mac = (key: Buffer | string, id: string, timestamp: string, body: Buffer | string): string =>
  `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64')}`;

async function sign(args: readonly string[], stdin = BODY): Promise<{ status: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const status = await runCli(['sign', ...args], { out: (line) => out.push(line), err: (line) => err.push(line), stdin: async () => Buffer.from(stdin) });
  return { status, out, err };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('sign prints', () => {
  it('the three headers as "name: value" lines, reading the body from standard input by default', async () => {
    expect(await sign(['--secret', SECRET, '--id', 'msg_sign', '--timestamp', STAMP])).toEqual({
      status: 0,
      out: ['webhook-id: msg_sign', `webhook-timestamp: ${STAMP}`, `webhook-signature: ${mac(KEY, 'msg_sign', STAMP, BODY)}`],
      err: [],
    });
  });

  it('the signature of a body given as text, as a file, or from standard input with -', async () => {
    const file = fileURLToPath(new URL('valid/body.json', CLI_FIXTURES_DIR));
    for (const [body, signedBytes] of [[BODY, BODY], [`@${file}`, readFileSync(file)], ['-', 'piped body']] as const) {
      const { out } = await sign(['--secret', SECRET, '--id', 'msg_sign', '--timestamp', STAMP, '--body', body], 'piped body');
      expect(out[2]).toBe(`webhook-signature: ${mac(KEY, 'msg_sign', STAMP, signedBytes)}`);
    }
  });

  it('one v1 entry per secret, in the order given, a legacy secret used as its bytes', async () => {
    const { out } = await sign(['--secret', SECRET, '--secret', LEGACY_SECRET, '--id', 'msg_sign', '--timestamp', '0']);
    expect(out[2]).toBe(`webhook-signature: ${mac(KEY, 'msg_sign', '0', BODY)} ${mac(LEGACY_SECRET, 'msg_sign', '0', BODY)}`);
  });

  it('the time now, in whole seconds, when --timestamp is not given', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Number(STAMP) * 1000 + 999);
    const { out } = await sign(['--secret', SECRET, '--id', 'msg_sign']);
    expect(out.slice(1)).toEqual([`webhook-timestamp: ${STAMP}`, `webhook-signature: ${mac(KEY, 'msg_sign', STAMP, BODY)}`]);
  });

  it('with --curl, -H arguments on one line, the JSON content type first, quoted for a POSIX shell', async () => {
    const id = "msg_it's";
    const { status, out } = await sign(['--secret', SECRET, '--id', id, '--timestamp', STAMP, '--curl']);
    expect([status, out]).toEqual([
      0,
      [`-H 'content-type: application/json' -H 'webhook-id: msg_it'\\''s' -H 'webhook-timestamp: ${STAMP}' -H 'webhook-signature: ${mac(KEY, id, STAMP, BODY)}'`],
    ]);
  });

  it("with --curl, what the help's curl line sends: the body as JSON, signed", async () => {
    const file = join(await typesFolder(), 'event.json');
    await writeFile(file, BODY);
    const now = String(Math.floor(Date.now() / 1000));
    const { out } = await sign(['--secret', SECRET, '--id', "msg_it's", '--timestamp', now, '--body', `@${file}`, '--curl']);
    const printed = `${file}.curl`;
    await writeFile(printed, `${out[0]}\n`);
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      // As the help says: eval "curl -X POST URL --data-binary @event.json $(svc-webhooks sign … --curl)".
      await promisify(execFile)('sh', ['-c', `eval "curl -sS -X POST ${url} --data-binary @${file} $(cat ${printed})"`]);
      expect(received).toHaveLength(1);
      expect(received[0]!.headers['content-type']).toBe('application/json');
      expect(received[0]!.headers['webhook-id']).toBe("msg_it's");
      expect(received[0]!.body.toString()).toBe(BODY);
      expectSignedBy(received[0]!, SECRET);
    });
  });
});

describe('sign refuses', () => {
  it.each([
    [['--id', 'msg_sign'], '--secret is required (or set WEBHOOK_SECRET)'],
    [['--secret', SECRET], '--id is required'],
    [['--secret', SECRET, '--id', 'msg_sign', '--timestamp', 'now'], '--timestamp must be a whole number of at least 0'],
    [['--secret', SECRET, '--id', 'msg_sign', '--body', '@/nonexistent/body.json'], '--body: cannot read /nonexistent/body.json (ENOENT)'],
    [['--secret', SECRET, '--id', ''], 'id must be a non-empty string'],
    [['--secret', SECRET, '--id', 'msg_sign', 'svc-webhooks:', 'extra'], '2 unexpected arguments where this command takes none (not shown, in case one is a secret: give a secret with --secret or WEBHOOK_SECRET)'],
  ])('%j', async (args, message) => {
    expect(await sign(args)).toEqual({ status: 2, out: [], err: [`svc-webhooks sign: ${message}`, 'Run "svc-webhooks sign --help" for usage.'] });
  });
});

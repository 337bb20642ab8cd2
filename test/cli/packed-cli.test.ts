/**
 * The bin from the packed tarball, run in a project that installed it (the
 * examples' checks and the help through `npx svc-webhooks`, the rest through
 * the bin npm linked, which npx would run): check grades the example receivers and receivers written
 * without this library; send and sign agree with an HMAC computed here with
 * node:crypto alone; verify names the cause of each fixtures/cli request.
 * Tests run concurrently: the slow ones wait out the 10 s answer window.
 */
import { Buffer } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CLI_FIXTURES_DIR, type CliCase } from '../../fixtures/cli/cases.js';
import { closeServer, listen } from '../helpers/http-harness.js';
import { EXAMPLES, startExample } from './example-receivers.js';
import { startHandWrittenReceiver, type Faults } from './hand-written-receivers.js';
import { installPackedCli, type CliRun, type PackedCli } from './packed-cli.js';

const SECRET = `whsec_${Buffer.from('packed-cli-test-secret-012345678').toString('base64')}`;
const OLD_SECRET = `whsec_${Buffer.from('packed-cli-test-secret-rotated-0').toString('base64')}`;

// Most tests wait on a subprocess or a receiver's clock, not the CPU: let them all run at once.
vi.setConfig({ maxConcurrency: 10 });

let cli: PackedCli;
const scratch = mkdtempSync(join(tmpdir(), 'svc-webhooks-cli-test-'));
beforeAll(async () => {
  cli = await installPackedCli();
}, 240_000);
afterAll(() => {
  cli?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

/** The HMAC of the spec, from node:crypto alone. */
function hmac(secret: string, id: string, timestamp: string, body: Buffer | string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
}

function v1Entries(header: string | string[] | undefined): string[] {
  return String(header).split(' ').map((entry) => entry.replace(/^v1,/, ''));
}

interface CheckReport {
  readonly passed: boolean;
  readonly checks: readonly { readonly id: string; readonly check: string; readonly passed: boolean; readonly detail: string }[];
}

const REFUSAL_CHECKS = [
  'tampered_body',
  'wrong_secret',
  'missing_webhook_id',
  'missing_webhook_timestamp',
  'missing_webhook_signature',
  'timestamp_too_old',
  'timestamp_too_new',
];
const ACCEPTANCE_CHECKS = ['valid_event', 'rotated_signatures', 'unknown_type', 'redelivery', 'concurrent_copies'];

async function checkJson(url: string, through: 'bin' | 'npx' = 'bin'): Promise<{ run: CliRun; report: CheckReport; failing: string[] }> {
  const run = await (through === 'npx' ? cli.npx : cli.run)(['check', url, '--secret', SECRET, '--json']);
  const report = JSON.parse(run.stdout) as CheckReport;
  return { run, report, failing: report.checks.filter((check) => !check.passed).map((check) => check.id) };
}

async function checkHandWritten(faults: Faults): Promise<Awaited<ReturnType<typeof checkJson>>> {
  const receiver = await startHandWrittenReceiver(SECRET, faults);
  try {
    return await checkJson(receiver.url);
  } finally {
    await receiver.close();
  }
}

describe.concurrent('svc-webhooks check', () => {
  it('flags a receiver that answers after 12 s: no 2xx within 10 s, while its refusals pass', async () => {
    const { run, report, failing } = await checkHandWritten({ answersAfterMs: 12_000 });
    expect(run.code).toBe(1);
    expect(failing).toEqual(ACCEPTANCE_CHECKS);
    for (const check of report.checks.filter((one) => !one.passed)) expect(check.detail).toContain('no answer within 10 s');
  }, 60_000);

  it.each(EXAMPLES)('passes the receiver of examples/%s.ts', async (name) => {
    const example = await startExample(name, SECRET);
    try {
      const { run, report, failing } = await checkJson(example.url, 'npx');
      expect(failing).toEqual([]);
      expect(report.checks.map((check) => check.id)).toEqual(['valid_event', ...REFUSAL_CHECKS, ...ACCEPTANCE_CHECKS.slice(1)]);
      expect(run.code).toBe(0);
    } finally {
      await example.stop();
    }
  }, 60_000);

  it('passes a receiver written by hand without the faults below', async () => {
    const { run, failing } = await checkHandWritten({});
    expect(failing).toEqual([]);
    expect(run.code).toBe(0);
  }, 30_000);

  it('flags a receiver that accepts everything on each refusal check', async () => {
    const { run, report, failing } = await checkHandWritten({ acceptsEverything: true });
    expect(failing).toEqual(REFUSAL_CHECKS);
    expect(report.checks.find((check) => check.id === 'tampered_body')?.detail).toMatch(/^accepted: 204/);
    expect(run.code).toBe(1);
  }, 30_000);

  it('flags a receiver that ignores the timestamp on the two timestamp checks', async () => {
    const { run, failing } = await checkHandWritten({ ignoresTimestamp: true });
    expect(failing).toEqual(['timestamp_too_old', 'timestamp_too_new']);
    expect(run.code).toBe(1);
  }, 30_000);

  it('flags a receiver that answers 500 to unknown types on the unknown-type check', async () => {
    const { run, report, failing } = await checkHandWritten({ failsUnknownTypes: true });
    expect(failing).toEqual(['unknown_type']);
    expect(report.checks.find((check) => check.id === 'unknown_type')?.detail).toMatch(/^refused: 500 unknown_type/);
    expect(run.code).toBe(1);
  }, 30_000);

  it('prints a table in plain words, one row per check, and exits 1 when one fails', async () => {
    const receiver = await startHandWrittenReceiver(SECRET, { ignoresTimestamp: true });
    try {
      const run = await cli.run(['check', receiver.url, '--secret', SECRET]);
      const lines = run.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^result\s+check\s+what happened$/);
      expect(lines.slice(1, 13).filter((line) => line.startsWith('FAIL'))).toEqual([
        expect.stringMatching(/^FAIL\s+An event signed 6 minutes ago is refused\s+accepted: 204/),
        expect.stringMatching(/^FAIL\s+An event signed 6 minutes in the future is refused\s+accepted: 204/),
      ]);
      expect(lines.at(-1)).toBe(`${receiver.url}: 2 of 12 checks failed`);
      expect(run.code).toBe(1);
    } finally {
      await receiver.close();
    }
  }, 30_000);
});

interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** A receiver that records each request and answers the next of `answers` (the last one repeats); `null` never answers. */
async function recordingReceiver(answers: readonly ({ status: number; code?: string } | null)[]) {
  const received: Received[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({ headers: req.headers, body: Buffer.concat(chunks) });
    const answer = answers[Math.min(received.length, answers.length) - 1];
    if (answer === null || answer === undefined) return;
    const body = answer.code === undefined ? '' : JSON.stringify({ error: { code: answer.code, message: 'refused' } });
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(body);
  });
  const url = `${await listen(server)}/webhooks`;
  return { url, received, close: () => closeServer(server) };
}

/** Runs `test` against a recording receiver, closed afterwards. */
async function withRecordingReceiver(
  answers: Parameters<typeof recordingReceiver>[0],
  test: (receiver: Awaited<ReturnType<typeof recordingReceiver>>) => Promise<void>,
): Promise<void> {
  const receiver = await recordingReceiver(answers);
  try {
    await test(receiver);
  } finally {
    await receiver.close();
  }
}

/** Checks a request with node:crypto alone: any v1 entry matching `secret`. */
function expectSignedBy(request: Received, secret: string): void {
  const id = String(request.headers['webhook-id']);
  const timestamp = String(request.headers['webhook-timestamp']);
  expect(v1Entries(request.headers['webhook-signature'])).toContain(hmac(secret, id, timestamp, request.body));
}

describe.concurrent('svc-webhooks send', () => {
  it('counts an attempt unanswered after 10 s as failed', async () => {
    await withRecordingReceiver([null], async ({ url }) => {
      const run = await cli.run(['send', url, '--secret', SECRET]);
      expect(run.stdout).toMatch(/^attempt 1: no answer within 10 s \(\d+ ms\)$/m);
      expect(run.code).toBe(1);
    });
  }, 30_000);

  it('delivers an event that an independent HMAC accepts, its envelope id equal to webhook-id', async () => {
    const dataFile = join(scratch, 'data.json');
    writeFileSync(dataFile, JSON.stringify({ object: { id: 'call_01JD2W5E3G8Q7ZC1XK9M4T6V0B' }, direction: 'inbound' }));
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      const run = await cli.run(['send', url, '--secret', SECRET, '--type', 'call.missed', '--data', `@${dataFile}`, '--id', 'msg_send_1']);
      expect(run.code).toBe(0);
      expect(received).toHaveLength(1);
      const [request] = received;
      expect(request!.headers['webhook-id']).toBe('msg_send_1');
      expect(request!.headers['content-type']).toBe('application/json');
      expect(Math.abs(Number(request!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      expectSignedBy(request!, SECRET);
      const envelope = JSON.parse(request!.body.toString()) as Record<string, unknown>;
      expect(envelope).toMatchObject({ id: 'msg_send_1', type: 'call.missed', data: { object: { id: 'call_01JD2W5E3G8Q7ZC1XK9M4T6V0B' }, direction: 'inbound' } });
      expect(run.stdout).toMatch(/^attempt 1: 204 \(\d+ ms\)$/m);
    });
  }, 30_000);

  it('by default sends webhook.test under a new msg_ id, signed with each secret given', async () => {
    await withRecordingReceiver([{ status: 200 }], async ({ url, received }) => {
      const run = await cli.run(['send', url, '--secret', OLD_SECRET, '--secret', SECRET]);
      expect(run.code).toBe(0);
      const [request] = received;
      const envelope = JSON.parse(request!.body.toString()) as { id: string; type: string; data: { object: { id: unknown } } };
      expect(envelope.id).toMatch(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(request!.headers['webhook-id']).toBe(envelope.id);
      expect(envelope.type).toBe('webhook.test');
      expect(typeof envelope.data.object.id).toBe('string');
      expect(v1Entries(request!.headers['webhook-signature'])).toHaveLength(2);
      expectSignedBy(request!, OLD_SECRET);
      expectSignedBy(request!, SECRET);
    });
  }, 30_000);

  it('retries a failed attempt with backoff under the same webhook-id, one line per attempt', async () => {
    const answers = [{ status: 503, code: 'dedup_unavailable' }, { status: 409, code: 'delivery_in_progress' }, { status: 204 }];
    await withRecordingReceiver(answers, async ({ url, received }) => {
      const run = await cli.run(['send', url, '--secret', SECRET, '--retries', '5']);
      expect(run.code).toBe(0);
      expect(run.stdout.split('\n').filter((line) => line.startsWith('attempt'))).toEqual([
        expect.stringMatching(/^attempt 1: 503 dedup_unavailable \(\d+ ms\), retrying in 1 s$/),
        expect.stringMatching(/^attempt 2: 409 delivery_in_progress \(\d+ ms\), retrying in 2 s$/),
        expect.stringMatching(/^attempt 3: 204 \(\d+ ms\)$/),
      ]);
      expect(new Set(received.map((request) => request.headers['webhook-id'])).size).toBe(1);
      expect(new Set(received.map((request) => request.body.toString())).size).toBe(1);
      for (const request of received) expectSignedBy(request, SECRET);
    });
  }, 30_000);

  it('exits 1 when the last retry fails too', async () => {
    await withRecordingReceiver([{ status: 400, code: 'invalid_signature' }], async ({ url, received }) => {
      const run = await cli.run(['send', url, '--secret', SECRET, '--retries', '1']);
      expect(received).toHaveLength(2);
      expect(run.stdout).toMatch(/^attempt 2: 400 invalid_signature \(\d+ ms\)$/m);
      expect(run.stderr).toContain('not delivered');
      expect(run.code).toBe(1);
    });
  }, 30_000);

  it('reports a refused connection', async () => {
    let closedUrl = '';
    await withRecordingReceiver([], async ({ url }) => {
      closedUrl = url;
    });
    const run = await cli.run(['send', closedUrl, '--secret', SECRET]);
    expect(run.stdout).toMatch(/^attempt 1: connection failed \(ECONNREFUSED\) \(\d+ ms\)$/m);
    expect(run.code).toBe(1);
  }, 30_000);
});

describe.concurrent('svc-webhooks sign', () => {
  const body = '{"id":"msg_sign_1","type":"webhook.test","data":{"object":{"id":"we_1"}}}';

  it('prints the three headers, with the signature an independent HMAC gives', async () => {
    const file = join(scratch, 'sign-body.json');
    writeFileSync(file, body);
    const run = await cli.run(['sign', '--secret', SECRET, '--id', 'msg_sign_1', '--timestamp', '1795000000', '--body', `@${file}`]);
    expect(run.stdout).toBe(
      `webhook-id: msg_sign_1\nwebhook-timestamp: 1795000000\nwebhook-signature: v1,${hmac(SECRET, 'msg_sign_1', '1795000000', body)}\n`,
    );
    expect(run.code).toBe(0);
  }, 30_000);

  it('reads the body from standard input and signs with each secret', async () => {
    const run = await cli.run(['sign', '--secret', OLD_SECRET, '--secret', SECRET, '--id', 'msg_sign_1', '--timestamp', '1795000000', '--body', '-'], body);
    const expected = [OLD_SECRET, SECRET].map((secret) => `v1,${hmac(secret, 'msg_sign_1', '1795000000', body)}`).join(' ');
    expect(run.stdout).toContain(`webhook-signature: ${expected}\n`);
  }, 30_000);

  it('prints curl -H arguments that a shell reads back as the headers', async () => {
    const id = "msg_it's quoted";
    const run = await cli.run(['sign', '--secret', SECRET, '--id', id, '--timestamp', '1795000000', '--curl'], body);
    expect(run.code).toBe(0);
    const words = execFileSync('sh', ['-c', `printf '%s\\n' ${run.stdout}`], { encoding: 'utf8' }).trimEnd().split('\n');
    expect(words).toEqual([
      '-H',
      `webhook-id: ${id}`,
      '-H',
      'webhook-timestamp: 1795000000',
      '-H',
      `webhook-signature: v1,${hmac(SECRET, id, '1795000000', body)}`,
    ]);
  }, 30_000);

  it("feeds verify: sign's lines are verify's --headers", async () => {
    const now = String(Math.floor(Date.now() / 1000));
    const signed = await cli.run(['sign', '--secret', SECRET, '--id', 'msg_sign_1', '--timestamp', now], body);
    const bodyFile = join(scratch, 'round-trip.json');
    writeFileSync(bodyFile, body);
    const run = await cli.run(['verify', '--secret', SECRET, '--headers', '-', '--body', `@${bodyFile}`], signed.stdout);
    expect(run.stdout).toMatch(/^valid: webhook\.test msg_sign_1$/m);
    expect(run.code).toBe(0);
  }, 30_000);
});

/** What verify must say for each cause of fixtures/cli/cases.json. */
const CAUSE_TEXT: Record<string, RegExp> = {
  valid: /^valid: call\.missed msg_/m,
  'body:compact_json': /^cause: the signature matches the body parsed and printed again as compact JSON.*re-serialized/m,
  'body:pretty_json_2': /^cause: the signature matches the body parsed and printed again as JSON indented with 2 spaces.*re-serialized/m,
  'body:final_newline_removed': /^cause: the signature matches the body without its final newline/m,
  'key:prefix_kept': /^cause: the signature was made with the whole secret, "whsec_" prefix included/m,
  'key:not_base64_decoded': /^cause: the signature was made with the part after "whsec_" used as UTF-8 text, not base64-decoded/m,
  'key:base64_decoded': /^cause: the signature was made with this secret base64-decoded/m,
  clock: /^cause: the signature is valid, but the timestamp is 412 s behind this clock/m,
  milliseconds: /^cause: webhook-timestamp is in milliseconds/m,
  other_secret: /^cause: the request was signed with a different secret/m,
  missing_header: /^cause: the request has no webhook-signature header/m,
};

const cases = JSON.parse(readFileSync(new URL('cases.json', CLI_FIXTURES_DIR), 'utf8')) as CliCase[];

describe.concurrent('svc-webhooks verify', () => {
  const fixture = (path: string): string => `@${new URL(path, CLI_FIXTURES_DIR).pathname}`;

  it.each(cases.map((one) => [one.name, one] as const))('names the cause of fixtures/cli/%s', async (_name, one) => {
    const files = 'request' in one.files ? ['--request', fixture(one.files.request)] : ['--headers', fixture(one.files.headers), '--body', fixture(one.files.body)];
    const run = await cli.run(['verify', ...one.secrets.flatMap((secret) => ['--secret', secret]), '--now', String(one.now), ...files]);
    expect(Object.keys(CAUSE_TEXT)).toContain(one.cause);
    expect(run.stdout).toMatch(CAUSE_TEXT[one.cause]!);
    expect(run.stdout.split('\n')[0]).toMatch(one.verdict === 'valid' ? /^valid: / : new RegExp(`^invalid: ${one.verdict}: `));
    expect(run.code).toBe(one.verdict === 'valid' ? 0 : 1);
  }, 30_000);

  it('covers every cause with a fixture', () => {
    expect(new Set(cases.map((one) => one.cause))).toEqual(new Set(Object.keys(CAUSE_TEXT)));
  });
});

it('npx svc-webhooks prints help for each command and exits 2 on a usage mistake', async () => {
  const runs = await Promise.all([
    cli.npx(['--help']),
    ...['send', 'check', 'sign', 'verify'].map((command) => cli.npx([command, '--help'])),
    cli.npx(['send', '--secret', SECRET]),
  ]);
  expect(runs[0]!.stdout).toMatch(/^Usage: svc-webhooks <command>/);
  for (const [i, command] of ['send', 'check', 'sign', 'verify'].entries()) {
    expect(runs[i + 1]!.stdout).toMatch(new RegExp(`^Usage: svc-webhooks ${command} `));
    expect(runs[i + 1]!.code).toBe(0);
  }
  expect(runs[5]!.stderr).toContain('<url> is missing');
  expect(runs[5]!.code).toBe(2);
}, 30_000);

/**
 * What `send` and `check` must do for a user, written once and run twice: by
 * the packed-tarball suite against the installed bin, and by the in-process
 * suites against the source. Holds receivers that record what they got, the
 * spec's HMAC from node:crypto alone, and the faults `check` must flag.
 */
import { Buffer } from 'node:buffer';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { SERVICE_TIMING } from '../../src/testing/delivery.js';
import { closeServer, listen } from '../helpers/http-harness.js';
import { startExample, type EXAMPLES } from './example-receivers.js';
import { startHandWrittenReceiver, type Faults } from './hand-written-receivers.js';
import type { CliRun } from './packed-cli.js';

export const SECRET = `whsec_${Buffer.from('packed-cli-test-secret-012345678').toString('base64')}`;
export const OLD_SECRET = `whsec_${Buffer.from('packed-cli-test-secret-rotated-0').toString('base64')}`;

/** Runs `svc-webhooks …args` with `input` as standard input. */
export type RunCli = (args: readonly string[], input?: string | Buffer) => Promise<CliRun>;

/** The HMAC of the spec, from node:crypto alone. */
export function hmac(secret: string, id: string, timestamp: string, body: Buffer | string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
}

export function v1Entries(header: string | string[] | undefined): string[] {
  return String(header).split(' ').map((entry) => entry.replace(/^v1,/, ''));
}

export interface Received {
  readonly method: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** An answer a recording receiver gives; `null` never answers. */
export type RecordedAnswer = { readonly status: number; readonly code?: string } | null;

export interface RecordingReceiver {
  readonly url: string;
  readonly received: Received[];
  /** Resolves once `count` requests have arrived. */
  untilReceived(count: number): Promise<void>;
  close(): Promise<void>;
}

/** A receiver that records each request and answers the next of `answers` (the last one repeats). */
export async function recordingReceiver(answers: readonly RecordedAnswer[]): Promise<RecordingReceiver> {
  const received: Received[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({ method: req.method, headers: req.headers, body: Buffer.concat(chunks) });
    for (const waiter of waiters.filter(({ count }) => received.length >= count)) waiter.resolve();
    const answer = answers[Math.min(received.length, answers.length) - 1];
    if (answer === null || answer === undefined) return;
    const body = answer.code === undefined ? '' : JSON.stringify({ error: { code: answer.code, message: 'refused' } });
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(body);
  });
  const url = `${await listen(server)}/webhooks`;
  return {
    url,
    received,
    untilReceived: (count) =>
      received.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve })),
    close: () => closeServer(server),
  };
}

/** Runs `test` against a recording receiver, closed afterwards. */
export async function withRecordingReceiver(
  answers: readonly RecordedAnswer[],
  test: (receiver: RecordingReceiver) => Promise<void>,
): Promise<void> {
  const receiver = await recordingReceiver(answers);
  try {
    await test(receiver);
  } finally {
    await receiver.close();
  }
}

/** Checks a request with node:crypto alone: any v1 entry matching `secret`. */
export function expectSignedBy(request: Received, secret: string): void {
  const id = String(request.headers['webhook-id']);
  const timestamp = String(request.headers['webhook-timestamp']);
  expect(v1Entries(request.headers['webhook-signature'])).toContain(hmac(secret, id, timestamp, request.body));
}

/** The lines of standard output that report an attempt. */
export const attemptLines = (run: CliRun): string[] => run.stdout.split('\n').filter((line) => line.startsWith('attempt'));

/**
 * Error codes a hostile receiver answers with: escape sequences and CR LF forging a line of `send`'s own,
 * 60 KB, and every C0 and C1 control, DEL and a bidirectional override.
 */
export const HOSTILE_CODES: Readonly<Record<string, string>> = {
  'a forged attempt line': 'x\u001b[2J\r\nattempt 2: 204',
  'a 60 KB code': 'x'.repeat(60 * 1024),
  'control characters': `c${Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('')}\u007f\u0085\u009b31m\u202eevil`,
};

/** Any control character but the line feed ending each printed line. */
const RAW_CONTROL = /(?!\n)\p{Cc}/u;

/** The most a line that describes attempts may hold: a few escaped and bounded answers, never a 60 KB one. */
export const MAX_PRINTED_LINE = 2_000;

/** What a run printed holds no raw control character, no forged line, and no line past `MAX_PRINTED_LINE`. */
export function expectPrintedSafely(run: CliRun): void {
  for (const text of [run.stdout, run.stderr]) {
    expect(text).not.toMatch(RAW_CONTROL);
    for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(MAX_PRINTED_LINE);
  }
}

/** The help of `send` or `check`, read from its command object alone: each option it takes, the answer window, the exit statuses. */
export function expectDeliveryHelp(command: { readonly name: string; readonly help: string }, options: readonly string[]): void {
  expect(command.help).toMatch(new RegExp(`^Usage: svc-webhooks ${command.name} <url> --secret S `));
  for (const option of options) expect(command.help).toMatch(new RegExp(`^  ${option} `, 'm'));
  expect(command.help).toMatch(new RegExp(`\\b${SERVICE_TIMING.answerWindowMs / 1000} s(econds)?\\b`));
  expect(command.help).toMatch(/\nExit status: 0 .*, 1 .*, 2 bad arguments\.$/);
}

/** Scenarios of `send` that do not depend on how long the sender waits. */
export const SEND_SCENARIOS: Record<string, (cli: RunCli) => Promise<void>> = {
  async 'delivers an event that an independent HMAC accepts, its envelope id equal to webhook-id'(cli) {
    const scratch = mkdtempSync(join(tmpdir(), 'svc-webhooks-send-'));
    try {
      const dataFile = join(scratch, 'data.json');
      writeFileSync(dataFile, JSON.stringify({ object: { id: 'call_01JD2W5E3G8Q7ZC1XK9M4T6V0B' }, direction: 'inbound' }));
      await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
        const run = await cli(['send', url, '--secret', SECRET, '--type', 'call.missed', '--data', `@${dataFile}`, '--id', 'msg_send_1']);
        expect(run.code).toBe(0);
        expect(received).toHaveLength(1);
        const [request] = received;
        expect(request!.method).toBe('POST');
        expect(request!.headers['webhook-id']).toBe('msg_send_1');
        expect(request!.headers['content-type']).toBe('application/json');
        expect(Math.abs(Number(request!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
        expectSignedBy(request!, SECRET);
        const envelope = JSON.parse(request!.body.toString()) as Record<string, unknown>;
        expect(envelope).toMatchObject({
          id: 'msg_send_1',
          type: 'call.missed',
          data: { object: { id: 'call_01JD2W5E3G8Q7ZC1XK9M4T6V0B' }, direction: 'inbound' },
        });
        expect(run.stdout).toMatch(/^attempt 1: 204 \(\d+ ms\)$/m);
        expect(run.stderr).toBe('');
      });
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  },

  async 'by default sends webhook.test under a new msg_ id, signed with each secret given'(cli) {
    await withRecordingReceiver([{ status: 200 }], async ({ url, received }) => {
      const run = await cli(['send', url, '--secret', OLD_SECRET, '--secret', SECRET]);
      expect(run.code).toBe(0);
      const [request] = received;
      const envelope = JSON.parse(request!.body.toString()) as { id: string; type: string; data: { object: { id: unknown } } };
      expect(envelope.id).toMatch(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(request!.headers['webhook-id']).toBe(envelope.id);
      expect(envelope.type).toBe('webhook.test');
      expect(envelope.data.object.id).toMatch(/^obj_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(run.stdout.split('\n')[0]).toBe(`webhook.test ${envelope.id} -> ${url}`);
      expect(v1Entries(request!.headers['webhook-signature'])).toHaveLength(2);
      expectSignedBy(request!, OLD_SECRET);
      expectSignedBy(request!, SECRET);
    });
  },

  async 'retries a failed attempt with backoff under the same webhook-id, one line per attempt'(cli) {
    const answers = [{ status: 503, code: 'dedup_unavailable' }, { status: 409, code: 'delivery_in_progress' }, { status: 204 }];
    await withRecordingReceiver(answers, async ({ url, received }) => {
      const run = await cli(['send', url, '--secret', SECRET, '--retries', '5']);
      expect(run.code).toBe(0);
      expect(attemptLines(run)).toEqual([
        expect.stringMatching(/^attempt 1: 503 dedup_unavailable \(\d+ ms\), retrying in 1 s$/),
        expect.stringMatching(/^attempt 2: 409 delivery_in_progress \(\d+ ms\), retrying in 2 s$/),
        expect.stringMatching(/^attempt 3: 204 \(\d+ ms\)$/),
      ]);
      expect(new Set(received.map((request) => request.headers['webhook-id'])).size).toBe(1);
      expect(new Set(received.map((request) => request.body.toString())).size).toBe(1);
      for (const request of received) expectSignedBy(request, SECRET);
    });
  },

  async 'exits 1 when the last retry fails too'(cli) {
    await withRecordingReceiver([{ status: 400, code: 'invalid_signature' }], async ({ url, received }) => {
      const run = await cli(['send', url, '--secret', SECRET, '--retries', '1']);
      expect(received).toHaveLength(2);
      expect(run.stdout).toMatch(/^attempt 2: 400 invalid_signature \(\d+ ms\)$/m);
      expect(run.stderr).toMatch(/^svc-webhooks send: not delivered in 2 attempt\(s\): the last got 400 invalid_signature \(\d+ ms\)\n$/);
      expect(run.code).toBe(1);
    });
  },

  async 'prints what a hostile receiver answers escaped and cut short: no escape sequence, no forged line'(cli) {
    for (const code of Object.values(HOSTILE_CODES)) {
      await withRecordingReceiver([{ status: 400, code }], async ({ url }) => {
        const run = await cli(['send', url, '--secret', SECRET]);
        expectPrintedSafely(run);
        expect(attemptLines(run)).toEqual([expect.stringMatching(/^attempt 1: 400 \S.{0,200} \(\d+ ms\)$/)]);
        expect(run.stdout.split('\n')).toHaveLength(3);
        expect(run.code).toBe(1);
      });
    }
    await withRecordingReceiver([{ status: 400, code: HOSTILE_CODES['a forged attempt line']! }], async ({ url }) => {
      const run = await cli(['send', url, '--secret', SECRET]);
      expect(attemptLines(run)).toEqual([expect.stringMatching(/^attempt 1: 400 x\\x1b\[2J\\r\\nattempt 2: 204 \(\d+ ms\)$/)]);
    });
  },

  async 'reports a refused connection'(cli) {
    const closed = await recordingReceiver([]);
    await closed.close();
    const run = await cli(['send', closed.url, '--secret', SECRET]);
    expect(run.stdout).toMatch(/^attempt 1: connection failed \(ECONNREFUSED\) \(\d+ ms\)$/m);
    expect(run.code).toBe(1);
  },
};

/** `send` to a receiver that never answers gives up when the window of `windowText` (say "10 s") closes. */
export async function expectUnansweredSendFails(cli: RunCli, windowText: string): Promise<void> {
  await withRecordingReceiver([null], async ({ url }) => {
    const run = await cli(['send', url, '--secret', SECRET]);
    expect(attemptLines(run)).toEqual([expect.stringMatching(new RegExp(`^attempt 1: no answer within ${windowText} \\(\\d+ ms\\)$`))]);
    expect(run.stderr).toMatch(new RegExp(`^svc-webhooks send: not delivered in 1 attempt\\(s\\): the last got no answer within ${windowText} \\(\\d+ ms\\)\n$`));
    expect(run.code).toBe(1);
  });
}

export interface CheckReport {
  readonly url: string;
  readonly passed: boolean;
  readonly checks: readonly { readonly id: string; readonly check: string; readonly passed: boolean; readonly warning?: true; readonly detail: string }[];
}

export const REFUSAL_CHECKS = [
  'tampered_body',
  'wrong_secret',
  'missing_webhook_id',
  'missing_webhook_timestamp',
  'missing_webhook_signature',
  'timestamp_too_old',
  'timestamp_too_new',
];
export const ACCEPTANCE_CHECKS = ['valid_event', 'rotated_signatures', 'unknown_type', 'redelivery', 'concurrent_copies'];
/** Every check, in the order `check` reports them. */
export const CHECK_IDS = ['valid_event', ...REFUSAL_CHECKS, ...ACCEPTANCE_CHECKS.slice(1), 'ordering'];

export interface CheckedJson {
  readonly run: CliRun;
  readonly report: CheckReport;
  readonly failing: string[];
}

/** Runs `check <url> --json` and reads its report. */
export async function checkJson(cli: RunCli, url: string): Promise<CheckedJson> {
  const run = await cli(['check', url, '--secret', SECRET, '--json']);
  const report = JSON.parse(run.stdout) as CheckReport;
  return { run, report, failing: report.checks.filter((check) => !check.passed).map((check) => check.id) };
}

/** Checks a receiver written by hand with `faults`, closed afterwards. */
export async function checkHandWritten(cli: RunCli, faults: Faults): Promise<CheckedJson> {
  const receiver = await startHandWrittenReceiver(SECRET, faults);
  try {
    return await checkJson(cli, receiver.url);
  } finally {
    await receiver.close();
  }
}

export interface FaultScenario {
  readonly title: string;
  readonly faults: Faults;
  /** The checks that must fail, in report order. */
  readonly failing: readonly string[];
  /** What the detail of some checks must say. */
  readonly details?: Readonly<Record<string, RegExp>>;
}

/** Receivers written by hand, each with at most one fault, and the rows `check` must fail for it. */
export const FAULT_SCENARIOS: readonly FaultScenario[] = [
  {
    title: 'passes a receiver written by hand without the faults below',
    faults: {},
    failing: [],
    details: { valid_event: /^accepted: 204 \(\d+ ms\)$/, tampered_body: /^refused: 400 invalid_signature \(\d+ ms\)$/ },
  },
  {
    title: 'flags a receiver that accepts everything on each refusal check',
    faults: { acceptsEverything: true },
    failing: REFUSAL_CHECKS,
    details: { tampered_body: /^accepted: 204/ },
  },
  {
    title: 'flags a receiver that ignores the timestamp on the two timestamp checks',
    faults: { ignoresTimestamp: true },
    failing: ['timestamp_too_old', 'timestamp_too_new'],
  },
  {
    title: 'flags a receiver that only refuses old timestamps on the future-timestamp check',
    faults: { acceptsFutureTimestamps: true },
    failing: ['timestamp_too_new'],
    details: { timestamp_too_old: /^refused: 400 stale_timestamp/, timestamp_too_new: /^accepted: 204/ },
  },
  {
    title: 'flags a receiver that answers 500 to unknown types on the unknown-type check',
    faults: { failsUnknownTypes: true },
    failing: ['unknown_type'],
    details: { unknown_type: /^refused: 500 unknown_type/ },
  },
  {
    title: 'flags a receiver that compares only the first signature on the rotation check',
    faults: { checksFirstSignatureOnly: true },
    failing: ['rotated_signatures'],
    details: { rotated_signatures: /^refused: 400 invalid_signature/ },
  },
  {
    title: 'flags a receiver that refuses a redelivery on the redelivery and concurrent-copies checks',
    faults: { refusesRedeliveries: true },
    failing: ['redelivery', 'concurrent_copies'],
    details: {
      redelivery: /^first 204 \(\d+ ms\), redelivery 409 already_processed \(\d+ ms\)$/,
      concurrent_copies: /409 already_processed \(\d+ ms\), then 409 already_processed \(\d+ ms\), then 409 already_processed \(\d+ ms\), then 409 already_processed/,
    },
  },
  {
    title: 'flags a receiver briefly failing on every check but the retried concurrent copies',
    faults: { failsFirstAttempts: true },
    failing: ['valid_event', 'rotated_signatures', 'unknown_type', 'redelivery'],
    details: {
      valid_event: /^refused: 503 store_unavailable \(\d+ ms\)$/,
      redelivery: /^the first delivery was not accepted \(refused: 503 store_unavailable \(\d+ ms\)\)$/,
      // Whichever copy arrives first is the one refused and retried.
      concurrent_copies:
        /^copy 1: 503 store_unavailable \(\d+ ms\), then 204 \(\d+ ms\); copy 2: 204 \(\d+ ms\)$|^copy 1: 204 \(\d+ ms\); copy 2: 503 store_unavailable \(\d+ ms\), then 204 \(\d+ ms\)$/,
    },
  },
];

/** Grades the scenario's receiver and compares the report with what the scenario expects. */
export async function expectFaultFlagged(cli: RunCli, scenario: FaultScenario): Promise<void> {
  const { run, report, failing } = await checkHandWritten(cli, scenario.faults);
  expect(failing).toEqual(scenario.failing);
  expect(report.checks.map((check) => check.id)).toEqual(CHECK_IDS);
  expect(report.passed).toBe(scenario.failing.length === 0);
  for (const [id, detail] of Object.entries(scenario.details ?? {})) {
    expect(report.checks.find((check) => check.id === id)?.detail).toMatch(detail);
  }
  expect(run.code).toBe(scenario.failing.length === 0 ? 0 : 1);
}

/** `check` passes the receiver of examples/<name>.ts, started as its README says. */
export async function expectExamplePasses(cli: RunCli, name: (typeof EXAMPLES)[number]): Promise<void> {
  const example = await startExample(name, SECRET);
  try {
    const { run, report } = await checkJson(cli, example.url);
    // Each failing check with what happened, so that a failure says why.
    expect(report.checks.filter((check) => !check.passed).map((check) => `${check.id}: ${check.detail}`)).toEqual([]);
    expect(report.checks.map((check) => check.id)).toEqual(CHECK_IDS);
    expect(run.code).toBe(0);
  } finally {
    await example.stop();
  }
}

/** `check` without --json: a table in plain words, one row per check, and exit 1 when one fails. */
export async function expectTableOfTimestampFaults(cli: RunCli): Promise<void> {
  const receiver = await startHandWrittenReceiver(SECRET, { ignoresTimestamp: true });
  try {
    const run = await cli(['check', receiver.url, '--secret', SECRET]);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^result\s+check\s+what happened$/);
    expect(lines).toHaveLength(16);
    expect(lines.slice(1, 14).filter((line) => line.startsWith('FAIL'))).toEqual([
      expect.stringMatching(/^FAIL\s+An event signed 6 minutes ago is refused\s+accepted: 204/),
      expect.stringMatching(/^FAIL\s+An event signed 6 minutes in the future is refused\s+accepted: 204/),
    ]);
    expect(lines[13]).toMatch(/^warn\s+An older event sent after a newer one of its object is skipped\s+no ordering guard: /);
    expect(lines[14]).toBe('');
    expect(lines.at(-1)).toBe(`${receiver.url}: 2 of 13 checks failed, 1 more with a warning`);
    expect(run.code).toBe(1);
  } finally {
    await receiver.close();
  }
}

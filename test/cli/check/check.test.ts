/**
 * `svc-webhooks check` run in this process: the faults the packed bin is held
 * to, then what each row says when a receiver is unreachable, refuses
 * everything, or answers too late, with pauses recorded instead of waited out
 * and a short answer window where a receiver answers late or never; what a
 * hostile receiver's answers print as; and its help.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkCommand } from '../../../src/cli/check/check.js';
import { startHandWrittenReceiver } from '../hand-written-receivers.js';
import {
  ACCEPTANCE_CHECKS,
  checkJson,
  expectDeliveryHelp,
  hmac,
  type Received,
  expectFaultFlagged,
  expectPrintedSafely,
  expectTableOfTimestampFaults,
  FAULT_SCENARIOS,
  HOSTILE_CODES,
  MAX_PRINTED_LINE,
  recordingReceiver,
  REFUSAL_CHECKS,
  SECRET,
  withRecordingReceiver,
} from '../delivery-scenarios.js';
import { inProcessCli, recordedTiming } from '../in-process-cli.js';

/** Requests a round of checks makes before any retry: one per check, two for the copies. */
const FIRST_ROUND_REQUESTS = 14;

const detailsById = (report: { checks: readonly { id: string; detail: string }[] }): Record<string, string> =>
  Object.fromEntries(report.checks.map((check) => [check.id, check.detail]));

describe('the help of check', () => {
  it('describes each option, the 10 s window and the exit statuses', () => expectDeliveryHelp(checkCommand, ['--secret S', '--json']));
});

describe('svc-webhooks check, in process', () => {
  it.each(FAULT_SCENARIOS)('$title', (scenario) => expectFaultFlagged(inProcessCli(recordedTiming()), scenario));

  it('prints a table in plain words, one row per check, and exits 1 when one fails', () =>
    expectTableOfTimestampFaults(inProcessCli(recordedTiming())));

  it('prints every row as a pass but the advice on ordering, a warning, and says all passed, exiting 0', async () => {
    const receiver = await startHandWrittenReceiver(SECRET);
    try {
      const run = await inProcessCli(recordedTiming())(['check', receiver.url, '--secret', SECRET]);
      const lines = run.stdout.split('\n');
      // Columns as wide as their longest cell ("result", the concurrent-copies check), two spaces apart.
      const checkWidth = 'Two copies of a new event sent at once both end in 2xx after retries'.length;
      expect(lines[0]).toBe(`result  ${'check'.padEnd(checkWidth)}  what happened`);
      expect(lines[1]).toMatch(new RegExp(`^pass    ${'A valid event is answered 2xx within 10 s'.padEnd(checkWidth)}  accepted: 204 \\(\\d+ ms\\)$`));
      expect(lines.slice(1, 13).every((line) => line.startsWith('pass  '))).toBe(true);
      expect(lines[13]).toMatch(/^warn    An older event sent after a newer one of its object is skipped\s+no ordering guard: /);
      expect(lines.slice(14)).toEqual(['', `${receiver.url}: all 13 checks passed, 1 with a warning`, '']);
      expect([run.code, run.stderr]).toEqual([0, '']);
    } finally {
      await receiver.close();
    }
  });

  it('refuses a command line without the URL, with exit 2', async () => {
    const run = await inProcessCli()(['check', '--secret', SECRET]);
    expect(run.stderr).toBe('svc-webhooks check: <url> is missing\nRun "svc-webhooks check --help" for usage.\n');
    expect(run.code).toBe(2);
  });

  it('names the URL in its normalized form and each check in plain words', async () => {
    await withRecordingReceiver([{ status: 204 }], async ({ url }) => {
      const { run, report } = await checkJson(inProcessCli(recordedTiming()), url.replace('http:', 'HTTP:'));
      expect(report.url).toBe(url);
      expect(report.passed).toBe(false);
      expect(report.checks.map(({ id, check }) => [id, check])).toEqual([
        ['valid_event', 'A valid event is answered 2xx within 10 s'],
        ['tampered_body', 'A body changed after signing is refused'],
        ['wrong_secret', 'An event signed with another secret is refused'],
        ['missing_webhook_id', 'An event without the webhook-id header is refused'],
        ['missing_webhook_timestamp', 'An event without the webhook-timestamp header is refused'],
        ['missing_webhook_signature', 'An event without the webhook-signature header is refused'],
        ['timestamp_too_old', 'An event signed 6 minutes ago is refused'],
        ['timestamp_too_new', 'An event signed 6 minutes in the future is refused'],
        ['rotated_signatures', 'Two signatures (a rotation), only the second valid, are accepted'],
        ['unknown_type', 'An event of a type the spec does not list is answered 2xx'],
        ['redelivery', 'A redelivery of an event already answered 2xx is answered 2xx'],
        ['concurrent_copies', 'Two copies of a new event sent at once both end in 2xx after retries'],
        ['ordering', 'An older event sent after a newer one of its object is skipped'],
      ]);
      expect(Object.keys(report.checks[0]!)).toEqual(['id', 'check', 'passed', 'detail']);
      expect(run.code).toBe(1);
    });
  });

  it('fails every row of an unreachable receiver, without a verdict and without retries', async () => {
    const closed = await recordingReceiver([]);
    await closed.close();
    const timing = recordedTiming();
    const { run, report, failing } = await checkJson(inProcessCli(timing), closed.url);
    const refused = String.raw`connection failed \(ECONNREFUSED\) \(\d+ ms\)`;
    const details = detailsById(report);
    for (const id of REFUSAL_CHECKS) expect(details[id]).toMatch(new RegExp(`^no verdict: ${refused}$`));
    for (const id of ['valid_event', 'rotated_signatures', 'unknown_type']) expect(details[id]).toMatch(new RegExp(`^${refused}$`));
    expect(details.redelivery).toMatch(new RegExp(`^the first delivery was not accepted \\(${refused}\\)$`));
    expect(details.concurrent_copies).toMatch(new RegExp(`^copy 1: ${refused}; copy 2: ${refused}$`));
    expect(details.ordering).toMatch(new RegExp(`^not checked: the newer event was not accepted \\(${refused}\\)$`));
    expect(failing).toHaveLength(12);
    expect(timing.pauses).toEqual([]);
    expect(run.code).toBe(1);
  });

  it('passes the refusals of a receiver answering 503 to everything, and retries each copy 3 times', async () => {
    await withRecordingReceiver([{ status: 503, code: 'dedup_unavailable' }], async ({ url, received }) => {
      const timing = recordedTiming();
      const { report, failing } = await checkJson(inProcessCli(timing), url);
      expect(failing).toEqual(ACCEPTANCE_CHECKS);
      const details = detailsById(report);
      expect(details.tampered_body).toMatch(/^refused: 503 dedup_unavailable \(\d+ ms\)$/);
      expect(details.valid_event).toMatch(/^refused: 503 dedup_unavailable \(\d+ ms\)$/);
      expect(details.redelivery).toMatch(/^the first delivery was not accepted \(refused: 503 dedup_unavailable \(\d+ ms\)\)$/);
      const attempts = String.raw`503 dedup_unavailable \(\d+ ms\)(, then 503 dedup_unavailable \(\d+ ms\)){3}`;
      expect(details.concurrent_copies).toMatch(new RegExp(`^copy 1: ${attempts}; copy 2: ${attempts}$`));
      expect(timing.pauses.sort((a, b) => a - b)).toEqual([500, 500, 1000, 1000, 2000, 2000]);
      expect(received).toHaveLength(FIRST_ROUND_REQUESTS + 6);
    });
  });

  it('fails the acceptance rows of a receiver answering after the window, and passes its refusals', async () => {
    const receiver = await startHandWrittenReceiver(SECRET, { answersAfterMs: 60_000 });
    try {
      // Long enough for the refusals, answered at once, to arrive under any load; far shorter than the receiver's delay.
      const timing = recordedTiming(1000);
      const { run, report, failing } = await checkJson(inProcessCli(timing), receiver.url);
      expect(failing).toEqual(ACCEPTANCE_CHECKS);
      const details = detailsById(report);
      expect(details.valid_event).toMatch(/^no answer within 1 s \(\d+ ms\)$/);
      expect(details.redelivery).toMatch(/^the first delivery was not accepted \(no answer within 1 s \(\d+ ms\)\)$/);
      expect(details.concurrent_copies).toMatch(/^copy 1: no answer within 1 s \(\d+ ms\); copy 2: no answer within 1 s \(\d+ ms\)$/);
      expect(timing.pauses).toEqual([]);
      expect(run.code).toBe(1);
    } finally {
      await receiver.close();
    }
  });
});

describe('check against a hostile receiver', () => {
  it.each(Object.entries(HOSTILE_CODES))('prints its answers escaped and cut short, in the table and in --json: %s', async (_title, code) => {
    await withRecordingReceiver([{ status: 400, code }], async ({ url }) => {
      const table = await inProcessCli(recordedTiming())(['check', url, '--secret', SECRET]);
      expectPrintedSafely(table);
      // The header, a row per check, a blank line and the summary: no line forged, none split.
      const lines = table.stdout.trimEnd().split('\n');
      expect(lines).toHaveLength(16);
      expect(lines.slice(1, 14).every((line) => /^(pass|FAIL|warn)  /.test(line))).toBe(true);
      expect(lines.at(-1)).toBe(`${url}: 5 of 13 checks failed, 1 more with a warning`);

      const { run, report } = await checkJson(inProcessCli(recordedTiming()), url);
      expectPrintedSafely(run);
      for (const { detail } of report.checks) {
        expect(detail).not.toMatch(/\p{Cc}/u);
        expect(detail.length).toBeLessThanOrEqual(MAX_PRINTED_LINE);
      }
    });
  });

  it('shows a forged line as the escapes it is made of', async () => {
    await withRecordingReceiver([{ status: 400, code: HOSTILE_CODES['a forged attempt line']! }], async ({ url }) => {
      const { report } = await checkJson(inProcessCli(recordedTiming()), url);
      expect(detailsById(report).tampered_body).toMatch(/^refused: 400 x\\x1b\[2J\\r\\nattempt 2: 204 \(\d+ ms\)$/);
    });
  });
});

/** How a recorded request was signed, judged with node:crypto alone. */
function signing(request: Received) {
  const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature } = request.headers;
  const envelope = JSON.parse(request.body.toString()) as { id: string; type: string; data: { object: { id: string } } };
  const entries = String(signature).split(' ');
  const byTarget = (body: string) => entries.map((entry) => entry === `v1,${hmac(SECRET, String(id), String(timestamp), body)}`);
  const restored = request.body.toString().replace(/_changed"/, '"');
  return {
    envelope,
    missing: (['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const).filter((name) => request.headers[name] === undefined),
    ageSeconds: Math.round(Date.now() / 1000 - Number(timestamp)),
    verifies: byTarget(request.body.toString()),
    verifiesRestored: restored === request.body.toString() ? [] : byTarget(restored),
  };
}

describe('what check sends', () => {
  it('one request per check (two for a redelivery, two copies), each a new msg_ event but for the repeats', async () => {
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      await checkJson(inProcessCli(recordedTiming()), url);
      // And the older event of the ordering check, sent once the newer one was answered.
      expect(received).toHaveLength(FIRST_ROUND_REQUESTS + 2);
      const sent = received.map(signing);
      for (const request of received) expect([request.method, request.headers['content-type']]).toEqual(['POST', 'application/json']);
      for (const { envelope } of sent) expect(envelope.id).toMatch(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/);
      for (const [i, request] of received.entries()) {
        if (request.headers['webhook-id'] !== undefined) expect(request.headers['webhook-id']).toBe(sent[i]!.envelope.id);
      }
      // The redelivery and the two copies each repeat one event.
      expect(new Set(sent.map(({ envelope }) => envelope.id)).size).toBe(received.length - 2);

      const complete = sent.filter(({ missing }) => missing.length === 0);
      expect(sent.filter(({ missing }) => missing.length > 0).map(({ missing }) => missing)).toEqual(
        expect.arrayContaining([['webhook-id'], ['webhook-timestamp'], ['webhook-signature']]),
      );
      const fresh = complete.filter(({ ageSeconds }) => Math.abs(ageSeconds) < 60);
      expect(complete.map(({ ageSeconds }) => Math.round(ageSeconds / 60))).toEqual(expect.arrayContaining([6, -6]));
      for (const stale of complete.filter(({ ageSeconds }) => Math.abs(ageSeconds) >= 60)) expect(stale.verifies).toEqual([true]);

      // Tampered: the signed body with data.object.id changed; wrong secret: a body as signed, by another key.
      const unverified = fresh.filter(({ verifies }) => !verifies.includes(true));
      expect(unverified).toHaveLength(2);
      const tampered = unverified.find(({ verifiesRestored }) => verifiesRestored.includes(true));
      expect(tampered?.envelope.data.object.id).toMatch(/^obj_[0-9A-HJKMNP-TV-Z]{26}_changed$/);
      expect(unverified.filter((one) => one !== tampered).map(({ envelope }) => envelope.data.object.id)).toEqual([
        expect.stringMatching(/^obj_[0-9A-HJKMNP-TV-Z]{26}$/),
      ]);

      expect(fresh.filter(({ verifies }) => verifies.length === 2).map(({ verifies }) => verifies)).toEqual([[false, true]]);
      expect(fresh.map(({ envelope }) => envelope.type).sort()).toEqual([
        'svc_webhooks_check.unknown_type',
        ...Array<string>(fresh.length - 1).fill('webhook.test'),
      ]);
    });
  });
});

describe("check's default answer window", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('abandons each attempt after 10 s', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    await withRecordingReceiver([null], async ({ url, untilReceived }) => {
      const running = inProcessCli()(['check', url, '--secret', SECRET]);
      await untilReceived(FIRST_ROUND_REQUESTS);
      await vi.advanceTimersByTimeAsync(10_000);
      const run = await running;
      const rows = run.stdout.split('\n').slice(1, 14);
      expect(rows.filter((row) => row.startsWith('FAIL'))).toHaveLength(12);
      expect(rows[12]).toMatch(/^warn\s.*\s{2}not checked: the newer event was not accepted \(no answer within 10 s \(\d+ ms\)\)$/);
      expect(rows[0]).toMatch(/\s{2}no answer within 10 s \(\d+ ms\)$/);
      expect(rows[1]).toMatch(/\s{2}no verdict: no answer within 10 s \(\d+ ms\)$/);
      expect(run.stdout).toContain(`\n\n${url}: 12 of 13 checks failed, 1 more with a warning\n`);
      expect(run.code).toBe(1);
    });
  });
});

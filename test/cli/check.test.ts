/**
 * `svc-webhooks check` run in this process: the faults the packed bin is held
 * to, then what each row says when a receiver is unreachable, refuses
 * everything, or answers too late, with pauses recorded instead of waited out
 * and a short answer window where a receiver answers late or never.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startHandWrittenReceiver } from './hand-written-receivers.js';
import {
  ACCEPTANCE_CHECKS,
  checkJson,
  expectFaultFlagged,
  expectTableOfTimestampFaults,
  FAULT_SCENARIOS,
  recordingReceiver,
  REFUSAL_CHECKS,
  SECRET,
  withRecordingReceiver,
} from './delivery-scenarios.js';
import { inProcessCli, recordedTiming } from './in-process-cli.js';

/** Requests a round of checks makes before any retry: one per check, two for the copies. */
const FIRST_ROUND_REQUESTS = 13;

const detailsById = (report: { checks: readonly { id: string; detail: string }[] }): Record<string, string> =>
  Object.fromEntries(report.checks.map((check) => [check.id, check.detail]));

describe('svc-webhooks check, in process', () => {
  it.each(FAULT_SCENARIOS)('$title', (scenario) => expectFaultFlagged(inProcessCli(recordedTiming()), scenario));

  it('prints a table in plain words, one row per check, and exits 1 when one fails', () =>
    expectTableOfTimestampFaults(inProcessCli(recordedTiming())));

  it('prints every row as a pass and says all passed, exiting 0', async () => {
    const receiver = await startHandWrittenReceiver(SECRET);
    try {
      const run = await inProcessCli(recordedTiming())(['check', receiver.url, '--secret', SECRET]);
      const lines = run.stdout.split('\n');
      // Columns as wide as their longest cell ("result", the concurrent-copies check), two spaces apart.
      const checkWidth = 'Two copies of a new event sent at once both end in 2xx after retries'.length;
      expect(lines[0]).toBe(`result  ${'check'.padEnd(checkWidth)}  what happened`);
      expect(lines[1]).toMatch(new RegExp(`^pass    ${'A valid event is answered 2xx within 10 s'.padEnd(checkWidth)}  accepted: 204 \\(\\d+ ms\\)$`));
      expect(lines.slice(1, 13).every((line) => line.startsWith('pass  '))).toBe(true);
      expect(lines.slice(13)).toEqual(['', `${receiver.url}: all 12 checks passed`, '']);
      expect([run.code, run.stderr]).toEqual([0, '']);
    } finally {
      await receiver.close();
    }
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
      const rows = run.stdout.split('\n').slice(1, 13);
      expect(rows.filter((row) => row.startsWith('FAIL'))).toHaveLength(12);
      expect(rows[0]).toMatch(/\s{2}no answer within 10 s \(\d+ ms\)$/);
      expect(rows[1]).toMatch(/\s{2}no verdict: no answer within 10 s \(\d+ ms\)$/);
      expect(run.stdout).toContain(`\n\n${url}: 12 of 12 checks failed\n`);
      expect(run.code).toBe(1);
    });
  });
});

/**
 * `svc-webhooks check`, run in this process, grades the receivers of
 * examples/ (each started as its README says) and passes every one.
 */
import { describe, expect, it } from 'vitest';
import { CHECK_IDS, checkJson, SECRET } from './delivery-scenarios.js';
import { EXAMPLES, startExample } from './example-receivers.js';
import { inProcessCli, recordedTiming } from './in-process-cli.js';

describe.concurrent('svc-webhooks check, in process, on the examples', () => {
  it.each(EXAMPLES)('passes the receiver of examples/%s.ts', async (name) => {
    const example = await startExample(name, SECRET);
    try {
      const { run, report, failing } = await checkJson(inProcessCli(recordedTiming()), example.url);
      expect(failing).toEqual([]);
      expect(report.checks.map((check) => check.id)).toEqual(CHECK_IDS);
      expect(run.code).toBe(0);
    } finally {
      await example.stop();
    }
  }, 60_000);
});

/**
 * `svc-webhooks check`, run in this process, grades the receivers of
 * examples/ (each started as its README says) and passes every one.
 */
import { describe, it } from 'vitest';
import { expectExamplePasses } from './delivery-scenarios.js';
import { EXAMPLES } from './example-receivers.js';
import { inProcessCli, recordedTiming } from './in-process-cli.js';

describe.concurrent('svc-webhooks check, in process, on the examples', () => {
  it.each(EXAMPLES)('passes the receiver of examples/%s.ts', (name) => expectExamplePasses(inProcessCli(recordedTiming()), name), 60_000);
});

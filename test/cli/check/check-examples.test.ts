/**
 * The receivers of examples/ (each started as its README says): `svc-webhooks
 * check`, run in this process, passes every one, and the testing kit's
 * simulateDelivery sees each process two copies of an event once.
 */
import { describe, expect, it } from 'vitest';
import { simulateDelivery, testEvent } from '../../../src/testing/index.js';
import { expectExamplePasses, SECRET } from '../delivery-scenarios.js';
import { EXAMPLES, startExample } from '../example-receivers.js';
import { inProcessCli, recordedTiming } from '../in-process-cli.js';

describe.concurrent('svc-webhooks check, in process, on the examples', () => {
  it.each(EXAMPLES)('passes the receiver of examples/%s.ts', (name) => expectExamplePasses(inProcessCli(recordedTiming()), name), 60_000);
});

describe.concurrent('simulateDelivery on the examples', () => {
  it.each(EXAMPLES)('delivers two copies at once to the receiver of examples/%s.ts, each ending in a 2xx', async (name) => {
    const example = await startExample(name, SECRET);
    try {
      const pause = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50));
      const result = await simulateDelivery(`${example.url}`, testEvent('call.missed'), { secret: SECRET, copies: 2, sleep: pause });
      expect(result.delivered).toBe(true);
      expect(result.attempts.filter(({ status }) => status !== undefined && status >= 200 && status < 300)).toHaveLength(2);
    } finally {
      await example.stop();
    }
  }, 60_000);
});

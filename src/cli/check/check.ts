/**
 * `svc-webhooks check`: sends a receiver the deliveries the service can send, valid and not, and grades how it
 * answers each.
 */
import { onePositional, parseCommandArgs, receiverUrl, secrets, UsageError } from '../shared/args.js';
import { EXIT, type Command } from '../shared/command.js';
import { SERVICE_TIMING, type DeliveryTiming } from '../../testing/delivery.js';
import type { CliIO } from '../shared/io.js';
import { runReceiverChecks } from './receiver-checks.js';
import { formatTable } from './table.js';

const options = {
  secret: { type: 'string', multiple: true },
  json: { type: 'boolean' },
} as const;

export const checkCommand = {
  name: 'check',
  summary: "grade a receiver (any, not only this library's) against spec sections 5 and 6",
  help: `Usage: svc-webhooks check <url> --secret S [--json]

Sends a receiver the deliveries the service can send, valid and not, and
prints one row per check:
  - a valid event gets a 2xx within 10 s
  - a tampered body, a wrong secret, each missing header, a timestamp 6
    minutes old and one 6 minutes ahead are each refused (any non-2xx)
  - two signatures (a rotation) with only the second valid are accepted
  - an event of an unknown type gets a 2xx
  - a redelivery of an event already answered 2xx gets a 2xx
  - two copies of a new event sent at once both end in a 2xx, each retried
    up to 3 times (0.5, 1, 2 s apart) after a non-2xx answer
  - advice (a warning, never a failure): an event sent after a newer one of
    its object (data.object.id; the envelope's timestamp a minute earlier)
    is answered stale, {"received":true,"stale":true}, not processed
Checks run at once; every attempt is abandoned after 10 s, the service's
answer window. Each check uses new event ids.

Options:
  --secret S   the receiver's secret (whsec_…); without it, WEBHOOK_SECRET
  --json       print {"url", "passed", "checks": [{"id", "check", "passed", "detail"}]},
               a row with a warning also "warning": true

Exit status: 0 no check failed (a warning is advice), 1 a check failed, 2 bad arguments.`,
  /** `timing` is the service's unless a test shortens it. */
  async run(args: readonly string[], io: CliIO, timing: DeliveryTiming = SERVICE_TIMING): Promise<number> {
    const { values, positionals } = parseCommandArgs(args, options);
    const url = receiverUrl(onePositional(positionals, '<url>'));
    const [secret, ...others] = secrets(values.secret);
    if (others.length > 0) throw new UsageError('check takes one --secret: the one the receiver verifies with');
    const results = await runReceiverChecks({ url, secret: secret! }, timing);
    const passed = results.every((result) => result.passed);

    if (values.json) {
      io.out(JSON.stringify({ url, passed, checks: results }, null, 2));
    } else {
      const rows = results.map((result) => [result.passed ? (result.warning ? 'warn' : 'pass') : 'FAIL', result.check, result.detail]);
      for (const line of formatTable(['result', 'check', 'what happened'], rows)) io.out(line);
      const failed = results.filter((result) => !result.passed).length;
      const warned = results.filter((result) => result.passed && result.warning).length;
      io.out('');
      io.out(
        (failed === 0 ? `${url}: all ${results.length} checks passed` : `${url}: ${failed} of ${results.length} checks failed`) +
          (warned === 0 ? '' : `, ${warned} ${failed === 0 ? '' : 'more '}with a warning`),
      );
    }
    return passed ? EXIT.ok : EXIT.failed;
  },
} satisfies Command;

/** `svc-webhooks replay`: the deliveries a file of `svc-webhooks dev --save` holds, sent again. */
import { Buffer } from 'node:buffer';
import { readFile } from 'node:fs/promises';
import { onePositional, parseCommandArgs, receiverUrl, required, secrets, UsageError } from '../shared/args.js';
import { EXIT, type Command } from '../shared/command.js';
import type { CliIO } from '../shared/io.js';
import { REPLAY_MODES, replayedRequest, type OutgoingRequest, type ReplayMode } from '../shared/replayed-request.js';
import { delivered, describeAttempt, post } from '../../testing/delivery.js';
import { printable } from '../../testing/printable.js';
import { TOLERANCE_SECONDS } from '../shared/diagnose.js';

const options = {
  to: { type: 'string' },
  mode: { type: 'string' },
  secret: { type: 'string', multiple: true },
} as const;

export const replayCommand = {
  name: 'replay',
  summary: 'send the deliveries a saved file holds again',
  help: `Usage: svc-webhooks replay <deliveries.jsonl> --to <url> [--mode exact|resign|new-id] [--secret S]

Sends again, one after the other, each delivery of a file that
svc-webhooks dev --save wrote (or any file of such JSON lines):
  exact    the recorded bytes and headers as they are; a receiver refuses them
           once 5 minutes have passed since they were signed, so older ones
           are not sent, and the command says so
  resign   the same body and id, signed now: a receiver that deduplicates
           answers it as a duplicate
  new-id   the body with a new id, signed now: the handler runs again (the
           JSON is written anew, so numbers past 2^53 lose digits)

Options:
  --to URL     the receiver's webhook URL
  --mode M     exact (default), resign or new-id
  --secret S   the endpoint's secret, for resign and new-id; without it,
               WEBHOOK_SECRET

Exit status: 0 every delivery got a 2xx, 1 one did not (or was too old to
send exactly, or could not be sent in the mode), 2 bad arguments or a file
it cannot read.`,

  async run(args: readonly string[], io: CliIO): Promise<number> {
    const { values, positionals } = parseCommandArgs(args, options);
    const file = onePositional(positionals, '<deliveries.jsonl>');
    const url = receiverUrl(required(values.to, 'to'));
    const mode = (values.mode ?? 'exact') as ReplayMode;
    if (!REPLAY_MODES.includes(mode)) throw new UsageError(`--mode must be one of ${REPLAY_MODES.join(', ')}`);
    // Exact bytes are signed by nobody here, so what the list holds is never read for them.
    // Stryker disable next-line ArrayDeclaration
    const secretList = mode === 'exact' ? [] : secrets(values.secret);
    const records = recordsOf(await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(`cannot read ${file} (${error.code ?? error.message})`);
    }));
    let failed = 0;
    for (const { label, request } of records) {
      const age = ageSeconds(request);
      if (mode === 'exact' && age !== undefined && age > TOLERANCE_SECONDS) {
        io.err(`${label}: signed ${age} s ago, past the ${TOLERANCE_SECONDS} s a receiver allows: replay it with --mode resign or --mode new-id`);
        failed += 1;
        continue;
      }
      let outgoing: OutgoingRequest;
      try {
        outgoing = replayedRequest(request, mode, secretList);
      } catch (error) {
        // That record alone cannot be sent so: the others still are.
        io.err(`${label}: ${(error as Error).message}`);
        failed += 1;
        continue;
      }
      const attempt = await post(url, outgoing.body, outgoing.headers);
      io.out(`${label} ${printable(outgoing.headers['webhook-id'] ?? '(no webhook-id)')} -> ${describeAttempt(attempt)}`);
      if (!delivered(attempt)) failed += 1;
    }
    if (records.length === 0) io.err(`${file} holds no delivery`);
    return failed === 0 && records.length > 0 ? EXIT.ok : EXIT.failed;
  },
} satisfies Command;

/** The records of a file of JSON lines: each a label (`#n`, or `line k` for a record without a number) and the request it holds. Throws `UsageError` naming the line. */
function recordsOf(text: string): Array<{ label: string; request: OutgoingRequest }> {
  return text
    .split('\n')
    .map((line, i) => [line.trim(), i + 1] as const)
    .filter(([line]) => line !== '')
    .map(([line, number]) => {
      let record: { n?: unknown; request?: { headers?: unknown; bodyBase64?: unknown } };
      try {
        record = JSON.parse(line) as typeof record;
      } catch {
        throw new UsageError(`line ${number} is not JSON`);
      }
      const headers = record.request?.headers;
      const body = record.request?.bodyBase64;
      if (typeof headers !== 'object' || headers === null || typeof body !== 'string') throw new UsageError(`line ${number} holds no recorded request`);
      // Lower-case names, as a request carries them: a hand-written `Webhook-Id` is the same header.
      const stringHeaders: Record<string, string> = Object.create(null) as Record<string, string>;
      for (const [name, value] of Object.entries(headers)) {
        if (typeof value !== 'string') continue;
        const lower = name.toLowerCase();
        stringHeaders[lower] = stringHeaders[lower] === undefined ? value : `${stringHeaders[lower]}, ${value}`;
      }
      return { label: typeof record.n === 'number' ? `#${record.n}` : `line ${number}`, request: { headers: stringHeaders, body: Buffer.from(body, 'base64') } };
    });
}

/** How many seconds ago the request was signed, when its webhook-timestamp says. */
function ageSeconds(request: OutgoingRequest): number | undefined {
  const stamp = request.headers['webhook-timestamp'];
  return stamp !== undefined && /^\d{1,15}$/.test(stamp) ? Math.floor(Date.now() / 1000) - Number(stamp) : undefined;
}

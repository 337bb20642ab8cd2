/** `svc-webhooks replay`: the deliveries a file of `svc-webhooks dev --save` holds, sent again. */
import { Buffer } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { onePositional, parseCommandArgs, receiverUrl, required, secrets, UsageError } from '../shared/args.js';
import { cappedLines, MAX_LINE_BYTES, MAX_SOUGHT_LINE_BYTES, type InputLine } from '../shared/capped-read.js';
import { EXIT, type Command } from '../shared/command.js';
import type { CliIO } from '../shared/io.js';
import { REPLAY_MODES, replayedRequest, type OutgoingRequest, type ReplayMode } from '../shared/replayed-request.js';
import { delivered, describeAttempt, post } from '../../testing/delivery.js';
import { printable } from '../../base/printable.js';
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

Sends again, one after the other as it reads them, the deliveries of a file
that svc-webhooks dev --save wrote (or any file of such JSON lines); a line
that is not JSON, holds no recorded request or is over 8 MiB is named and
skipped. Each is sent:
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

Ends with a summary line: how many deliveries were sent, got a 2xx and failed
(not sent, or no 2xx), and how many lines were skipped.

Exit status: 0 every delivery got a 2xx, 1 one did not (or was too old to
send exactly, or could not be sent in the mode, or a line was skipped), 2 bad
arguments or a file it cannot read.`,

  async run(args: readonly string[], io: CliIO): Promise<number> {
    const { values, positionals } = parseCommandArgs(args, options);
    const file = onePositional(positionals, '<deliveries.jsonl>');
    const url = receiverUrl(required(values.to, 'to'));
    const mode = (values.mode ?? 'exact') as ReplayMode;
    if (!REPLAY_MODES.includes(mode)) throw new UsageError(`--mode must be one of ${REPLAY_MODES.join(', ')}`);
    // Exact bytes are signed by nobody here, so what the list holds is never read for them.
    // Stryker disable next-line ArrayDeclaration
    const secretList = mode === 'exact' ? [] : secrets(values.secret);
    const count = { records: 0, sent: 0, delivered: 0, skipped: 0 };
    for await (const line of linesOf(file)) {
      const read = recordOf(line);
      if (typeof read === 'string') {
        // A line cut by a relay killed while appending is that line alone: the others still are sent.
        io.err(`line ${line.number} ${read}`);
        count.skipped += 1;
        continue;
      }
      if (read === undefined) continue;
      count.records += 1;
      const { label, request } = read;
      const age = ageSeconds(request);
      if (mode === 'exact' && age !== undefined && age > TOLERANCE_SECONDS) {
        io.err(`${label}: signed ${age} s ago, past the ${TOLERANCE_SECONDS} s a receiver allows: replay it with --mode resign or --mode new-id`);
        continue;
      }
      let outgoing: OutgoingRequest;
      try {
        outgoing = replayedRequest(request, mode, secretList);
      } catch (error) {
        // That record alone cannot be sent so: the others still are.
        io.err(`${label}: ${(error as Error).message}`);
        continue;
      }
      const attempt = await post(url, outgoing.body, outgoing.headers);
      io.out(`${label} ${printable(outgoing.headers['webhook-id'] ?? '(no webhook-id)')} -> ${describeAttempt(attempt)}`);
      count.sent += 1;
      if (delivered(attempt)) count.delivered += 1;
    }
    if (count.records === 0 && count.skipped === 0) io.err(`${file} holds no delivery`);
    const failed = count.records - count.delivered;
    io.out(`summary: ${count.sent} sent, ${count.delivered} got a 2xx, ${failed} failed, ${count.skipped} line(s) skipped`);
    return failed === 0 && count.skipped === 0 && count.records > 0 ? EXIT.ok : EXIT.failed;
  },
} satisfies Command;

/** The lines of `file` as they stream in; a file it cannot read is a `UsageError`. */
async function* linesOf(file: string): AsyncGenerator<InputLine> {
  try {
    yield* cappedLines(createReadStream(file));
  } catch (error) {
    throw new UsageError(`cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/**
 * The record a line holds: a label (`#n`, or `line k` for a record without a number) and the request it holds;
 * `undefined` for a blank line; or why it holds none, to follow `line k`.
 */
function recordOf(line: InputLine): { label: string; request: OutgoingRequest } | string | undefined {
  if ('over' in line) {
    const over = `is over ${inMiB(MAX_LINE_BYTES)} MiB`;
    return line.over === 'skipped' ? `${over}: skipped` : `${over} and has no end within ${inMiB(MAX_SOUGHT_LINE_BYTES)} MiB: the rest is not read`;
  }
  const text = line.bytes.toString('utf8').trim();
  if (text === '') return undefined;
  let record: { n?: unknown; request?: { headers?: unknown; bodyBase64?: unknown } };
  try {
    record = JSON.parse(text) as typeof record;
  } catch {
    return 'is not JSON: skipped';
  }
  const headers = record.request?.headers;
  const body = record.request?.bodyBase64;
  if (typeof headers !== 'object' || headers === null || typeof body !== 'string') return 'holds no recorded request: skipped';
  // Lower-case names, as a request carries them: a hand-written `Webhook-Id` is the same header.
  const stringHeaders: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string') continue;
    const lower = name.toLowerCase();
    stringHeaders[lower] = stringHeaders[lower] === undefined ? value : `${stringHeaders[lower]}, ${value}`;
  }
  return { label: typeof record.n === 'number' ? `#${record.n}` : `line ${line.number}`, request: { headers: stringHeaders, body: Buffer.from(body, 'base64') } };
}

const inMiB = (bytes: number): number => bytes / 1024 / 1024;

/** How many seconds ago the request was signed, when its webhook-timestamp says. */
function ageSeconds(request: OutgoingRequest): number | undefined {
  const stamp = request.headers['webhook-timestamp'];
  return stamp !== undefined && /^\d{1,15}$/.test(stamp) ? Math.floor(Date.now() / 1000) - Number(stamp) : undefined;
}

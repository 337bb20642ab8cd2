/** `svc-webhooks verify`: verifies a captured request, and says why one fails. */
import { parseCommandArgs, noPositionals, secrets, UsageError, wholeNumber } from '../shared/args.js';
import { parseCapturedRequest, type CapturedRequest } from './captured-request.js';
import { EXIT, type Command } from '../shared/command.js';
import { diagnose } from '../shared/diagnose.js';
import { explain } from '../shared/explain.js';
import { parseHeaderText } from '../shared/header-lines.js';
import { readInput } from '../shared/input.js';
import type { CliIO } from '../shared/io.js';

const options = {
  secret: { type: 'string', multiple: true },
  headers: { type: 'string' },
  body: { type: 'string' },
  request: { type: 'string' },
  now: { type: 'string' },
} as const;

export const verifyCommand: Command = {
  name: 'verify',
  summary: 'verify a received request, and say why it fails',
  help: `Usage: svc-webhooks verify --secret S --headers @file --body @file [--now N]
       svc-webhooks verify --secret S --request @file [--now N]

Verifies a request as a receiver should (spec section 5) and, when it fails,
names the likeliest cause after trying it:
  - the body re-serialized: the signature matches the body parsed and printed
    again (compact, or indented with 2 or 4 spaces), or without a final newline
  - the secret misread: the signature matches it with its whsec_ prefix kept,
    not base64-decoded, or (a legacy secret) base64-decoded
  - the clock: how many seconds the timestamp lies from the clock
  - another secret: no variant matches

Options:
  --secret S     the endpoint's secret; repeat it to accept either of a rotation;
                 without it, WEBHOOK_SECRET
  --headers H    the request headers: "name: value" lines (as sign prints them)
                 or a JSON object; @file, - for standard input, or the text
  --body B       the body exactly as received: @file, -, or the text
  --request R    a captured raw HTTP request (request line optional, CRLF or LF,
                 Content-Length or chunked): @file or -
  --now N        judge the timestamp at this Unix time in seconds (default: now),
                 e.g. the time a request was captured

Exit status: 0 valid, 1 invalid (the cause is printed), 2 bad arguments.`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, options);
    noPositionals(positionals);
    const secretList = secrets(values.secret);
    const nowMs = values.now === undefined ? Date.now() : wholeNumber(values.now, 'now') * 1000;
    const { headers, body } = await readRequest(values, io);
    const diagnosis = diagnose({ body, headers, secrets: secretList, nowMs });
    for (const line of explain(diagnosis)) io.out(line);
    return diagnosis.error === undefined ? EXIT.ok : EXIT.failed;
  },
};

async function readRequest(values: { headers?: string; body?: string; request?: string }, io: CliIO): Promise<CapturedRequest> {
  if (values.request !== undefined) {
    if (values.headers !== undefined || values.body !== undefined) throw new UsageError('give either --request, or --headers and --body');
    return parseCapturedRequest(await readInput(values.request, 'request', io), '--request');
  }
  if (values.headers === undefined || values.body === undefined) throw new UsageError('give --headers and --body, or --request');
  if (values.headers === '-' && values.body === '-') throw new UsageError('only one of --headers and --body can be standard input');
  const headers = parseHeaderText((await readInput(values.headers, 'headers', io)).toString('utf8'), '--headers');
  return { headers, body: await readInput(values.body, 'body', io) };
}

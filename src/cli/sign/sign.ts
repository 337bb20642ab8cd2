/** `svc-webhooks sign`: the signature headers of a body, as the service would send them. */
import { sign } from '../../core/sign.js';
import { parseCommandArgs, noPositionals, required, secrets, wholeNumber } from '../shared/args.js';
import { EXIT, type Command } from '../shared/command.js';
import { curlArguments, headerLines } from '../shared/header-lines.js';
import { readInput } from '../shared/input.js';

const options = {
  secret: { type: 'string', multiple: true },
  id: { type: 'string' },
  timestamp: { type: 'string' },
  body: { type: 'string' },
  curl: { type: 'boolean' },
} as const;

export const signCommand: Command = {
  name: 'sign',
  summary: 'print the three signature headers for a body',
  help: `Usage: svc-webhooks sign --secret S --id ID [--timestamp N] [--body @file|-|TEXT] [--curl]

Signs a body as the service does (HMAC-SHA256 over id.timestamp.body) and
prints the webhook-id, webhook-timestamp and webhook-signature headers as
"name: value" lines.

Options:
  --secret S       the endpoint's secret (whsec_…); give it twice to sign with
                   both keys of a rotation (two v1 entries); without it,
                   WEBHOOK_SECRET
  --id ID          the webhook-id; the body's "id" must be the same
  --timestamp N    Unix time in seconds (default: now)
  --body B         @file, - for standard input (the default), or the text itself;
                   signed byte for byte
  --curl           print the headers and content-type: application/json as -H
                   arguments for curl, on one line:
                     eval "curl -X POST URL --data-binary @event.json $(svc-webhooks sign … --curl)"

Exit status: 0 printed, 2 bad arguments.`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, options);
    noPositionals(positionals);
    const secret = secrets(values.secret);
    const id = required(values.id, 'id');
    const timestamp = values.timestamp === undefined ? Math.floor(Date.now() / 1000) : wholeNumber(values.timestamp, 'timestamp');
    const body = await readInput(values.body ?? '-', 'body', io);
    const headers = sign(body, { id, timestamp, secret });
    // The service's Content-Type too: a receiver may refuse a body curl would label form data.
    if (values.curl) io.out(curlArguments({ 'content-type': 'application/json', ...headers }));
    else for (const line of headerLines(headers)) io.out(line);
    return EXIT.ok;
  },
};

/**
 * `svc-webhooks send`: signs one event and delivers it to a receiver as the service does, and reports each
 * attempt.
 */
import { sign } from '../../core/sign.js';
import { isRecord } from '../../base/record.js';
import { onePositional, parseCommandArgs, receiverUrl, secrets, UsageError, wholeNumber } from '../shared/args.js';
import { EXIT, type Command } from '../shared/command.js';
import { deliver, delivered, describeAttempt, SERVICE_TIMING, type DeliveryTiming } from '../../testing/delivery.js';
import { defaultData, eventEnvelope, newId } from '../../testing/envelope.js';
import { readInput } from '../shared/input.js';
import type { CliIO } from '../shared/io.js';
import { printable } from '../../base/printable.js';
import { contractWarnings } from './contract-check.js';

const options = {
  secret: { type: 'string', multiple: true },
  type: { type: 'string' },
  data: { type: 'string' },
  id: { type: 'string' },
  retries: { type: 'string' },
  contract: { type: 'string' },
} as const;

const BACKOFF_MS = 1000;

export const sendCommand = {
  name: 'send',
  summary: 'sign and deliver one event to a receiver, as the service does',
  help: `Usage: svc-webhooks send <url> --secret S [--type T] [--data JSON|@file] [--id ID] [--retries N] [--contract FILE]

Signs one event and POSTs it to <url> the way the service does: the
webhook-id, webhook-timestamp and webhook-signature headers, and a JSON
envelope {"id", "type", "timestamp", "data"} whose id is the webhook-id.
An attempt fails unless a 2xx arrives within 10 seconds; a failed attempt is
retried after 1 s, 2 s, 4 s … (30 s at most) with the same webhook-id, signed
again at the time of sending. Prints one line per attempt: status, error code
of a JSON answer, latency.

Options:
  --secret S    the endpoint's secret (whsec_…); give it twice to sign with both;
                without it, WEBHOOK_SECRET
                keys of a rotation
  --type T      the event type (default: webhook.test)
  --data D      the envelope's "data", as JSON or @file
                (default: {"object": {"id": "obj_…"}})
  --id ID       the event id and webhook-id (default: a new msg_… id)
  --retries N   how many times a failed attempt is retried (default: 0)
  --contract F  the service's OpenAPI contract: warns, and still sends, when it
                does not describe the type or the event does not fit its
                schema (needs the peers of svc-webhooks types --schemas)

Exit status: 0 delivered, 1 no 2xx after the last attempt, 2 bad arguments.`,
  /** `timing` is the service's unless a test shortens it. */
  async run(args: readonly string[], io: CliIO, timing: DeliveryTiming = SERVICE_TIMING): Promise<number> {
    const { values, positionals } = parseCommandArgs(args, options);
    const url = receiverUrl(onePositional(positionals, '<url>'));
    const secret = secrets(values.secret);
    const type = values.type ?? 'webhook.test';
    const id = values.id ?? newId('msg');
    const retries = values.retries === undefined ? 0 : wholeNumber(values.retries, 'retries');
    const data = values.data === undefined ? defaultData() : await readData(values.data, io);
    const body = eventEnvelope(id, type, data);
    if (values.contract !== undefined) {
      for (const warning of await contractWarnings(values.contract, type, JSON.parse(body))) io.err(`svc-webhooks send: warning: ${printable(warning, 400)}`);
    }

    io.out(`${type} ${id} -> ${url}`);
    const attempts = await deliver({
      url,
      body,
      headers: () => ({ 'content-type': 'application/json', ...sign(body, { id, timestamp: Math.floor(Date.now() / 1000), secret }) }),
      retries,
      backoffMs: BACKOFF_MS,
      timing,
      onAttempt(attempt, number, nextInMs) {
        const next = nextInMs === undefined ? '' : `, retrying in ${nextInMs / 1000} s`;
        io.out(`attempt ${number}: ${describeAttempt(attempt)}${next}`);
      },
    });
    if (delivered(attempts.at(-1)!)) return EXIT.ok;
    io.err(`svc-webhooks send: not delivered: no 2xx within ${timing.answerWindowMs / 1000} s in ${attempts.length} attempt(s)`);
    return EXIT.failed;
  },
} satisfies Command;

async function readData(spec: string, io: CliIO): Promise<unknown> {
  let data: unknown;
  try {
    data = JSON.parse((await readInput(spec, 'data', io)).toString('utf8'));
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError('--data is not JSON');
  }
  if (!isRecord(data)) throw new UsageError('--data must be a JSON object');
  const object = (data as { object?: { id?: unknown } }).object;
  // Receivers built on this library refuse an envelope without data.object.id; say so rather than send it silently.
  if (typeof object?.id !== 'string') io.err('svc-webhooks send: warning: --data has no string "object.id" (spec section 2)');
  return data;
}

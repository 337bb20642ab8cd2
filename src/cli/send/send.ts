/**
 * `svc-webhooks send`: signs one event and delivers it to a receiver as the service does, in one copy or
 * several at once, its body as signed or changed after signing, and reports each attempt as it ends.
 */
import { sign } from '../../core/sign.js';
import { isRecord } from '../../base/record.js';
import { onePositional, parseCommandArgs, receiverUrl, secrets, UsageError, wholeNumber } from '../shared/args.js';
import { EXIT, type Command } from '../shared/command.js';
import { deliver, delivered, describeAttempt, SERVICE_TIMING, type Attempt, type DeliveryTiming } from '../../testing/delivery.js';
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
  copies: { type: 'string' },
  tamper: { type: 'boolean' },
  contract: { type: 'string' },
} as const;

const BACKOFF_MS = 1000;
/** The most copies sent at once: enough to race a receiver's claim, too few to load it. */
export const MAX_COPIES = 100;

export const sendCommand = {
  name: 'send',
  summary: 'sign and deliver one event to a receiver, as the service does',
  help: `Usage: svc-webhooks send <url> --secret S [--type T] [--data JSON|@file] [--id ID] [--retries N] [--copies N] [--tamper] [--contract FILE]

Signs one event and POSTs it to <url> the way the service does: the
webhook-id, webhook-timestamp and webhook-signature headers, and a JSON
envelope {"id", "type", "timestamp", "data"} whose id is the webhook-id.
An attempt fails unless a 2xx arrives within 10 seconds; a failed attempt is
retried after 1 s, 2 s, 4 s … (30 s at most) with the same webhook-id, signed
again at the time of sending. Prints one line per attempt as it ends: status,
error code of a JSON answer, latency.

Options:
  --secret S    the endpoint's secret (whsec_…); give it twice to sign with both
                keys of a rotation; without it, WEBHOOK_SECRET
  --type T      the event type (default: webhook.test)
  --data D      the envelope's "data", as JSON or @file
                (default: {"object": {"id": "obj_…"}})
  --id ID       the event id and webhook-id (default: a new msg_… id)
  --retries N   how many times a failed attempt is retried (default: 0)
  --copies N    send N identical copies at once, each retried on its own, as
                the service may (1 to ${MAX_COPIES}; default: 1)
  --tamper      change the body after signing it: a receiver must refuse it
                with a 4xx, and the command exits 0 when every copy was
                refused so (each copy is sent once: no --retries)
  --contract F  the service's OpenAPI contract: warns, and still sends, when it
                does not describe the type or the event does not fit its
                schema (needs the peers of svc-webhooks types --schemas)

Exit status: 0 delivered (--tamper: refused), 1 not, 2 bad arguments.`,
  /** `timing` is the service's unless a test shortens it. */
  async run(args: readonly string[], io: CliIO, timing: DeliveryTiming = SERVICE_TIMING): Promise<number> {
    const { values, positionals } = parseCommandArgs(args, options);
    const url = receiverUrl(onePositional(positionals, '<url>'));
    const secret = secrets(values.secret);
    const type = values.type ?? 'webhook.test';
    const id = values.id ?? newId('msg');
    const retries = values.retries === undefined ? 0 : wholeNumber(values.retries, 'retries');
    const copies = values.copies === undefined ? 1 : wholeNumber(values.copies, 'copies', 1, MAX_COPIES);
    const tamper = values.tamper === true;
    // The service retries what is refused; a refusal is what a changed body is sent for.
    if (tamper && retries > 0) throw new UsageError('--tamper sends each copy once: it takes no --retries');
    const data = values.data === undefined ? defaultData() : await readData(values.data, io);
    const body = eventEnvelope(id, type, data);
    if (values.contract !== undefined) {
      for (const warning of await contractWarnings(values.contract, type, JSON.parse(body))) io.err(`svc-webhooks send: warning: ${printable(warning, 400)}`);
    }

    const how = [tamper ? 'body changed after signing' : '', copies > 1 ? `${copies} copies at once` : ''].filter(Boolean).join(', ');
    io.out(`${type} ${id} -> ${url}${how === '' ? '' : ` (${how})`}`);
    const signed = (): Record<string, string> => ({ 'content-type': 'application/json', ...sign(body, { id, timestamp: Math.floor(Date.now() / 1000), secret }) });
    // Every copy's first attempt carries the same headers; a retry is signed again at its own time.
    const first = signed();
    const sent = tamper ? changedBody(body) : body;
    const deliveries = await Promise.all(
      Array.from({ length: copies }, (_, copy) => {
        let firstSent = false;
        return deliver({
          url,
          body: sent,
          headers() {
            if (firstSent) return signed();
            firstSent = true;
            return first;
          },
          retries,
          backoffMs: BACKOFF_MS,
          timing,
          onAttempt(attempt, number, nextInMs) {
            const next = nextInMs === undefined ? '' : `, retrying in ${nextInMs / 1000} s`;
            io.out(`${copies === 1 ? '' : `copy ${copy + 1}, `}attempt ${number}: ${describeAttempt(attempt)}${next}`);
          },
        });
      }),
    );
    const lasts = deliveries.map((attempts) => attempts.at(-1)!);
    return tamper ? tamperVerdict(lasts, io) : deliveryVerdict(deliveries, io);
  },
} satisfies Command;

/** The envelope with a field added to its data: what a receiver gets when the body was changed after signing. */
function changedBody(body: string): string {
  const event = JSON.parse(body) as { data: Record<string, unknown> };
  return JSON.stringify({ ...event, data: { ...event.data, tampered: true } });
}

/** Exit 0 when every copy ended in a 2xx; else one line: what the last attempt got, or how many copies got no 2xx. */
function deliveryVerdict(deliveries: readonly Attempt[][], io: CliIO): number {
  const missed = deliveries.filter((attempts) => !delivered(attempts.at(-1)!));
  if (missed.length === 0) return EXIT.ok;
  // What the last attempt got, a refusal included: a 422 in 49 ms is no timeout.
  if (deliveries.length === 1) {
    io.err(`svc-webhooks send: not delivered in ${missed[0]!.length} attempt(s): the last got ${describeAttempt(missed[0]!.at(-1)!)}`);
  } else {
    io.err(`svc-webhooks send: not delivered: ${missed.length} of ${deliveries.length} copies got no 2xx`);
  }
  return EXIT.failed;
}

/** Exit 0 when every copy of a changed body was refused with a 4xx, as a receiver that checks signatures does. */
function tamperVerdict(lasts: readonly Attempt[], io: CliIO): number {
  const missed = lasts.filter((attempt) => !(attempt.status !== undefined && attempt.status >= 400 && attempt.status < 500));
  if (missed.length === 0) {
    io.out('refused: the receiver did not accept the body changed after signing');
    return EXIT.ok;
  }
  const got = lasts.length === 1 ? describeAttempt(lasts[0]!) : `no 4xx for ${missed.length} of ${lasts.length} copies (${lasts.filter(delivered).length} accepted)`;
  io.err(`svc-webhooks send: not refused: the body changed after signing got ${got}, where a receiver that checks signatures answers a 4xx`);
  return EXIT.failed;
}

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

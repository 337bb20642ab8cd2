/**
 * Receivers written without this library (node:http and node:crypto only),
 * each right but for at most one fault, for `check` to grade.
 */
import { Buffer } from 'node:buffer';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, listen } from '../helpers/http-harness.js';

export interface Faults {
  /** Answers 204 to every POST and verifies nothing. */
  readonly acceptsEverything?: boolean;
  /** Verifies the signature but never compares the timestamp with its clock. */
  readonly ignoresTimestamp?: boolean;
  /** Refuses a timestamp too far behind its clock, but not one ahead of it. */
  readonly acceptsFutureTimestamps?: boolean;
  /** Compares only the first entry of webhook-signature, so a rotation's second key is refused. */
  readonly checksFirstSignatureOnly?: boolean;
  /** Answers 409 to a webhook-id it has already answered 2xx, instead of 2xx again. */
  readonly refusesRedeliveries?: boolean;
  /** Answers 503 to the first verified delivery of each webhook-id, as when its store is briefly down. */
  readonly failsFirstAttempts?: boolean;
  /** Answers 500 to an event type outside the spec's list. */
  readonly failsUnknownTypes?: boolean;
  /** Answers a verified event only after this many milliseconds. */
  readonly answersAfterMs?: number;
}

const KNOWN_TYPES = ['call.missed', 'message.received', 'webhook.test', 'transcript.ready', 'ai_summary.ready'];

export interface HandWrittenReceiver {
  readonly url: string;
  close(): Promise<void>;
}

export async function startHandWrittenReceiver(secret: string, faults: Faults = {}): Promise<HandWrittenReceiver> {
  const key = secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8');
  const answered = new Set<string>();
  const seen = new Set<string>();
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    if (faults.acceptsEverything) return answer(res, 204);
    const refusal = refusalOf(req, body, key, faults);
    if (refusal !== undefined) return answer(res, 400, refusal);
    const { id, type } = JSON.parse(body.toString('utf8')) as { id: string; type: string };
    if (faults.failsUnknownTypes && !KNOWN_TYPES.includes(type)) return answer(res, 500, 'unknown_type');
    if (faults.failsFirstAttempts && !seen.has(id)) {
      seen.add(id);
      return answer(res, 503, 'store_unavailable');
    }
    if (faults.refusesRedeliveries && answered.has(id)) return answer(res, 409, 'already_processed');
    answered.add(id);
    if (faults.answersAfterMs === undefined) return answer(res, 204);
    const timer = setTimeout(() => answer(res, 204), faults.answersAfterMs);
    res.on('close', () => clearTimeout(timer));
  });
  const base = await listen(server);
  return { url: `${base}/webhooks`, close: () => closeServer(server) };
}

/** Why the request must be refused, or undefined if it verifies. */
function refusalOf(req: IncomingMessage, body: Buffer, key: Buffer, faults: Faults): string | undefined {
  const id = req.headers['webhook-id'];
  const timestamp = req.headers['webhook-timestamp'];
  const signatures = req.headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return 'missing_header';
  const behind = Date.now() / 1000 - Number(timestamp);
  const skew = faults.acceptsFutureTimestamps ? behind : Math.abs(behind);
  if (!faults.ignoresTimestamp && !(skew <= 300)) return 'stale_timestamp';
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
  const entries = signatures.split(' ');
  const matches = (faults.checksFirstSignatureOnly ? entries.slice(0, 1) : entries).some((entry) => {
    const given = Buffer.from(entry.slice(3), 'base64');
    return entry.startsWith('v1,') && given.length === expected.length && timingSafeEqual(given, expected);
  });
  return matches ? undefined : 'invalid_signature';
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function answer(res: ServerResponse, status: number, code?: string): void {
  if (code === undefined) res.writeHead(status).end();
  else res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code } }));
}

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
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    if (faults.acceptsEverything) return answer(res, 204);
    const refusal = refusalOf(req, body, key, faults);
    if (refusal !== undefined) return answer(res, 400, refusal);
    const { type } = JSON.parse(body.toString('utf8')) as { type: string };
    if (faults.failsUnknownTypes && !KNOWN_TYPES.includes(type)) return answer(res, 500, 'unknown_type');
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
  if (!faults.ignoresTimestamp && !(Math.abs(Date.now() / 1000 - Number(timestamp)) <= 300)) return 'stale_timestamp';
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
  const matches = signatures.split(' ').some((entry) => {
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

/**
 * A recorded delivery made ready to send again, in one of three modes:
 * `exact` sends the bytes and headers as they came (a receiver refuses them
 * as too old once the 5 minutes of tolerance are past, by design);
 * `resign` signs the same body and id at the time of sending (a receiver
 * with deduplication answers it as a duplicate); `new-id` gives the event a
 * new id in the body and the header and signs it (the handler runs again).
 */
import { Buffer } from 'node:buffer';
import { isRecord } from '../../base/record.js';
import { sign } from '../../core/sign.js';
import { newId } from '../../testing/envelope.js';
import { UsageError } from './args.js';

/** How a replay sends a recorded delivery again. */
export type ReplayMode = 'exact' | 'resign' | 'new-id';

export const REPLAY_MODES: readonly ReplayMode[] = ['exact', 'resign', 'new-id'];

/** A request to send: lower-case header names, and the body's bytes. */
export interface OutgoingRequest {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

// Headers of the hop that carried the request, not of the request: never sent on.
const HOP_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade', 'expect', 'te', 'trailer', 'proxy-connection']);

/** `headers` without those of the hop that carried them, those its `Connection` header names included. */
export function endToEndHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const named = new Set((headers.connection ?? '').split(',').map((name) => name.trim().toLowerCase()));
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_HEADERS.has(name) && !named.has(name)));
}

/** `request` as `mode` sends it again, signed with `secrets` at `nowMs` unless exact. Throws `UsageError` when the mode cannot apply. */
export function replayedRequest(request: OutgoingRequest, mode: ReplayMode, secrets: readonly string[], nowMs = Date.now()): OutgoingRequest {
  const headers = endToEndHeaders(request.headers);
  if (mode === 'exact') return { headers, body: request.body };
  let { body } = request;
  let id = headers['webhook-id'];
  if (mode === 'new-id') {
    const event = envelopeOf(body);
    id = newId('msg', nowMs);
    body = Buffer.from(JSON.stringify({ ...event, id }));
  }
  if (id === undefined || id === '') throw new UsageError(`${mode} needs the recorded webhook-id, and this delivery has none`);
  return { headers: { ...headers, ...sign(body, { id, timestamp: Math.floor(nowMs / 1000), secret: [...secrets] }) }, body };
}

function envelopeOf(body: Buffer): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    // No JSON: refused below, as anything but an object is.
  }
  if (!isRecord(parsed)) throw new UsageError('new-id needs a body that is a JSON object, to give it a new id');
  return parsed;
}

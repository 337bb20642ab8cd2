/**
 * Forwarding one delivery to the receiver byte for byte, as one attempt of
 * the service's (the same code as `svc-webhooks send`), and keeping its
 * answer: the status, at most 64 KiB of the body, the latency, and the
 * receiver's own verdict when it sends one. A receiver that is down or
 * slow is an answer too: `connection failed (ECONNREFUSED)`, `no answer
 * within 10 s`.
 */
import { Buffer } from 'node:buffer';
import { parseOutcome } from '../../core/outcome-header.js';
import { MAX_ANSWER_BYTES, postWithAnswer } from '../../testing/delivery.js';
import type { OutgoingRequest } from '../shared/replayed-request.js';
import type { RecordedAnswer } from './delivery-log.js';

/** Sends `request` to `url`; never throws. Gives up after `answerWindowMs`, as the service does. */
export async function forward(url: string, request: OutgoingRequest, answerWindowMs: number): Promise<RecordedAnswer> {
  const { attempt, answer } = await postWithAnswer(url, request.body, request.headers, answerWindowMs);
  const { ms: latencyMs, status, failure } = attempt;
  const outcome = attempt.outcome === undefined ? undefined : parseOutcome(attempt.outcome);
  return {
    latencyMs,
    ...(status !== undefined && { status, body: answer ?? '' }),
    ...(answer !== undefined && Buffer.byteLength(answer) >= MAX_ANSWER_BYTES && { truncated: true }),
    ...(outcome !== undefined && { outcome }),
    ...(failure !== undefined && { failure }),
  };
}

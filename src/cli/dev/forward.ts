/**
 * Forwarding one delivery to the receiver byte for byte, and keeping its
 * answer: the status, at most 64 KiB of the body, the latency, and the
 * receiver's own verdict when it sends one. A receiver that is down or
 * slow is an answer too: `connection failed (ECONNREFUSED)`, `no answer
 * within 10 s`. On node:http with a keep-alive agent of the relay's: a
 * hop through fetch cost about 0.35 ms more on loopback.
 */
import { Buffer } from 'node:buffer';
import { request as httpRequest, type Agent, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { OUTCOME_HEADER, parseOutcome } from '../../core/outcome-header.js';
import { MAX_ANSWER_BYTES } from '../../testing/delivery.js';
import { printable } from '../../testing/printable.js';
import type { OutgoingRequest } from '../shared/replayed-request.js';
import type { RecordedAnswer } from './delivery-log.js';

/** The relay's connections to the receiver, kept open between deliveries: one agent per scheme. */
export interface ForwardAgents {
  readonly http: Agent;
  readonly https: Agent;
}

/** Sends `request` to `url`; never rejects. Gives up after `answerWindowMs`, as the service does, keeping a status that came in time. */
export function forward(url: URL, request: OutgoingRequest, answerWindowMs: number, agents: ForwardAgents): Promise<RecordedAnswer> {
  const started = performance.now();
  const latencyMs = (): number => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let response: IncomingMessage | undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    const answered = (): void => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES).toString('utf8');
      const header = response!.headers[OUTCOME_HEADER];
      const outcome = typeof header === 'string' ? parseOutcome(header) : undefined;
      resolve({ latencyMs: latencyMs(), status: response!.statusCode!, body: text, ...(size > MAX_ANSWER_BYTES && { truncated: true }), ...(outcome !== undefined && { outcome }) });
    };
    const https = url.protocol === 'https:';
    const outgoing = (https ? httpsRequest : httpRequest)(
      url,
      { method: 'POST', headers: { ...request.headers, 'content-length': String(request.body.length) }, agent: https ? agents.https : agents.http },
      (incoming) => {
        response = incoming;
        incoming.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          // Past the bound, the rest is not waited for.
          if (size > MAX_ANSWER_BYTES) incoming.destroy();
        });
        incoming.on('end', answered);
        incoming.on('close', answered);
      },
    );
    const timer = setTimeout(() => {
      if (response !== undefined) answered();
      else resolve({ latencyMs: latencyMs(), failure: `no answer within ${answerWindowMs / 1000} s` });
      outgoing.destroy();
    }, answerWindowMs);
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      // An answer that came, then broke off, is still the answer.
      if (response !== undefined) return answered();
      resolve({ latencyMs: latencyMs(), failure: `connection failed (${printable(String(error.code ?? error.message))})` });
    });
    outgoing.end(request.body);
  });
}

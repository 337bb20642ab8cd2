/**
 * Forwarding one delivery to the receiver byte for byte, and keeping its
 * answer: the status, at most 64 headers of at most 8 KiB in all, at most
 * 64 KiB of the body, the latency, and the receiver's own verdict when it
 * sends one. A receiver that is down or
 * slow is an answer too: `connection failed (ECONNREFUSED)`, `no answer
 * within 10 s`. The sender gets the answer's status, bytes (as far as
 * kept), type, `Retry-After` and verdict. On node:http with a keep-alive
 * agent of the relay's: a hop through fetch cost about 0.35 ms more on
 * loopback.
 */
import { Buffer } from 'node:buffer';
import { request as httpRequest, type Agent, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { OUTCOME_HEADER, parseOutcome } from '../../core/outcome-header.js';
import { MAX_ANSWER_BYTES } from '../../testing/delivery.js';
import { printable } from '../../base/printable.js';
import type { OutgoingRequest } from '../shared/replayed-request.js';
import type { RecordedAnswer } from './delivery-log.js';

/** The relay's connections to the receiver, kept open between deliveries: one agent per scheme. */
export interface ForwardAgents {
  readonly http: Agent;
  readonly https: Agent;
}

/** The receiver's answer as the relay hands it back to the sender: its status, its headers that say something to a sender, and its bytes (at most 64 KiB). */
export interface PassedAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** What a forward led to: the answer as recorded, and as passed back when one came. */
export interface Forwarded {
  readonly answer: RecordedAnswer;
  readonly passOn?: PassedAnswer;
}

/** The most headers of an answer the relay keeps, and the most characters of their names and values in all: the rest are counted. */
export const ANSWER_HEADER_BOUNDS = { count: 64, chars: 8 * 1024 } as const;

// Headers of an answer that tell the sender something: what the body is, when to retry, the receiver's verdict.
const PASSED_HEADERS = ['content-type', 'retry-after', OUTCOME_HEADER] as const;

/**
 * Sends `request` to `url`; never rejects. Gives up after `answerWindowMs`, as the service does, keeping a status
 * that came in time. A kept-alive connection the receiver closed as it was reused is tried again once, on a new one.
 */
export async function forward(url: URL, request: OutgoingRequest, answerWindowMs: number, agents: ForwardAgents): Promise<Forwarded> {
  const started = performance.now();
  const first = await attempt(url, request, answerWindowMs, agents, started);
  return first === 'reset on reuse' ? ((await attempt(url, request, answerWindowMs, agents, started)) as Forwarded) : first;
}

function attempt(url: URL, request: OutgoingRequest, answerWindowMs: number, agents: ForwardAgents, started: number): Promise<Forwarded | 'reset on reuse'> {
  const latencyMs = (): number => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let response: IncomingMessage | undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    const answered = (): void => {
      clearTimeout(timer);
      const bytes = Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES);
      const incoming = response!.headers;
      const header = incoming[OUTCOME_HEADER];
      const outcome = typeof header === 'string' ? parseOutcome(header) : undefined;
      const headers = Object.fromEntries(PASSED_HEADERS.flatMap((name) => (typeof incoming[name] === 'string' ? [[name, incoming[name]]] : [])));
      const status = response!.statusCode!;
      const answer = {
        latencyMs: latencyMs(),
        status,
        ...keptHeaders(response!.rawHeaders),
        body: bytes.toString('utf8'),
        ...(size > MAX_ANSWER_BYTES && { truncated: true }),
        ...(outcome !== undefined && { outcome }),
      };
      resolve({ answer, passOn: { status, headers, body: bytes } });
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
      else resolve({ answer: { latencyMs: latencyMs(), failure: `no answer within ${answerWindowMs / 1000} s` } });
      outgoing.destroy();
    }, answerWindowMs);
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      // An answer that came, then broke off, is still the answer.
      if (response !== undefined) return answered();
      // A receiver that closes idle connections without saying how soon (Go, uvicorn) can close one just as it is reused.
      if (outgoing.reusedSocket && error.code === 'ECONNRESET') return resolve('reset on reuse');
      resolve({ answer: { latencyMs: latencyMs(), failure: `connection failed (${printable(String(error.code ?? error.message))})` } });
    });
    outgoing.end(request.body);
  });
}

/** The answer's headers as they came (names in their case, in order, repeats kept) within `ANSWER_HEADER_BOUNDS`, and how many were left out. */
function keptHeaders(raw: readonly string[]): Pick<RecordedAnswer, 'headers' | 'headersLeftOut'> {
  const headers: Array<[string, string]> = [];
  let chars = 0;
  let leftOut = 0;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const [name, value] = [raw[i]!, raw[i + 1]!];
    if (headers.length < ANSWER_HEADER_BOUNDS.count && chars + name.length + value.length <= ANSWER_HEADER_BOUNDS.chars) {
      headers.push([name, value]);
      chars += name.length + value.length;
    } else leftOut += 1;
  }
  return leftOut === 0 ? { headers } : { headers, headersLeftOut: leftOut };
}

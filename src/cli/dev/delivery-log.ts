/**
 * What `svc-webhooks dev` keeps of each delivery through its relay: the
 * request as it came, the relay's own verdict, and the receiver's answer.
 * Bounded: the last 500 records or 50 MiB, whichever comes first; the
 * oldest go, and the log counts them.
 */
import type { OutcomeReport } from '../../core/outcome-header.js';
import type { ReplayMode } from '../shared/replayed-request.js';

/** The request as the relay received it (or built it, for a replay or a send). */
export interface RecordedRequest {
  /** Lower-case header names, each value as received (several joined with `, `). */
  readonly headers: Readonly<Record<string, string>>;
  /** The body's bytes, in base64: byte for byte, whatever they hold. */
  readonly bodyBase64: string;
}

/** The relay's verdict, as `svc-webhooks verify` gives it. */
export interface RelayVerdict {
  /** Whether the request verifies with the relay's secrets. */
  readonly valid: boolean;
  /** The refusal's code when it does not. */
  readonly code?: string;
  /** `verify`'s lines: the verdict, its cause, the timestamp against the clock. */
  readonly lines: readonly string[];
}

/** The receiver's answer, or why none came. */
export interface RecordedAnswer {
  /** Milliseconds from forwarding to the end of the answer, or to giving up. */
  readonly latencyMs: number;
  /** The HTTP status; absent when no answer came. */
  readonly status?: number;
  /** The answer's headers as they came, names in their case, in order: at most 64, of at most 8 KiB of names and values in all. */
  readonly headers?: ReadonlyArray<readonly [name: string, value: string]>;
  /** How many headers past those bounds were left out. */
  readonly headersLeftOut?: number;
  /** At most 64 KiB of the answer's body, as UTF-8 text. */
  readonly body?: string;
  /** Whether the body was cut at 64 KiB. */
  readonly truncated?: boolean;
  /** The receiver's verdict, from its `svc-webhooks-outcome` header (`outcomeHeader: 'on'`). */
  readonly outcome?: OutcomeReport;
  /** Why no answer came: `connection failed (ECONNREFUSED)`, `no answer within 10 s`, … */
  readonly failure?: string;
}

/** One delivery through the relay. */
export interface DeliveryRecord {
  /** Its number in this run, from 1. */
  readonly n: number;
  /** When the relay received it, as an ISO 8601 time. */
  readonly receivedAt: string;
  /** Where it came from: a sender (the tunnel, `svc-webhooks send`), a replay of record `replayOf`, or the page's send. */
  readonly source: 'sender' | 'replay' | 'send';
  readonly replayOf?: number;
  /** The replay's mode. */
  readonly mode?: ReplayMode;
  /** The envelope's id and type, when the body is one. */
  readonly event?: { readonly id: string; readonly type: string };
  readonly request: RecordedRequest;
  readonly verdict: RelayVerdict;
  readonly answer: RecordedAnswer;
}

/** The log's bounds. */
export interface LogBounds {
  readonly maxRecords: number;
  readonly maxBytes: number;
}

export const DEFAULT_BOUNDS: LogBounds = { maxRecords: 500, maxBytes: 50 * 1024 * 1024 };

/** What the page and `GET /api/deliveries` list: a record without its bytes. */
export interface RecordSummary {
  readonly n: number;
  readonly receivedAt: string;
  readonly source: DeliveryRecord['source'];
  readonly replayOf?: number;
  readonly mode?: ReplayMode;
  readonly event?: DeliveryRecord['event'];
  readonly valid: boolean;
  readonly code?: string;
  readonly status?: number;
  readonly outcome?: OutcomeReport;
  readonly failure?: string;
  readonly latencyMs: number;
}

/** The records of one run, newest last, within `bounds`. */
export class DeliveryLog {
  private readonly records: Array<{ record: DeliveryRecord; bytes: number }> = [];
  private bytes = 0;
  private next = 1;
  /** How many records the bounds made it drop. */
  dropped = 0;

  constructor(private readonly bounds: LogBounds = DEFAULT_BOUNDS) {}

  /** The number the next record gets. */
  take(): number {
    return this.next++;
  }

  /** Keeps `record`, dropping the oldest past the bounds. */
  add(record: DeliveryRecord): void {
    const bytes = sizeOf(record);
    this.records.push({ record, bytes });
    this.bytes += bytes;
    while (this.records.length > this.bounds.maxRecords || (this.bytes > this.bounds.maxBytes && this.records.length > 1)) {
      this.bytes -= this.records.shift()!.bytes;
      this.dropped += 1;
    }
  }

  /** Forgets every record, and those it dropped; numbers go on from where they were. */
  clear(): void {
    this.records.length = 0;
    this.bytes = 0;
    this.dropped = 0;
  }

  /** The record numbered `n`, while kept. */
  get(n: number): DeliveryRecord | undefined {
    return this.records.find(({ record }) => record.n === n)?.record;
  }

  /** Every kept record's summary, newest first. */
  summaries(): RecordSummary[] {
    return this.records.map(({ record }) => summaryOf(record)).reverse();
  }

  /** The bytes the kept records hold, as the bounds count them. */
  get size(): number {
    return this.bytes;
  }
}

/** What the list shows of `record`. */
export function summaryOf(record: DeliveryRecord): RecordSummary {
  const { n, receivedAt, source, replayOf, mode, event, verdict, answer } = record;
  return {
    n,
    receivedAt,
    source,
    ...(replayOf !== undefined && { replayOf, mode }),
    ...(event !== undefined && { event }),
    valid: verdict.valid,
    ...(verdict.code !== undefined && { code: verdict.code }),
    ...(answer.status !== undefined && { status: answer.status }),
    ...(answer.outcome !== undefined && { outcome: answer.outcome }),
    ...(answer.failure !== undefined && { failure: answer.failure }),
    latencyMs: answer.latencyMs,
  };
}

// The bodies dominate; the request's and the answer's headers, the envelope's id and type and the rest are counted at their JSON length.
function sizeOf(record: DeliveryRecord): number {
  const { request, answer, event } = record;
  return (
    request.bodyBase64.length +
    (answer.body?.length ?? 0) +
    JSON.stringify(request.headers).length +
    JSON.stringify(answer.headers ?? []).length +
    JSON.stringify(event ?? {}).length +
    512
  );
}

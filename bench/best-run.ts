/**
 * The best of interleaved runs of an HTTP case: other load on the machine
 * only ever slows a run, so each figure keeps its best, each apart.
 */

/** One run of a case: the answers' latency in ms, the requests a second, the server's CPU per request in µs. */
export interface HttpRun {
  readonly p50: number;
  readonly p99: number;
  readonly perSecond: number;
  readonly cpuPerRequest: number;
}

/** A run no real run is worse than. */
export const WORST_RUN: HttpRun = { p50: Infinity, p99: Infinity, perSecond: 0, cpuPerRequest: Infinity };

/** The best of each figure of `kept` and `run`. */
export function bestOf<R extends HttpRun>(kept: R, run: R): HttpRun {
  return {
    p50: Math.min(kept.p50, run.p50),
    p99: Math.min(kept.p99, run.p99),
    perSecond: Math.max(kept.perSecond, run.perSecond),
    cpuPerRequest: Math.min(kept.cpuPerRequest, run.cpuPerRequest),
  };
}

/**
 * The `svc-webhooks-outcome` header: a receiver's own verdict on a delivery,
 * for tools that see only the answer (`svc-webhooks send`, a relay in front
 * of the receiver). An entry adds it, with `outcomeHeader: 'on'`, to every
 * answer it makes itself. Its value is the outcome, then `name=value`
 * parameters whose values are percent-encoded:
 * `processed; handler-ms=12; key-id=k2025; tenant=acme`.
 */

/** The header's name, in lower case. */
export const OUTCOME_HEADER = 'svc-webhooks-outcome';

/** What the header says. */
export interface OutcomeReport {
  /** `processed`, `queued`, `duplicate`, `in_progress`, `failed`, `unhandled`, or a refusal's code. */
  readonly outcome: string;
  /** How long the user's code ran, in whole milliseconds; absent when none ran. */
  readonly handlerMs?: number;
  /** The id of the secret that verified the delivery; absent for a request that failed verification. */
  readonly keyId?: string;
  /** The tenant of a verified delivery to a receiver of many. */
  readonly tenant?: string;
}

const PARAMETERS = [
  ['handler-ms', 'handlerMs'],
  ['key-id', 'keyId'],
  ['tenant', 'tenant'],
] as const;

/** The header's value for `report`. */
export function formatOutcome(report: OutcomeReport): string {
  let value = report.outcome;
  for (const [name, field] of PARAMETERS) {
    const one = report[field];
    // Percent-encoded: a tenant comes from the request's path and may hold anything a header may not.
    if (one !== undefined) value += `; ${name}=${encodeURIComponent(one)}`;
  }
  return value;
}

/** What a header's value says, or `undefined` when it is not one this format gives. */
export function parseOutcome(value: string): OutcomeReport | undefined {
  const [outcome, ...parts] = value.split(';').map((part) => part.trim());
  if (outcome === undefined || !/^[a-z_]+$/.test(outcome)) return undefined;
  const report: { -readonly [K in keyof OutcomeReport]: OutcomeReport[K] } = { outcome };
  for (const part of parts) {
    const equals = part.indexOf('=');
    const parameter = PARAMETERS.find(([name]) => name === part.slice(0, equals));
    // The first of a repeated parameter is the one the receiver wrote: a value cannot be overridden after it.
    if (equals < 0 || parameter === undefined || report[parameter[1]] !== undefined) continue;
    let decoded: string;
    try {
      decoded = decodeURIComponent(part.slice(equals + 1));
    } catch {
      return undefined;
    }
    if (parameter[1] === 'handlerMs') {
      // Whole milliseconds, as many digits as stay exact.
      if (!/^\d{1,15}$/.test(decoded)) return undefined;
      report.handlerMs = Number(decoded);
    } else report[parameter[1]] = decoded;
  }
  return report;
}

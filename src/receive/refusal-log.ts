/**
 * The log lines of refused requests: at most one line per refusal code a
 * minute, each counting the refusals of its code it left out. A secret
 * rotated wrong is heard at its first refusal, and a flood of forged requests
 * writes no more than a line a minute per code. Kept per receiver, by code
 * alone: a fixed set, nothing a sender chooses.
 */
import { lineDue, quoted, writeLog, type QuietSpell, type WebhookLogCode, type WebhookLogger } from '../base/logger.js';
import { WebhookBodyError, WebhookTenantError, WebhookVerificationError, type WebhookError } from '../core/errors.js';

/** How long the log stays quiet about a refusal code after a line about it. */
export const REFUSAL_LOG_INTERVAL_MS = 60_000;

/** Logs a refusal; `idOf` reads the request's `webhook-id`, only for a line written. */
export type RefusalLog = (refusal: WebhookError, idOf: () => string | undefined) => void;

/**
 * The log of a receiver's refusals, to `logger` by its clock `now`: a warning (an error for a 5xx, a setup
 * mistake) naming the code, the status, the refusal's message (fixed, never a secret, a signature or the body)
 * and the request's `webhook-id`, as sent. The refusals of the request's own checks, its body, its headers,
 * its signature, its envelope and its tenant, are logged; a failed secret lookup and a failing store have
 * lines of their own, and a duplicate or a delivery in progress is no fault.
 */
export function refusalLog(logger: WebhookLogger, now: () => number): RefusalLog {
  const spells = new Map<WebhookLogCode, QuietSpell>();
  return (refusal, idOf) => {
    const code = loggedCode(refusal);
    if (code === undefined) return;
    const unlogged = lineDue(spells, code, now(), REFUSAL_LOG_INTERVAL_MS);
    if (unlogged === undefined) return;
    const id = idOf();
    const { name, message, status } = refusal;
    const fields = { code, ...(id !== undefined && { id }), errorClass: name, errorMessage: message, ...(unlogged > 0 && { unlogged }) };
    const request = id === undefined ? 'a request without a webhook-id' : `the request with webhook-id ${quoted(id)}`;
    const more = unlogged > 0 ? `; ${unlogged} more refused ${code} since the last line` : '';
    writeLog(logger, status >= 500 ? 'error' : 'warn', fields, `${request} was refused ${status} ${code} (${message})${more}`);
  };
}

/** The code a refusal is logged under, or `undefined` for one this log leaves out. */
function loggedCode(refusal: WebhookError): WebhookLogCode | undefined {
  if (refusal instanceof WebhookVerificationError || refusal instanceof WebhookBodyError) return refusal.code;
  return refusal instanceof WebhookTenantError && refusal.code === 'unknown_tenant' ? refusal.code : undefined;
}

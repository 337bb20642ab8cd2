/**
 * The checks `svc-webhooks check` runs against a receiver: spec sections 5
 * and 6, seen from the sender. Each sends its own new events, so they run
 * at once; each attempt is bounded by the answer window (the service's 10 s
 * unless a test shortens it).
 */
import { randomBytes } from 'node:crypto';
import { sign } from '../../core/sign.js';
import { answeredStale, deliver, delivered, describeAttempt, post, SERVICE_TIMING, type Attempt, type DeliveryTiming } from '../../testing/delivery.js';
import { defaultData, eventEnvelope, newId } from '../../testing/envelope.js';
import { HEADER_NAMES } from '../shared/header-lines.js';

/** The receiver under test. */
export interface Target {
  readonly url: string;
  readonly secret: string;
}

/** A receiver under test, and how its attempts are timed. */
interface Trial extends Target {
  readonly timing: DeliveryTiming;
}

export interface CheckOutcome {
  readonly passed: boolean;
  /**
   * Advice, not a failure: the row passes, but what the receiver did may
   * not be what its author wants (a receiver may rightly not order events).
   */
  readonly warning?: true;
  /** What happened, in a few words. */
  readonly detail: string;
}

export interface CheckResult extends CheckOutcome {
  /** A stable name, for scripts reading `--json`. */
  readonly id: string;
  /** What is expected, in plain words. */
  readonly check: string;
}

interface ReceiverCheck {
  readonly id: string;
  readonly check: string;
  run(trial: Trial): Promise<CheckOutcome>;
}

const SIX_MINUTES = 6 * 60;
// Retries of the concurrent copies: short, since each copy's rival settles in well under 10 s.
const COPY_RETRIES = 3;
const COPY_BACKOFF_MS = 500;

interface EventSpec {
  readonly id?: string;
  readonly type?: string;
  /** Seconds to move the signing time back (negative: ahead). */
  readonly ageSeconds?: number;
  /** Secrets to sign with instead of the receiver's. */
  readonly signWith?: string | readonly string[];
  /** A header to leave out. */
  readonly omit?: (typeof HEADER_NAMES)[number];
  /** Send a body other than the one signed. */
  readonly tamper?: boolean;
  /** The event's `data`. */
  readonly data?: { readonly object: { readonly id: string } };
  /** When the event happened, its envelope's `timestamp`, in milliseconds since the Unix epoch. */
  readonly happenedAtMs?: number;
}

interface SignedEvent {
  readonly body: string;
  readonly headers: () => Record<string, string>;
}

/** A new event, signed afresh (same id) each time its headers are taken. */
function signedEvent(target: Target, spec: EventSpec = {}): SignedEvent {
  const { id = newId('msg'), type = 'webhook.test', ageSeconds = 0, signWith = target.secret } = spec;
  const data = spec.data ?? defaultData();
  const body = eventEnvelope(id, type, data, spec.happenedAtMs);
  const sent = spec.tamper ? eventEnvelope(id, type, { ...data, object: { id: `${data.object.id}_changed` } }, spec.happenedAtMs) : body;
  return {
    body: sent,
    headers() {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        ...sign(body, { id, timestamp: Math.floor(Date.now() / 1000) - ageSeconds, secret: signWith }),
      };
      if (spec.omit !== undefined) delete headers[spec.omit];
      return headers;
    },
  };
}

function send(trial: Trial, event: SignedEvent): Promise<Attempt> {
  return post(trial.url, event.body, event.headers(), trial.timing.answerWindowMs);
}

async function expectAccepted(trial: Trial, spec?: EventSpec): Promise<CheckOutcome> {
  const attempt = await send(trial, signedEvent(trial, spec));
  return delivered(attempt)
    ? { passed: true, detail: `accepted: ${describeAttempt(attempt)}` }
    : { passed: false, detail: notAccepted(attempt) };
}

async function expectRefused(trial: Trial, spec: EventSpec): Promise<CheckOutcome> {
  const attempt = await send(trial, signedEvent(trial, spec));
  if (attempt.status === undefined) return { passed: false, detail: `no verdict: ${describeAttempt(attempt)}` };
  return delivered(attempt)
    ? { passed: false, detail: `accepted: ${describeAttempt(attempt)}` }
    : { passed: true, detail: `refused: ${describeAttempt(attempt)}` };
}

function notAccepted(attempt: Attempt): string {
  return attempt.status === undefined ? describeAttempt(attempt) : `refused: ${describeAttempt(attempt)}`;
}

function refusal(id: string, check: string, spec: () => EventSpec): ReceiverCheck {
  return { id, check, run: (trial) => expectRefused(trial, spec()) };
}

/**
 * Version 2 of a new object's event, then version 1, a minute older, as a
 * retry delivers it late. A receiver that orders answers the older one
 * stale; one that processes it writes an older state over a newer one. Not
 * every receiver must order (one that fetches the object, or keeps every
 * event), so what it finds is a warning.
 */
async function checkOrdering(trial: Trial): Promise<CheckOutcome> {
  const data = defaultData();
  const newerAtMs = Date.now();
  const newer = { id: newId('msg'), data, happenedAtMs: newerAtMs };
  const older = { id: newId('msg'), data, happenedAtMs: newerAtMs - 60_000 };
  const first = await send(trial, signedEvent(trial, newer));
  if (!delivered(first)) return { passed: true, warning: true, detail: `not checked: the newer event was not accepted (${notAccepted(first)})` };
  const second = await send(trial, signedEvent(trial, older));
  const answers = `newer ${describeAttempt(first)}, older ${describeAttempt(second)}`;
  if (answeredStale(second)) return { passed: true, detail: `the older event was answered stale: ${answers}` };
  if (delivered(second)) {
    return { passed: true, warning: true, detail: `no ordering guard: event ${older.id} (older) was processed after ${newer.id} of the same object (${answers})` };
  }
  return { passed: true, warning: true, detail: `the older event was not accepted, so the service would retry it: ${answers}` };
}

const randomSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

const RECEIVER_CHECKS: readonly ReceiverCheck[] = [
  {
    id: 'valid_event',
    check: 'A valid event is answered 2xx within 10 s',
    run: (trial) => expectAccepted(trial),
  },
  refusal('tampered_body', 'A body changed after signing is refused', () => ({ tamper: true })),
  refusal('wrong_secret', 'An event signed with another secret is refused', () => ({ signWith: randomSecret() })),
  ...HEADER_NAMES.map((name) =>
    refusal(`missing_${name.replace('-', '_')}`, `An event without the ${name} header is refused`, () => ({ omit: name })),
  ),
  refusal('timestamp_too_old', 'An event signed 6 minutes ago is refused', () => ({ ageSeconds: SIX_MINUTES })),
  refusal('timestamp_too_new', 'An event signed 6 minutes in the future is refused', () => ({ ageSeconds: -SIX_MINUTES })),
  {
    id: 'rotated_signatures',
    check: 'Two signatures (a rotation), only the second valid, are accepted',
    run: (trial) => expectAccepted(trial, { signWith: [randomSecret(), trial.secret] }),
  },
  {
    id: 'unknown_type',
    check: 'An event of a type the spec does not list is answered 2xx',
    run: (trial) => expectAccepted(trial, { type: 'svc_webhooks_check.unknown_type' }),
  },
  {
    id: 'redelivery',
    check: 'A redelivery of an event already answered 2xx is answered 2xx',
    async run(trial) {
      const event = signedEvent(trial);
      const first = await send(trial, event);
      if (!delivered(first)) return { passed: false, detail: `the first delivery was not accepted (${notAccepted(first)})` };
      const again = await send(trial, event);
      const detail = `first ${describeAttempt(first)}, redelivery ${describeAttempt(again)}`;
      return { passed: delivered(again), detail };
    },
  },
  {
    id: 'concurrent_copies',
    check: 'Two copies of a new event sent at once both end in 2xx after retries',
    async run(trial) {
      const event = signedEvent(trial);
      const copy = () =>
        deliver({
          url: trial.url,
          ...event,
          retries: COPY_RETRIES,
          backoffMs: COPY_BACKOFF_MS,
          timing: trial.timing,
          // A copy left without an answer has already missed the window; only an answer is worth retrying.
          retryIf: (attempt) => attempt.status !== undefined,
        });
      const copies = await Promise.all([copy(), copy()]);
      const detail = copies.map((attempts, i) => `copy ${i + 1}: ${attempts.map(describeAttempt).join(', then ')}`).join('; ');
      return { passed: copies.every((attempts) => delivered(attempts.at(-1)!)), detail };
    },
  },
  {
    id: 'ordering',
    check: 'An older event sent after a newer one of its object is skipped',
    run: checkOrdering,
  },
];

/** Runs every check at once; answers them in the order above. */
export function runReceiverChecks(target: Target, timing: DeliveryTiming = SERVICE_TIMING): Promise<CheckResult[]> {
  const trial: Trial = { ...target, timing };
  return Promise.all(RECEIVER_CHECKS.map(async ({ id, check, run }) => ({ id, check, ...(await run(trial)) })));
}

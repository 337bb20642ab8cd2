/**
 * The errors of svc-webhooks: every refusal is a `WebhookError` with a stable
 * `code` and the HTTP `status` to answer, and belongs to the family of the
 * step that refused it. `ERROR_CODES` is the one table of codes: its status,
 * its class and when it happens. The README's table is checked against it.
 */

/** The codes of `WebhookVerificationError`: the checks of the request itself. */
export type VerificationErrorCode =
  | 'missing_header'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'invalid_signature'
  | 'invalid_payload';
/** The codes of `WebhookTenantError`: the request's tenant and its secret. */
export type TenantErrorCode = 'unknown_tenant' | 'secret_unavailable';
/** The codes of `WebhookBodyError`: reading the request and its body off the host. */
export type BodyErrorCode = 'payload_too_large' | 'body_timeout' | 'body_already_parsed' | 'body_decoded' | 'not_http_request';
/** The codes of `WebhookDedupError`: claiming the event in the dedup store. */
export type DedupErrorCode = 'delivery_in_progress' | 'dedup_unavailable' | 'invalid_event_order';
/** The codes of `WebhookHandlerError`: running the user's code, or handing the event off. */
export type HandlerErrorCode = 'handler_failed' | 'invalid_event_data' | 'unknown_event_type' | 'handoff_failed';

/** Every code a `WebhookError` can carry. New codes may be added in a minor version. */
export type WebhookErrorCode = VerificationErrorCode | TenantErrorCode | BodyErrorCode | DedupErrorCode | HandlerErrorCode;

/** The name of the class that carries code `C`. */
export type ErrorClassOf<C extends WebhookErrorCode> = C extends VerificationErrorCode
  ? 'WebhookVerificationError'
  : C extends TenantErrorCode
    ? 'WebhookTenantError'
    : C extends BodyErrorCode
      ? 'WebhookBodyError'
      : C extends DedupErrorCode
        ? 'WebhookDedupError'
        : 'WebhookHandlerError';

/** Every code, with the HTTP status it is answered with, the class that carries it, and when it happens. */
export const ERROR_CODES: { readonly [C in WebhookErrorCode]: ErrorCodeInfo<ErrorClassOf<C>> } = Object.freeze({
  missing_header: {
    status: 400,
    errorClass: 'WebhookVerificationError',
    when: '`webhook-id`, `webhook-timestamp` or `webhook-signature` is absent or empty.',
  },
  invalid_timestamp: {
    status: 400,
    errorClass: 'WebhookVerificationError',
    when: '`webhook-timestamp` is not a plain integer of seconds (`"123abc"`, `"1e9"`, `" 12"`, `"-1"` are all refused).',
  },
  timestamp_too_old: {
    status: 400,
    errorClass: 'WebhookVerificationError',
    when: 'The timestamp is more than `toleranceMs` (5 minutes) in the past.',
  },
  timestamp_too_new: {
    status: 400,
    errorClass: 'WebhookVerificationError',
    when: 'The timestamp is more than `toleranceMs` (5 minutes) in the future.',
  },
  invalid_signature: {
    status: 400,
    errorClass: 'WebhookVerificationError',
    when: 'No `v1,` entry matches any secret (at most 8 entries are tried; compared in constant time).',
  },
  invalid_payload: {
    status: 400,
    errorClass: 'WebhookVerificationError',
    when: 'Signed, but not a JSON object with string `id`, `type` and `data.object.id`, or its `id` is not the `webhook-id`.',
  },
  unknown_tenant: {
    status: 404,
    errorClass: 'WebhookTenantError',
    when: "Many tenants: the request's tenant has no secret, or is no tenant name (never 410, which would disable the endpoint).",
  },
  secret_unavailable: {
    status: 503,
    errorClass: 'WebhookTenantError',
    when: "Many tenants: the tenant's secret could not be looked up in time, or `tenants.of` threw; sent with `Retry-After`.",
  },
  payload_too_large: {
    status: 413,
    errorClass: 'WebhookBodyError',
    when: 'The body is larger than `maxPayloadBytes` (1 MiB).',
  },
  body_timeout: {
    status: 408,
    errorClass: 'WebhookBodyError',
    when: 'Entries: the body did not arrive whole within `bodyTimeoutMs` (10 s); the connection is closed.',
  },
  body_already_parsed: {
    status: 500,
    errorClass: 'WebhookBodyError',
    when: 'Express and Fetch entries: something read the body before verification and kept no raw bytes (a setup mistake; the message names the fix).',
  },
  body_decoded: {
    status: 400,
    errorClass: 'WebhookBodyError',
    when: 'Express and h3 1 entries: a text parser decoded the body from a charset other than UTF-8 and kept no raw bytes, so the signed bytes are lost (the message says how to keep them).',
  },
  not_http_request: {
    status: 500,
    errorClass: 'WebhookBodyError',
    when: 'Lambda entry: the function was invoked with an event that is no HTTP request (a warmer, a queue, a test event): a setup mistake, never a delivery.',
  },
  delivery_in_progress: {
    status: 409,
    errorClass: 'WebhookDedupError',
    when: 'Entries with dedup: another delivery of the event is running; sent with `Retry-After`.',
  },
  dedup_unavailable: {
    status: 503,
    errorClass: 'WebhookDedupError',
    when: 'Entries with dedup: the store failed, so the sender retries and nothing is lost; sent with `Retry-After`.',
  },
  invalid_event_order: {
    status: 422,
    errorClass: 'WebhookDedupError',
    when: "Entries with `ordering`: its `key` or `version` threw, or answered what cannot order (a key that is no non-empty string, a version that is no finite number, valid `Date` or RFC 3339 time).",
  },
  handler_failed: {
    status: 500,
    errorClass: 'WebhookHandlerError',
    when: "A handler threw or rejected; the message is fixed, never the error's.",
  },
  invalid_event_data: {
    status: 422,
    errorClass: 'WebhookHandlerError',
    when: 'The event failed the schema for its type; the body adds `paths`.',
  },
  unknown_event_type: {
    status: 422,
    errorClass: 'WebhookHandlerError',
    when: "`unknownEvents: 'reject'`: the type is one this version does not know.",
  },
  handoff_failed: {
    status: 503,
    errorClass: 'WebhookHandlerError',
    when: 'Entries with `handoff`: the queue did not record the event; sent with `Retry-After`.',
  },
});


/** What `ERROR_CODES` says of one code, carried by errors of the class `C`. */
export interface ErrorCodeInfo<C extends ErrorClassName = ErrorClassName> {
  /** The HTTP status a receiver answers with. */
  readonly status: number;
  /** The class of the errors that carry the code. */
  readonly errorClass: C;
  /** When the code is given, in one sentence. */
  readonly when: string;
}

/** The names of the classes of `WebhookError`, one per step of a delivery that can refuse it. */
export type ErrorClassName = 'WebhookVerificationError' | 'WebhookTenantError' | 'WebhookBodyError' | 'WebhookDedupError' | 'WebhookHandlerError';

// One symbol per process (Symbol.for), whichever copy of the package made the error: the value is the error's class name.
const CLASS = Symbol.for('svc-webhooks.WebhookError');

/**
 * The base class of every error svc-webhooks answers a request with. `code`
 * is stable and safe to branch on; `status` is the HTTP status to answer;
 * `cause` is what failed underneath (a store's error behind
 * `dedup_unavailable`), for the operator's logs, never sent to the sender.
 * `message` never holds a secret, a signature or the body.
 *
 * `instanceof` holds for an error of any copy of svc-webhooks in the
 * process, of this class and of each subclass: each entry point ships as one
 * file with its own copy of the classes, and an app may load both the ES
 * module and the CommonJS build.
 */
export class WebhookError extends Error {
  /** The name of the error's class: `WebhookVerificationError`, `WebhookDedupError`, … */
  override readonly name: ErrorClassName;
  /** The stable code to branch on (see `ERROR_CODES`). */
  readonly code: WebhookErrorCode;
  /** The HTTP status to answer with. */
  readonly status: number;

  /** The class name the instances of this class carry; none for the base, which every one of them is. */
  static readonly errorClass: ErrorClassName | undefined = undefined;

  /** Whether `value` is an error of this class (of any copy of svc-webhooks), or of any class for `WebhookError`. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    const className = typeof value === 'object' && value !== null ? (value as { readonly [CLASS]?: unknown })[CLASS] : undefined;
    if (typeof className !== 'string') return false;
    // Named explicitly rather than read from the constructor's name, which a bundler may rename.
    return this.errorClass === undefined || className === this.errorClass;
  }

  /** Made by the subclasses only, each for its own codes: a code belongs to one class. */
  protected constructor(code: WebhookErrorCode, message: string, options?: { readonly cause?: unknown }) {
    super(message, options);
    const { status, errorClass } = ERROR_CODES[code];
    this.name = errorClass;
    this.code = code;
    this.status = status;
    Object.defineProperty(this, CLASS, { value: errorClass });
  }
}

/** The request itself failed a check: its headers, timestamp, signature or envelope. Answered 4xx; the sender should not retry it. */
export class WebhookVerificationError extends WebhookError {
  /** The class name its instances carry. */
  static override readonly errorClass = 'WebhookVerificationError';
  /** One of the codes of this class. */
  declare readonly code: VerificationErrorCode;

  constructor(code: VerificationErrorCode, message: string, options?: { readonly cause?: unknown }) {
    super(code, message, options);
  }
}

/** Many tenants: the request's tenant is unknown, or its secret could not be looked up. */
export class WebhookTenantError extends WebhookError {
  /** The class name its instances carry. */
  static override readonly errorClass = 'WebhookTenantError';
  /** One of the codes of this class. */
  declare readonly code: TenantErrorCode;

  constructor(code: TenantErrorCode, message: string, options?: { readonly cause?: unknown }) {
    super(code, message, options);
  }
}

/** The request's body could not be read: it is too large, it stalled, something read it before verification, or the host handed no HTTP request. */
export class WebhookBodyError extends WebhookError {
  /** The class name its instances carry. */
  static override readonly errorClass = 'WebhookBodyError';
  /** One of the codes of this class. */
  declare readonly code: BodyErrorCode;

  constructor(code: BodyErrorCode, message: string, options?: { readonly cause?: unknown }) {
    super(code, message, options);
  }
}

/** The event could not be claimed: another delivery of it runs, or the dedup store failed. The sender retries. */
export class WebhookDedupError extends WebhookError {
  /** The class name its instances carry. */
  static override readonly errorClass = 'WebhookDedupError';
  /** One of the codes of this class. */
  declare readonly code: DedupErrorCode;

  constructor(code: DedupErrorCode, message: string, options?: { readonly cause?: unknown }) {
    super(code, message, options);
  }
}

/** The user's code did not take the event: a handler failed, the event failed its schema or type policy, or the queue did not record it. */
export class WebhookHandlerError extends WebhookError {
  /** The class name its instances carry. */
  static override readonly errorClass = 'WebhookHandlerError';
  /** One of the codes of this class. */
  declare readonly code: HandlerErrorCode;

  constructor(code: HandlerErrorCode, message: string, options?: { readonly cause?: unknown }) {
    super(code, message, options);
  }
}

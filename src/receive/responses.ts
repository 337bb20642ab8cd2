/** The answers svc-webhooks decides itself: a refusal with its JSON body, 204 for a handled event, 200 for a duplicate. */
import { WebhookVerificationError, type WebhookErrorCode } from '../core/errors.js';

/** A response an entry sends: `body` as JSON, or no body when it is `undefined` (204). */
export interface WebhookResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
}

/** The body of a refusal: the shape every refusal of svc-webhooks has, plus `paths` for a schema failure. */
export interface WebhookErrorBody {
  readonly error: {
    readonly code: WebhookErrorCode;
    readonly message: string;
    /** `invalid_event_data` only: where the event failed its schema, as `$.data.object.id`; never the values. */
    readonly paths?: readonly string[];
  };
}

/** An answer decided here, with the refusal it stands for, if any. */
export interface DecidedResponse extends WebhookResponse {
  /** The refusal `body` describes, for the user's `onError`; absent on a 2xx. */
  readonly error?: WebhookVerificationError;
}

/** What handling an event led to: 204 without a body, or a refusal. */
export interface DispatchResult extends DecidedResponse {
  readonly body: WebhookErrorBody | undefined;
}

/** 204 without a body: the event was handled, or nothing needed to handle it. */
export function accepted(): DispatchResult {
  return { status: 204, headers: {}, body: undefined };
}

/** 200 for an event processed already: the sender stops, and nothing runs again. */
export function duplicate(): DecidedResponse {
  return { status: 200, headers: {}, body: { received: true, duplicate: true } };
}

/**
 * The refusal for `error`, with the schema's failing `paths` when there are
 * some. Anything but a `WebhookVerificationError` is re-thrown: it is a bug,
 * not a request to refuse.
 */
export function refused(error: unknown, headers: Readonly<Record<string, string>> = {}, paths?: readonly string[]): DispatchResult {
  if (!(error instanceof WebhookVerificationError)) throw error;
  const { code, message, status } = error;
  const body: WebhookErrorBody = { error: paths === undefined ? { code, message } : { code, message, paths } };
  return { status, headers, body, error };
}

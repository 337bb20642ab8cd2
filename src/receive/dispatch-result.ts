/** The answers the core decides for a handled event: 204, or a refusal with its JSON body. */
import type { WebhookErrorCode, WebhookVerificationError } from '../core/errors.js';
import type { WebhookResponse } from './receiver.js';

/** The body of a refusal: the shape every refusal of svc-webhooks has, plus `paths` for a schema failure. */
export interface WebhookErrorBody {
  readonly error: {
    readonly code: WebhookErrorCode;
    readonly message: string;
    /** `invalid_event_data` only: where the event failed its schema, as `$.data.object.id`; never the values. */
    readonly paths?: readonly string[];
  };
}

/** The answer to send: `body` is absent exactly when `status` is 204. */
export interface DispatchResult extends WebhookResponse {
  readonly body: WebhookErrorBody | undefined;
  /** The refusal `body` describes, for an adapter's `onError`; absent on 204. */
  readonly error?: WebhookVerificationError;
}

/** 204 without a body: the event was handled, or nothing needed to handle it. */
export function accepted(): DispatchResult {
  return { status: 204, headers: {}, body: undefined };
}

/** The refusal for `error`, with the schema's failing `paths` when there are some. */
export function refused(error: WebhookVerificationError, paths?: readonly string[]): DispatchResult {
  const { code, message, status } = error;
  const body: WebhookErrorBody = { error: paths === undefined ? { code, message } : { code, message, paths } };
  return { status, headers: {}, body, error };
}

/**
 * The one shell of the entries that return a handler (Fetch, Lambda, Azure,
 * h3): their `onError`, the context their handler gets, and the pipeline
 * they build from what their host knows. An entry keeps its host's own: how
 * a request's body and headers are read, and how an answer looks.
 */
import type { WebhookDelivery } from '../core/delivery.js';
import type { WebhookError } from '../core/errors.js';
import type { WebhookHeaders } from '../core/headers.js';
import type { WebhookPayload } from '../core/payload.js';
import type { EntryName } from '../process/diagnostics.js';
import type { BodyLimits } from './body-limits.js';
import { createPipeline, type EntryOptions, type PipelineOptions } from './pipeline.js';
import { onErrorAnswer, type HostAnswers } from './platform.js';
import { entryOptions } from './receiver.js';
import type { WebhookResponse } from './responses.js';

/**
 * The options every entry that returns a handler takes, besides its secret
 * and what runs: the pipeline's, and its own `onError`. `Q` is the host's
 * request, `C` its context, `A` its answer.
 */
export interface HandlerEntryOptions<Q, C, A> extends EntryOptions {
  /**
   * Answers a refused request instead of the default JSON response, within
   * `onErrorTimeoutMs`, with the host's request and context. No handler runs
   * for it. The handlers' refusals (`handler_failed`, `invalid_event_data`,
   * `unknown_event_type`) come here too. The refusal's own headers
   * (`Retry-After`, `Connection: close`) are added to its answer where it
   * set none of that name, in any letter case.
   * @default answers `error.status` with `{ error: { code, message } }`
   */
  readonly onError?: (error: WebhookError, request: Q, context: C) => A | Promise<A>;
}

/** What a handler entry's handler gets besides the event: the verified delivery, with the host's request and context. */
export interface HandlerEntryContext<Q, C> extends WebhookDelivery {
  /** The host's request; its body is already read. */
  readonly request: Q;
  /** The host's context of the request. */
  readonly context: C;
}

/** What a handler entry knows of its host: `Q` its request, `C` the context passed beside it, `A` its answer. */
export interface HandlerHost<Q, C, A> {
  /** Which entry this is, for the diagnostics channels. */
  readonly entry: EntryName;
  /** The raw body, as `Platform.body` reads it. */
  body(request: Q, limits: BodyLimits): WebhookPayload | PromiseLike<WebhookPayload>;
  /** The request's headers, for any request. */
  headers(request: Q): WebhookHeaders;
  /** How its answers look and are made. */
  readonly answers: HostAnswers<Q, A>;
  /** Keeps `work` alive after the answer where the runtime may cut it off. */
  keepAlive?(request: Q, context: C, work: Promise<void>): void;
  /** Told the delivery just before the handler runs with it (h3 sets `event.context.webhook`). */
  delivered?(request: Q, delivery: WebhookDelivery): void;
}

/** One request with its context, as the pipeline carries it. */
interface HostRequest<Q, C> {
  readonly request: Q;
  readonly context: C;
}

/** The answer to a request whose sender left mid-body: nobody reads it. */
const SENDER_GONE: WebhookResponse = Object.freeze({ status: 400, headers: Object.freeze({}), body: undefined });

/**
 * Builds the request path of a handler entry from its options, the
 * handler it was given (`undefined` with `on` or `handoff`) and its host.
 * Checks the options once; throws `WebhookOptionsError`.
 */
export function createHandlerEntry<Q, C, A>(
  options: HandlerEntryOptions<Q, C, A>,
  handler: unknown,
  host: HandlerHost<Q, C, A>,
): (request: Q, context: C) => Promise<A> {
  const { onError } = entryOptions(options);
  const { answers, keepAlive, delivered } = host;
  const receive = createPipeline<HostRequest<Q, C>, A>(
    options as PipelineOptions,
    {
      entry: host.entry,
      body: ({ request }, limits) => host.body(request, limits),
      headers: ({ request }) => host.headers(request),
      userRequest: ({ request }) => request,
      send: ({ request }, response) => answers.make(request, response),
      // Never undefined: there is no route.
      statusOf: (_request, answer) => answers.statusOf(answer!),
      senderGone: ({ request }) => answers.make(request, SENDER_GONE),
      onError: onError && (async ({ request, context }, error, headers) => onErrorAnswer(answers, await onError(error, request, context), headers, request)),
      keepAlive: keepAlive && (({ request, context }, work) => keepAlive(request, context, work)),
    },
    {
      handler,
      shape: answers,
      context({ request, context }, delivery): HandlerEntryContext<Q, C> {
        delivered?.(request, delivery);
        // A literal of the delivery's fields, not a spread: a spread and a field make a hidden class per request.
        const { event, id, timestamp, keyId, tenant, dedupKey, stale } = delivery;
        return { event, id, timestamp, keyId, tenant, dedupKey, stale, request, context };
      },
    },
  );
  return (request, context) => receive({ request, context }) as Promise<A>;
}

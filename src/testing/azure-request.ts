/**
 * Requests of Azure Functions' v4 programming model for tests: an object
 * with the surface of `@azure/functions`' `HttpRequest` (which wraps a Fetch
 * Request, as this does), built without loading that package.
 */
import { Buffer, type Blob as NodeBlob } from 'node:buffer';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { URLSearchParams as NodeURLSearchParams } from 'node:url';
import type { WebhookEvent } from '../core/event.js';
import { WebhookOptionsError } from '../base/options-error.js';
import { bodyOf, signedHeaders, type SignedHeadersOptions } from './signed-request.js';

/**
 * An HTTP request as Azure Functions hands it over, with the members of
 * `@azure/functions`' `HttpRequest`: its stream, Blob and query are typed
 * as Node's, as that package types them, so that a project whose types
 * include the DOM's can pass it where an `HttpRequest` is taken.
 */
export interface TestAzureRequest {
  /** `POST`. */
  readonly method: string;
  /** The request's URL. */
  readonly url: string;
  /** Its headers, `content-length` included. */
  readonly headers: Headers;
  /** The URL's query. */
  readonly query: NodeURLSearchParams;
  /** The route's parameters (`{ tenant: 'acme' }` for a route `webhooks/{tenant}`). */
  readonly params: Record<string, string>;
  /** `null`: no App Service or Static Web Apps user. */
  readonly user: null;
  /** The body's stream, until it is read. */
  readonly body: NodeReadableStream<Uint8Array> | null;
  /** Whether the body was read. */
  readonly bodyUsed: boolean;
  /** Reads the body as bytes. */
  readonly arrayBuffer: () => Promise<ArrayBuffer>;
  /** Reads the body as a Blob. */
  readonly blob: () => Promise<NodeBlob>;
  /** Reads the body as form data. */
  readonly formData: () => Promise<FormData>;
  /** Reads the body as JSON. */
  readonly json: () => Promise<unknown>;
  /** Reads the body as text. */
  readonly text: () => Promise<string>;
  /** A copy whose body can be read apart. */
  readonly clone: () => TestAzureRequest;
}

/** Where an Azure request goes: its URL, and the route parameters Azure matched from it. */
export interface AzureRequestOptions {
  /**
   * The request's URL: Azure's route prefix is `/api`.
   * @default 'https://receiver.test/api/webhooks'
   */
  readonly url?: string;
  /**
   * The route's parameters, what `tenants.of` reads a tenant from
   * (`request.params.tenant` for a route `webhooks/{tenant}`).
   * @default {}
   */
  readonly params?: Readonly<Record<string, string>>;
}

/** Options of `signedAzureRequest()`: those of `signedHeaders()`, and where the request goes. */
export interface SignedAzureRequestOptions extends SignedHeadersOptions, AzureRequestOptions {}

const AZURE_URL = 'https://receiver.test/api/webhooks';

/**
 * The request Azure Functions hands an HTTP function for a POST of `event`
 * (sent as compact JSON) or of `body` as it is, signed as the service signs
 * it: an object with the surface of `@azure/functions`' `HttpRequest`, for a
 * handler of `svc-webhooks/azure` or your own, without loading that package.
 * @example
 * ```ts
 * import { verifyWebhook } from 'svc-webhooks/azure';
 * import { signedAzureRequest, testAzureContext, testEvent } from 'svc-webhooks/testing';
 *
 * const secret = 'whsec_c2VjcmV0LWZvci10ZXN0cw==';
 * const handler = verifyWebhook({ secret }, async (_event, { request }) => {
 *   console.log(request.params.tenant); // 'acme'
 * });
 * const request = signedAzureRequest(testEvent('call.missed'), { secret, url: 'https://receiver.test/api/webhooks/acme', params: { tenant: 'acme' } });
 * const answer = await handler(request, testAzureContext()); // { status: 204, ... }
 * ```
 */
export function signedAzureRequest(eventOrBody: WebhookEvent | string, options: SignedAzureRequestOptions): TestAzureRequest {
  checkAzureRequestOptions(options);
  const body = bodyOf(eventOrBody);
  return azureRequestOf(new Request(options.url ?? AZURE_URL, { method: 'POST', body, headers: withLength(signedHeaders(body, options), body) }), options.params);
}

/** Throws `WebhookOptionsError` for a URL that is none, or parameters that are no object. */
export function checkAzureRequestOptions(options: AzureRequestOptions): void {
  if (options.url !== undefined && !URL.canParse(options.url)) throw new WebhookOptionsError('svc-webhooks: url must be an absolute URL');
  const { params } = options;
  if (params !== undefined && (typeof params !== 'object' || params === null)) throw new WebhookOptionsError('svc-webhooks: params must be an object');
}

/** `headers` with the `content-length` of `body`, as the Functions host passes on the sender's. */
export function withLength(headers: Readonly<Record<string, string>>, body: string): Record<string, string> {
  return { ...headers, 'content-length': String(Buffer.byteLength(body)) };
}

/** `request` as an Azure `HttpRequest`: read through it, as Azure's own class reads through its Fetch Request. */
export function azureRequestOf(request: Request, params: Readonly<Record<string, string>> = {}): TestAzureRequest {
  return {
    method: request.method,
    url: request.url,
    headers: request.headers,
    query: new URL(request.url).searchParams,
    params: { ...params },
    user: null,
    get body() {
      return request.body;
    },
    get bodyUsed() {
      return request.bodyUsed;
    },
    arrayBuffer: () => request.arrayBuffer(),
    blob: () => request.blob(),
    formData: () => request.formData(),
    json: () => request.json(),
    text: () => request.text(),
    clone: () => azureRequestOf(request.clone(), params),
  };
}

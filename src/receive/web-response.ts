/** Fetch Responses from the user's code (a Fetch handler, a Hono `onError`): knowing one, and adding a refusal's headers. */

/**
 * Whether `value` is a Response. Duck-typed, not `instanceof`: a Response of
 * another realm or polyfill is still one, and @hono/node-server swaps in a
 * global Response of which `Response.json()`'s results are no instances.
 */
export function isResponse(value: unknown): value is Response {
  const response = value as Partial<Response> | null;
  return (
    typeof response === 'object' &&
    response !== null &&
    typeof response.status === 'number' &&
    typeof response.headers === 'object' &&
    response.headers !== null &&
    typeof response.headers.has === 'function'
  );
}

/** `response` with those of `headers` it lacks: Retry-After and the like apply whoever wrote the body. */
export function withMissingHeaders(response: Response, headers: Readonly<Record<string, string>>): Response {
  const missing = Object.entries(headers).filter(([name]) => !response.headers.has(name));
  if (missing.length === 0) return response;
  // A copy: the headers of a Response from fetch() cannot change.
  const copy = new Response(response.body, response);
  for (const [name, value] of missing) copy.headers.set(name, value);
  return copy;
}

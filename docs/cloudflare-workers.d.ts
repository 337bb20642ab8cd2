/**
 * The part of workerd's `cloudflare:workers` module the docs' snippets use,
 * for `npm run check:docs`: the package does not depend on
 * @cloudflare/workers-types. A Worker's own types (`wrangler types`) give `env` its bindings.
 */
declare module 'cloudflare:workers' {
  /** The Worker's bindings, reachable from module scope. */
  export const env: { readonly DB: import('svc-webhooks/d1').D1Database };
}

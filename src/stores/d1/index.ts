/**
 * svc-webhooks/d1: exactly once on Cloudflare Workers, without a server of
 * your own. `D1DedupStore` is a lease store for the entries' and
 * `svc-webhooks/cloudflare`'s `work()`'s `dedup` option in a D1 database,
 * shared by every isolate of every Worker bound to it, and orders the events
 * of one object for their `ordering` option. Its tables come from the
 * migration the package ships (`sql/svc-webhooks-d1.sql`) or
 * `store.migrate()`. Loads on workerd without `nodejs_compat`, and imports
 * nothing of Cloudflare's.
 * @packageDocumentation
 */
export type { D1Database, D1RunResult, D1Statement } from './d1-database.js';
export { D1DedupStore, type D1DedupStoreOptions } from './d1-dedup-store.js';

/** A D1 database in workerd, through miniflare, reached from the test's process: in memory, gone at `close`. */
import { Miniflare } from 'miniflare';
import type { D1Database } from '../../src/stores/d1/d1-database.js';

/** A Worker that does nothing but hold the D1 binding `DB`. */
const IDLE_WORKER = 'export default { fetch: () => new Response(null, { status: 204 }) };';

export interface MiniflareD1 {
  readonly db: D1Database;
  close(): Promise<void>;
}

/** Starts workerd with one D1 database; `db` is miniflare's proxy to its binding, which runs each statement in workerd. */
export async function miniflareD1(): Promise<MiniflareD1> {
  const miniflare = new Miniflare({ modules: true, script: IDLE_WORKER, compatibilityDate: '2025-07-01', d1Databases: ['DB'] });
  const db = (await miniflare.getD1Database('DB')) as unknown as D1Database;
  return { db, close: () => miniflare.dispose() };
}

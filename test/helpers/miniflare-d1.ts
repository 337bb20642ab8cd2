/** A D1 database in workerd, through miniflare, reached from the test's process: in memory, gone at `close`. */
import { Miniflare } from 'miniflare';
import type { D1Database, D1Statement } from '../../src/stores/d1/d1-database.js';

/** A Worker that does nothing but hold the D1 binding `DB`. */
const IDLE_WORKER = 'export default { fetch: () => new Response(null, { status: 204 }) };';

export interface MiniflareD1 {
  readonly db: D1Database;
  close(): Promise<void>;
}

/** Starts workerd with one D1 database; `db` is miniflare's proxy to its binding, which runs each statement in workerd. */
export async function miniflareD1(): Promise<MiniflareD1> {
  const miniflare = new Miniflare({ modules: true, script: IDLE_WORKER, compatibilityDate: '2025-07-01', d1Databases: ['DB'] });
  const db = sentAgainOnClosedSocket((await miniflare.getD1Database('DB')) as unknown as D1Database);
  return { db, close: () => miniflare.dispose() };
}

/**
 * `db`, each call sent once more when miniflare's proxy wrote it on a connection workerd had closed ("other side
 * closed", cloudflare/workers-sdk#8473), as happens to concurrent calls on a loaded machine: workerd answered
 * nothing on it. Were such a request run twice all the same, its second run would find its own claim and answer no claim:
 * a test could see fewer claims for it, never more.
 */
export function sentAgainOnClosedSocket(db: D1Database): D1Database {
  const originals = new WeakMap<object, D1Statement>();
  const statement = (inner: D1Statement): D1Statement => {
    const outer = new Proxy(inner, {
      get(target, name) {
        const value = Reflect.get(target, name) as unknown;
        if (typeof value !== 'function') return value;
        if (name === 'bind') return (...values: unknown[]) => statement((value as (...values: unknown[]) => D1Statement).apply(target, values));
        return sentAgain(target, value);
      },
    });
    originals.set(outer, inner);
    return outer;
  };
  return new Proxy(db, {
    get(target, name) {
      if (name === 'prepare') return (sql: string) => statement(target.prepare(sql));
      if (name === 'batch') return (statements: D1Statement[]) => again(() => target.batch(statements.map((each) => originals.get(each) ?? each)));
      const value = Reflect.get(target, name) as unknown;
      return typeof value === 'function' ? sentAgain(target, value) : value;
    },
  });
}

/** `method` of `target`, each call sent once more after a closed connection. */
function sentAgain(target: object, method: Function): (...args: unknown[]) => Promise<unknown> {
  return (...args) => again(() => method.apply(target, args) as Promise<unknown>);
}

/** Runs `call`, and once more if it failed on a connection the other side had closed. */
async function again<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
    if (cause?.code !== 'UND_ERR_SOCKET') throw error;
    return call();
  }
}

/**
 * The package as it ships: the benchmarks time the compiled dist/esm/, not
 * the TypeScript sources run through a loader, whose helpers (a `__name` call
 * per named closure, for one) would add a cost no user pays.
 */
import { existsSync } from 'node:fs';

/** Imports `path` (like `adapters/fetch.js`) from dist/esm/; typed by the caller as its source module. */
export async function built<T>(path: string): Promise<T> {
  const url = new URL(`../dist/esm/${path}`, import.meta.url);
  if (!existsSync(url)) throw new Error(`dist/esm/${path} is missing: run npm run build first`);
  return (await import(url.href)) as T;
}

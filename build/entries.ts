/**
 * The package's public entry points, subpath -> source file: the one list to
 * edit when adding a subpath. `npm run check:exports` holds package.json
 * "exports" to it, and the smoke test loads every subpath found there.
 */
export const ENTRIES: Readonly<Record<string, string>> = {
  '.': 'src/index.ts',
  './express': 'adapters/express.ts',
  './hono': 'adapters/hono.ts',
  './fastify': 'adapters/fastify.ts',
  './redis': 'src/redis-dedup-store.ts',
};

/** Where the build puts a source file's output: dist/esm for import, dist/cjs for require. */
export function builtPath(format: 'esm' | 'cjs', source: string, extension: '.js' | '.d.ts'): string {
  return `./dist/${format}/${source.replace(/\.ts$/, extension)}`;
}

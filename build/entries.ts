/**
 * The package's public entry points, subpath -> source file: the one list to
 * edit when adding a subpath. tsup builds one ESM and one CommonJS file per
 * entry from it, and `npm run check:exports` holds package.json "exports" to it.
 */
export const ENTRIES: Readonly<Record<string, string>> = {
  '.': 'src/index.ts',
};

/** The file name under dist/ of a subpath: "." is index, "./hono" is hono. */
export function outputName(subpath: string): string {
  return subpath === '.' ? 'index' : subpath.slice(2).replaceAll('/', '-');
}

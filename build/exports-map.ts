import { isDeepStrictEqual } from 'node:util';
import { ENTRIES, outputName } from './entries.js';

/** The conditions of one subpath: each format carries its own types, as node16/nodenext resolution needs. */
function conditions(subpath: string) {
  const base = `./dist/${outputName(subpath)}`;
  return {
    import: { types: `${base}.d.ts`, default: `${base}.js` },
    require: { types: `${base}.d.cts`, default: `${base}.cjs` },
  };
}

/** The package.json fields that point into dist/, derived from ENTRIES. */
export function expectedPackageFields(): Record<string, unknown> {
  const exports: Record<string, unknown> = {};
  for (const subpath of Object.keys(ENTRIES)) exports[subpath] = conditions(subpath);
  exports['./package.json'] = './package.json';
  // For tools that predate "exports".
  return { exports, main: './dist/index.cjs', module: './dist/index.js', types: './dist/index.d.cts' };
}

/** The names of the fields of `pkg` that differ from `expectedPackageFields()`. */
export function staleFields(pkg: Readonly<Record<string, unknown>>): string[] {
  const expected = expectedPackageFields();
  return Object.keys(expected).filter((field) => !isDeepStrictEqual(pkg[field], expected[field]));
}

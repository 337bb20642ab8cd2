import { isDeepStrictEqual } from 'node:util';
import { ENTRIES, builtPath } from './entries.js';

/** One format's condition: its code and the types beside it, as node16/nodenext resolution needs. */
function condition(format: 'esm' | 'cjs', source: string) {
  return { types: builtPath(format, source, '.d.ts'), default: builtPath(format, source, '.js') };
}

/** The package.json fields that point into dist/, derived from ENTRIES. */
export function expectedPackageFields(): Record<string, unknown> {
  const exports: Record<string, unknown> = {};
  for (const [subpath, source] of Object.entries(ENTRIES)) {
    exports[subpath] = { import: condition('esm', source), require: condition('cjs', source) };
  }
  exports['./package.json'] = './package.json';
  // For tools that predate "exports".
  const root = condition('cjs', ENTRIES['.'] ?? 'src/index.ts');
  return { exports, main: root.default, module: builtPath('esm', ENTRIES['.'] ?? 'src/index.ts', '.js'), types: root.types };
}

/** The names of the fields of `pkg` that differ from `expectedPackageFields()`. */
export function staleFields(pkg: Readonly<Record<string, unknown>>): string[] {
  const expected = expectedPackageFields();
  return Object.keys(expected).filter((field) => !isDeepStrictEqual(pkg[field], expected[field]));
}

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENTRIES, builtPath } from '../build/entries.js';
import { expectedPackageFields, staleFields } from '../build/exports-map.js';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as Record<string, unknown>;

describe('exports map', () => {
  it('places each format under its own dist folder', () => {
    expect(builtPath('esm', 'adapters/hono.ts', '.js')).toBe('./dist/esm/adapters/hono.js');
    expect(builtPath('cjs', 'src/index.ts', '.d.ts')).toBe('./dist/cjs/src/index.d.ts');
  });

  it('gives every entry an import and a require condition, each with its own types', () => {
    const { exports } = expectedPackageFields() as { exports: Record<string, unknown> };
    expect(Object.keys(exports)).toEqual([...Object.keys(ENTRIES), './package.json']);
    expect(exports['.']).toEqual({
      import: { types: './dist/esm/src/index.d.ts', default: './dist/esm/src/index.js' },
      require: { types: './dist/cjs/src/index.d.ts', default: './dist/cjs/src/index.js' },
    });
  });

  it('agrees with package.json', () => {
    expect(staleFields(pkg)).toEqual([]);
  });

  it('notices a subpath missing from package.json', () => {
    const exports = { ...(pkg.exports as Record<string, unknown>) };
    delete exports['.'];
    expect(staleFields({ ...pkg, exports })).toEqual(['exports']);
  });
});

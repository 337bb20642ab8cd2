import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENTRIES, outputName } from '../build/entries.js';
import { expectedPackageFields, staleFields } from '../build/exports-map.js';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as Record<string, unknown>;

describe('exports map', () => {
  it('names dist files after the subpath', () => {
    expect(outputName('.')).toBe('index');
    expect(outputName('./hono')).toBe('hono');
    expect(outputName('./a/b')).toBe('a-b');
  });

  it('gives every entry an import and a require condition, each with its own types', () => {
    const { exports } = expectedPackageFields() as { exports: Record<string, unknown> };
    expect(Object.keys(exports)).toEqual([...Object.keys(ENTRIES), './package.json']);
    expect(exports['.']).toEqual({
      import: { types: './dist/index.d.ts', default: './dist/index.js' },
      require: { types: './dist/index.d.cts', default: './dist/index.cjs' },
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

import { describe, expect, it } from 'vitest';
import { missingFromPackage, namedFiles } from './packed-files.js';

const manifest = {
  main: './dist/cjs/index.js',
  types: './dist/cjs/index.d.ts',
  bin: { tool: './dist/esm/cli.js' },
  exports: {
    '.': { import: { types: './dist/esm/index.d.ts', default: './dist/esm/index.js' }, require: { default: './dist/cjs/index.js' } },
    './package.json': './package.json',
  },
};
const whole = ['LICENSE', 'README.md', 'package.json', 'dist/cjs/index.js', 'dist/cjs/index.d.ts', 'dist/esm/index.js', 'dist/esm/index.d.ts', 'dist/esm/cli.js'];

describe('what a tarball must hold', () => {
  it('names every file of exports, main, types and bin once, without ./', () => {
    expect(namedFiles(manifest)).toEqual([
      'dist/cjs/index.d.ts',
      'dist/cjs/index.js',
      'dist/esm/cli.js',
      'dist/esm/index.d.ts',
      'dist/esm/index.js',
      'package.json',
    ]);
  });

  it('finds nothing wrong with a whole package', () => {
    expect(missingFromPackage(manifest, whole)).toEqual([]);
  });

  it('names each file missing, as from a checkout packed without a build', () => {
    expect(missingFromPackage(manifest, ['LICENSE', 'README.md', 'package.json', 'sql/schema.sql'])).toEqual([
      'dist/cjs/index.d.ts is named by package.json but not packed',
      'dist/cjs/index.js is named by package.json but not packed',
      'dist/esm/cli.js is named by package.json but not packed',
      'dist/esm/index.d.ts is named by package.json but not packed',
      'dist/esm/index.js is named by package.json but not packed',
      'no JavaScript is packed',
    ]);
  });

  it('refuses the tests and the TypeScript sources, but not declarations', () => {
    expect(missingFromPackage(manifest, [...whole, 'src/index.ts', 'test/a.test.js', 'dist/esm/extra.ts', 'dist/esm/extra.d.ts'])).toEqual([
      'src/index.ts is packed but belongs to the repository only',
      'test/a.test.js is packed but belongs to the repository only',
      'dist/esm/extra.ts is packed but belongs to the repository only',
    ]);
  });

  it('names each file the README links to that is not packed, once', () => {
    expect(missingFromPackage(manifest, [...whole, 'docs/hosts.md'], ['docs/hosts.md', 'docs/runtimes.md', 'docs/runtimes.md'])).toEqual([
      'docs/runtimes.md is linked from the README, which the npm page shows, but not packed',
    ]);
  });
});

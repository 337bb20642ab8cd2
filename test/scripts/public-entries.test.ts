import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { publicEntries, ROOT } from '../../scripts/public-entries.js';

const conditional = (path: string) => ({ import: { types: `./dist/esm/${path}.d.ts`, default: `./dist/esm/${path}.js` } });
const roots: string[] = [];

function packageAt(exports: Record<string, unknown>): string {
  const root = mkdtempSync(join(tmpdir(), 'public-entries-'));
  roots.push(root);
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'svc-webhooks', exports }));
  return root;
}

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe('publicEntries', () => {
  test('every module of "exports", named as imported, with its source and its declarations', () => {
    const root = packageAt({
      '.': conditional('src/index'),
      './express': conditional('adapters/express'),
      './redis': conditional('src/stores/redis/index'),
      './package.json': './package.json',
    });
    expect(publicEntries(root)).toEqual([
      { subpath: '.', specifier: 'svc-webhooks', name: 'index', source: 'src/index.ts', types: 'dist/esm/src/index.d.ts' },
      { subpath: './express', specifier: 'svc-webhooks/express', name: 'express', source: 'adapters/express.ts', types: 'dist/esm/adapters/express.d.ts' },
      { subpath: './redis', specifier: 'svc-webhooks/redis', name: 'redis', source: 'src/stores/redis/index.ts', types: 'dist/esm/src/stores/redis/index.d.ts' },
    ]);
  });

  test('a nested subpath gets a file name without slashes', () => {
    expect(publicEntries(packageAt({ './queues/bullmq': conditional('adapters/bullmq') }))[0]?.name).toBe('queues-bullmq');
  });

  test('a module whose ES types are not built into dist/esm/ is an error, not left out', () => {
    expect(() => publicEntries(packageAt({ './odd': { import: { default: './odd.js' } } }))).toThrow('./odd');
    expect(() => publicEntries(packageAt({ './odd': { import: { types: './types/odd.d.ts' } } }))).toThrow('./odd');
  });

  test('the package itself: every entry\'s source exists, and the root comes first', () => {
    const entries = publicEntries(ROOT);
    expect(entries[0]?.specifier).toBe('svc-webhooks');
    expect(entries.map((entry) => entry.specifier)).toContain('svc-webhooks/redis');
    expect(entries.filter((entry) => !existsSync(join(ROOT, entry.source)))).toEqual([]);
  });
});

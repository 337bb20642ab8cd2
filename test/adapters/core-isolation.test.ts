import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const srcDir = new URL('../../src/', import.meta.url);

describe('the core', () => {
  it('imports only node: built-ins and its own files, so importing it never loads a framework', () => {
    const specifiers = readdirSync(srcDir, { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.ts'))
      .flatMap((name) => {
        const text = readFileSync(new URL(name, srcDir), 'utf8');
        return [...text.matchAll(/\bfrom\s+'([^']+)'|\bimport\(\s*'([^']+)'/g)].map((match) => `${name}: ${match[1] ?? match[2]}`);
      });
    expect(specifiers).toContain('index.ts: ./receive/receiver.js');
    expect(specifiers.filter((entry) => !/: (node:|\.\.?\/)/.test(entry))).toEqual([]);
  });
});

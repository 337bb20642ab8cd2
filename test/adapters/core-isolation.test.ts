import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const srcDir = new URL('../../src/', import.meta.url);

/** Every module specifier in src/, as `file: specifier`, with how it is imported. */
function specifiers(): { readonly entry: string; readonly typeOnly: boolean; readonly dynamic: boolean }[] {
  return readdirSync(srcDir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .flatMap((name) => {
      const text = readFileSync(new URL(name, srcDir), 'utf8');
      return [...text.matchAll(/^\s*(?:import|export)(\s+type\b)?[^;]*?\bfrom\s+'([^']+)'|\bimport\(\s*'([^']+)'/gm)].map((match) => ({
        entry: `${name.replaceAll('\\', '/')}: ${match[2] ?? match[3]}`,
        typeOnly: match[1] !== undefined,
        dynamic: match[3] !== undefined,
      }));
    });
}

describe('the core', () => {
  it('imports only node: built-ins and its own files, so importing it never loads a framework', () => {
    const all = specifiers();
    expect(all.map(({ entry }) => entry)).toContain('index.ts: ./receive/receiver.js');
    const foreign = all.filter(({ entry }) => !/: (node:|\.\.?\/)/.test(entry));
    // A queue's entry may name its engine for types, and load it when asked to: never when imported.
    const loaded = foreign.filter(({ entry, typeOnly, dynamic }) => {
      const peer = /^queues\/([^/]+)\/[^:]+: (.+)$/.exec(entry);
      return !(peer !== null && peer[1] === peer[2] && (typeOnly || dynamic));
    });
    expect(loaded.map(({ entry }) => entry)).toEqual([]);
  });
});

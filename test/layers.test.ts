/**
 * The layers of the source: each folder imports only from the folders below
 * it (base, core, stores, process, then receive, queues and the testing kit,
 * then the command line), no file is part of an import circle, each file
 * opens with a comment saying what it holds, and nothing
 * but `node:` built-ins is loaded at run time, so that importing an entry
 * never loads a framework.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GENERATOR_PEERS, SCHEMA_PEERS } from '../src/cli/shared/peers.js';

const ROOT = new URL('..', import.meta.url).pathname;

interface Import {
  /** The importing file, relative to the root: `src/receive/pipeline.ts`. */
  readonly from: string;
  /** As written. */
  readonly specifier: string;
  /** The file it names, relative to the root, for a relative specifier. */
  readonly to?: string;
  readonly typeOnly: boolean;
  readonly dynamic: boolean;
}

/** The TypeScript files under `folders`, relative to the root. */
function filesIn(...folders: string[]): string[] {
  return folders.flatMap((folder) =>
    readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.ts'))
      .map((name) => join(folder, name).replaceAll('\\', '/')),
  );
}

/** Every import of the TypeScript files under `folders`. */
function imports(...folders: string[]): Import[] {
  return filesIn(...folders).flatMap((from) => {
    const text = readFileSync(join(ROOT, from), 'utf8');
    return [...text.matchAll(/^\s*(?:import|export)(\s+type\b)?[^;]*?\bfrom\s+'([^']+)'|\bimport\(\s*'([^']+)'/gm)].map((match) => {
      const specifier = (match[2] ?? match[3])!;
      const to = specifier.startsWith('.') ? normalize(join(dirname(from), specifier)).replace(/\.js$/, '.ts').replaceAll('\\', '/') : undefined;
      return { from, specifier, ...(to !== undefined && { to }), typeOnly: match[1] !== undefined, dynamic: match[3] !== undefined };
    });
  });
}

/** The layer of a file: its folder under src/ (`src/index.ts` is the root entry), or `adapters`. */
function layerOf(file: string): string {
  if (file.startsWith('adapters/')) return 'adapters';
  if (file === 'src/index.ts') return 'root';
  return file.split('/')[1]!;
}

/** What each layer may import: the layers below it, and itself. */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  base: ['base'],
  core: ['base', 'core'],
  stores: ['base', 'core', 'stores'],
  process: ['base', 'core', 'stores', 'process'],
  receive: ['base', 'core', 'stores', 'process', 'receive'],
  queues: ['base', 'core', 'stores', 'process', 'queues'],
  testing: ['base', 'core', 'process', 'testing'],
  cli: ['base', 'core', 'testing', 'cli'],
  root: ['base', 'core', 'stores', 'process', 'receive', 'queues'],
  // An entry may stand on another: the NestJS module mounts the Express or Fastify one, and its worker
  // runs a queue engine's work().
  adapters: ['base', 'core', 'process', 'receive', 'queues', 'adapters'],
};

const all = imports('src', 'adapters');
const local = all.filter((each) => each.to !== undefined);

describe('the layers of the source', () => {
  it('knows every folder of src/ as a layer', () => {
    const layers = new Set(filesIn('src', 'adapters').map(layerOf));
    expect([...layers].sort()).toEqual(Object.keys(ALLOWED).sort());
  });

  it('imports only from the layers below each file, or its own', () => {
    const upward = local.filter(({ from, to }) => !ALLOWED[layerOf(from)]!.includes(layerOf(to!))).map(({ from, specifier }) => `${from} -> ${specifier}`);
    expect(upward).toEqual([]);
  });

  it('has no import circle', () => {
    const edges = new Map<string, string[]>();
    for (const { from, to } of local) edges.set(from, [...(edges.get(from) ?? []), to!]);
    const circles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'visiting') {
        circles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
        return;
      }
      state.set(file, 'visiting');
      for (const next of edges.get(file) ?? []) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of edges.keys()) visit(file, []);
    expect(circles).toEqual([]);
  });

  it('opens every file with a comment saying what it holds, before any code (a bin after its #! line)', () => {
    const bare = filesIn('src', 'adapters').filter((file) => {
      const text = readFileSync(join(ROOT, file), 'utf8').replace(/^#!.*\n/, '');
      return !/^\/\*\*\s*\S/.test(text) && !/^\/\/ \S/.test(text);
    });
    expect(bare).toEqual([]);
  });

  it('names only files that exist', () => {
    const files = new Set(filesIn('src', 'adapters'));
    expect(local.filter(({ to }) => !files.has(to!)).map(({ from, specifier }) => `${from} -> ${specifier}`)).toEqual([]);
  });
});

describe('what src/ loads at run time', () => {
  it('imports only node: built-ins and its own files, so importing it never loads a framework', () => {
    const sources = imports('src');
    expect(sources.map(({ from, specifier }) => `${relative('src', from)}: ${specifier}`)).toContain('index.ts: ./receive/receiver.js');
    const foreign = sources.filter(({ specifier }) => !/^(node:|\.\.?\/)/.test(specifier));
    // A queue's entry may name its engine for types, and load it when asked to: never when imported.
    // So may the command line the contract's parser and generators, optional peers of its own.
    const loaded = foreign.filter(({ from, specifier, typeOnly, dynamic }) => {
      const engine = /^src\/queues\/([^/]+)\//.exec(from)?.[1];
      const generator = from.startsWith('src/cli/') && (GENERATOR_PEERS as readonly string[]).concat(SCHEMA_PEERS).includes(specifier);
      return !((engine === specifier || generator) && (typeOnly || dynamic));
    });
    expect(loaded.map(({ from, specifier }) => `${from}: ${specifier}`)).toEqual([]);
  });
});

describe('the benchmarks', () => {
  it('import nothing of the test suites: they measure the package, on servers of their own', () => {
    expect(imports('bench').filter(({ to }) => to?.startsWith('test/')).map(({ from, specifier }) => `${from} -> ${specifier}`)).toEqual([]);
  });
});

describe('the examples', () => {
  it('import the package by its name, as an app does (Deno alone, which runs the sources, by path)', () => {
    const byPath = imports('examples')
      .filter(({ from, to }) => to !== undefined && from !== 'examples/deno.ts' && !to.startsWith('examples/'))
      .map(({ from, specifier }) => `${from}: ${specifier}`);
    expect(byPath).toEqual([]);
  });
});

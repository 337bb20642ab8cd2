/**
 * `svc-webhooks types` refusing generators of another major, found as Node's resolution finds them: fake
 * packages (a package.json each) in a temporary node_modules, the command told to look there.
 */
import { Buffer } from 'node:buffer';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GENERATOR_RANGES } from '../../../src/cli/shared/peers.js';
import { checkGeneratorVersions, inRange } from '../../../src/cli/types/generator-versions.js';
import { typesCommand } from '../../../src/cli/types/types.js';

const ROOT = resolve(import.meta.dirname, '../../..');

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((root) => rm(root, { recursive: true, force: true })));
});

/** A folder outside the repository (no node_modules above it) holding a package.json of each version at its path. */
async function fakeProject(packages: Readonly<Record<string, string>>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'svc-webhooks-generators-'));
  made.push(root);
  for (const [path, version] of Object.entries(packages)) {
    await mkdir(join(root, path), { recursive: true });
    await writeFile(join(root, path, 'package.json'), version.startsWith('{') ? version : JSON.stringify({ name: path.split('node_modules/').at(-1), version }));
  }
  return root;
}

/** `svc-webhooks types …args`, the generators looked up from `from`. */
async function types(args: readonly string[], from: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const io = { out: (line: string) => stdout.push(`${line}\n`), err: (line: string) => stderr.push(`${line}\n`), stdin: async () => Buffer.alloc(0) };
  const code = await typesCommand.run(args, io, from);
  return { code, stdout: stdout.join(''), stderr: stderr.join('') };
}

const INSTALL = 'npm install --save-dev openapi-typescript@7 typescript@5 @redocly/openapi-core@1';

describe('svc-webhooks types and the versions of its generators', () => {
  it('refuses TypeScript 7 and openapi-core 2 in one line naming found and wanted, exit 2, before it reads the contract', async () => {
    const root = await fakeProject({
      'node_modules/openapi-typescript': '7.13.0',
      'node_modules/typescript': '7.0.2',
      'node_modules/@redocly/openapi-core': '2.64.0',
    });
    // A contract that is not there: reading it first would say so instead.
    const run = await types([join(root, 'absent.yaml'), '-o', join(root, 'webhook-types.ts')], root);
    expect(run).toEqual({
      code: 2,
      stdout: '',
      stderr: `svc-webhooks types: unsupported generator version(s): found typescript 7.0.2, @redocly/openapi-core 2.64.0; wanted typescript ^5.0.0, @redocly/openapi-core ^1.34.0: ${INSTALL}\n`,
    });
  });

  it.each([
    ['openapi-typescript 6', { 'node_modules/openapi-typescript': '6.7.6' }, 'openapi-typescript 6.7.6; wanted openapi-typescript ^7.0.0'],
    ['openapi-core older than 1.34', { 'node_modules/@redocly/openapi-core': '1.33.1' }, '@redocly/openapi-core 1.33.1; wanted @redocly/openapi-core ^1.34.0'],
    ['a prerelease', { 'node_modules/openapi-typescript': '8.0.0-rc.1' }, 'openapi-typescript 8.0.0-rc.1; wanted openapi-typescript ^7.0.0'],
    ['a package.json that is not JSON', { 'node_modules/openapi-typescript': '{' }, 'openapi-typescript (unreadable); wanted openapi-typescript ^7.0.0'],
    ['a package.json without a version', { 'node_modules/openapi-typescript': '{}' }, 'openapi-typescript (unreadable); wanted openapi-typescript ^7.0.0'],
  ])('refuses %s', async (_name, packages, found) => {
    await expect(checkGeneratorVersions(await fakeProject(packages))).rejects.toThrow(`unsupported generator version(s): found ${found}: ${INSTALL}`);
  });

  it('judges the TypeScript openapi-typescript loads: its own below it, not the project’s', async () => {
    const root = await fakeProject({
      'node_modules/openapi-typescript': '7.13.0',
      'node_modules/openapi-typescript/node_modules/typescript': '5.9.3',
      'node_modules/typescript': '7.0.2',
      'node_modules/@redocly/openapi-core': '1.34.24',
    });
    await expect(checkGeneratorVersions(root)).resolves.toBeUndefined();
    // The project's own, found above the folder looked from.
    const inner = join(root, 'src', 'cli');
    await mkdir(inner, { recursive: true });
    await expect(checkGeneratorVersions(inner)).resolves.toBeUndefined();
  });

  it('follows a linked package to the folder its imports resolve from, as pnpm lays them out', async () => {
    const root = await fakeProject({
      '.pnpm/openapi-typescript@7.13.0/node_modules/openapi-typescript': '7.13.0',
      '.pnpm/openapi-typescript@7.13.0/node_modules/typescript': '5.9.3',
      'node_modules/typescript': '7.0.2',
    });
    await symlink(join(root, '.pnpm/openapi-typescript@7.13.0/node_modules/openapi-typescript'), join(root, 'node_modules/openapi-typescript'));
    await expect(checkGeneratorVersions(root)).resolves.toBeUndefined();
    // Beside the link, rather than at its target, TypeScript 7 would be found.
    const unlinked = await fakeProject({ 'node_modules/openapi-typescript': '7.13.0', 'node_modules/typescript': '7.0.2' });
    await expect(checkGeneratorVersions(unlinked)).rejects.toThrow('found typescript 7.0.2;');
  });

  it('leaves a package it does not find to its import, which names the install', async () => {
    await expect(checkGeneratorVersions(await fakeProject({}))).resolves.toBeUndefined();
    // No openapi-typescript: no TypeScript of its to judge, whatever the project holds.
    await expect(checkGeneratorVersions(await fakeProject({ 'node_modules/typescript': '7.0.2' }))).resolves.toBeUndefined();
  });

  it("passes the generators this repository installs, from svc-webhooks' own folder", async () => {
    await expect(checkGeneratorVersions()).resolves.toBeUndefined();
  });

  it("wants svc-webhooks' peer ranges, and the major of TypeScript that openapi-typescript names", async () => {
    const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> };
    const generator = JSON.parse(await readFile(join(ROOT, 'node_modules/openapi-typescript/package.json'), 'utf8')) as { peerDependencies: Record<string, string> };
    const range = (name: string): string => GENERATOR_RANGES.find((peer) => peer.name === name)!.range;
    expect(range('openapi-typescript')).toBe(manifest.peerDependencies['openapi-typescript']);
    expect(range('@redocly/openapi-core')).toBe(manifest.peerDependencies['@redocly/openapi-core']);
    expect(range('typescript').match(/^\^(\d+)\./)![1]).toBe(generator.peerDependencies.typescript!.match(/^\^(\d+)\./)![1]);
  });
});

describe('inRange', () => {
  it.each([
    ['7.0.0', '^7.0.0', true],
    ['7.13.0', '^7.0.0', true],
    ['6.9.9', '^7.0.0', false],
    ['8.0.0', '^7.0.0', false],
    ['1.34.0', '^1.34.0', true],
    ['1.34.24', '^1.34.0', true],
    ['1.35.0', '^1.34.0', true],
    ['1.33.99', '^1.34.0', false],
    ['1.34.1', '^1.34.2', false],
    ['2.64.0', '^1.34.0 || ^2.0.0', true],
    ['3.0.0', '^1.34.0 || ^2.0.0', false],
    ['7.0.0-rc.1', '^7.0.0', false],
    ['7.0', '^7.0.0', false],
    ['7.0.0', '~7.0.0', false],
  ])('%s in %s: %s', (version, range, inside) => {
    expect(inRange(version, range)).toBe(inside);
  });
});

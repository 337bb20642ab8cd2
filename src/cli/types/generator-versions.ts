/**
 * The versions of the generators `types` runs on, read from each one's package.json where the import of it
 * resolves, before anything of them runs: openapi-typescript on TypeScript 7, which no longer ships the
 * compiler API it builds with, fails deep inside with a TypeError, and another major of Redocly's
 * openapi-core may fail as obscurely.
 */
import { readFile, realpath } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ContractError } from '../shared/contract-error.js';
import { GENERATOR_INSTALL, GENERATOR_RANGES } from '../shared/peers.js';

/** Where svc-webhooks' own imports resolve from: its installed folder, so the node_modules folders above it. */
const HERE = dirname(fileURLToPath(import.meta.url));

/**
 * Throws a one-line `ContractError` naming the versions found and wanted when a generator package is
 * installed outside its range. A package that is not found is left to its import, which names the install
 * when it is missing (and a resolver without node_modules folders, such as Yarn's, still loads it).
 */
export async function checkGeneratorVersions(from = HERE): Promise<void> {
  const folders = new Map<string, string>();
  const wrong: Array<{ readonly name: string; readonly version: string; readonly range: string }> = [];
  // In order: a peer's `of` comes before it.
  for (const { name, range, of } of GENERATOR_RANGES) {
    const start = of === undefined ? from : folders.get(of);
    const installed = start === undefined ? undefined : await installedPackage(name, start);
    if (installed === undefined) continue;
    folders.set(name, installed.folder);
    if (!inRange(installed.version, range)) wrong.push({ name, version: installed.version, range });
  }
  if (wrong.length === 0) return;
  const each = (field: 'version' | 'range'): string => wrong.map((one) => `${one.name} ${one[field]}`).join(', ');
  throw new ContractError(`unsupported generator version(s): found ${each('version')}; wanted ${each('range')}: npm install --save-dev ${GENERATOR_INSTALL.join(' ')}`);
}

/**
 * The package `name` as Node's resolution finds it from `folder`: in the nearest `node_modules` above, its
 * folder with links resolved (the folder its own imports resolve from) and its version.
 */
async function installedPackage(name: string, folder: string): Promise<{ folder: string; version: string } | undefined> {
  for (let at = folder; ; at = dirname(at)) {
    const candidate = join(at, 'node_modules', name);
    const text = await readFile(join(candidate, 'package.json'), 'utf8').catch(() => undefined);
    if (text !== undefined) return { folder: await realpath(candidate), version: versionOf(text) };
    if (dirname(at) === at) return undefined;
  }
}

/** The `version` of a package.json's text; `(unreadable)`, never in a range, when it has none. */
function versionOf(text: string): string {
  try {
    const { version } = JSON.parse(text) as { version?: unknown };
    if (typeof version === 'string') return version;
  } catch {
    // Told as a version out of range: reinstalling is the cure.
  }
  return '(unreadable)';
}

/** Whether `version` (`x.y.z`, a prerelease never) lies in one of the caret ranges of `range`. */
export function inRange(version: string, range: string): boolean {
  const parts = (text: string): number[] | undefined => /^(\d+)\.(\d+)\.(\d+)$/.exec(text)?.slice(1).map(Number);
  const have = parts(version);
  if (have === undefined) return false;
  return range.split(' || ').some((caret) => {
    const low = parts(caret.replace(/^\^/, ''));
    if (low === undefined) return false;
    // ^a.b.c: the same major, at least b.c (a 0 major is not used by these packages).
    return have[0] === low[0] && (have[1]! > low[1]! || (have[1] === low[1] && have[2]! >= low[2]!));
  });
}

import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The package root, where package.json is. */
export const PACKAGE_ROOT = new URL('../..', import.meta.url).pathname;

/**
 * Packs the package at `root` as `npm publish` would, into a new temporary
 * directory. Returns the tarball's path and the package name. Build first:
 * packing does not.
 */
export function packTarball(root = PACKAGE_ROOT): { tarball: string; name: string } {
  const destination = mkdtempSync(join(tmpdir(), 'svc-webhooks-pack-'));
  const output = execFileSync('npm', ['pack', '--json', '--pack-destination', destination], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [packed] = JSON.parse(output) as { filename: string; name: string }[];
  if (packed === undefined) throw new Error('npm pack reported no tarball');
  return { tarball: join(destination, packed.filename), name: packed.name };
}

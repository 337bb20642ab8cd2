import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The package root, where package.json is. */
export const PACKAGE_ROOT = new URL('../..', import.meta.url).pathname;

/**
 * Packs the package at `root` as `npm publish` would, into a new temporary
 * directory, building it first through its `prepack` script. Returns the
 * tarball's path and the package name.
 */
export function packTarball(root = PACKAGE_ROOT): { tarball: string; name: string } {
  const destination = mkdtempSync(join(tmpdir(), 'svc-webhooks-pack-'));
  const output = execFileSync('npm', ['pack', '--json', '--pack-destination', destination], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // The prepack build prints to the same output before npm's JSON, which starts on a line of its own.
  const [packed] = JSON.parse(output.slice(output.search(/^\[$/m))) as { filename: string; name: string }[];
  if (packed === undefined) throw new Error('npm pack reported no tarball');
  return { tarball: join(destination, packed.filename), name: packed.name };
}

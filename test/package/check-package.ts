/**
 * Lints the packed tarball, exactly what `npm publish` would upload: publint
 * (package.json against the files) and Are The Types Wrong (types under
 * node16/nodenext for both import and require, and under bundler resolution).
 * Any message from either fails. Expects a fresh build in dist/.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { PACKAGE_ROOT, packTarball } from './pack.js';

const { tarball } = packTarball();
console.log(`packed ${tarball}`);

const bytes = readFileSync(tarball);
const lint = await publint({
  pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) },
  level: 'suggestion',
  strict: true,
});
for (const message of lint.messages) console.error(`publint ${message.type}: ${formatMessage(message, lint.pkg)}`);
console.log(`publint: ${lint.messages.length} problem(s)`);

let typesOk = true;
try {
  // node16 profile: node16/nodenext (ESM and CJS) and bundler; node10 cannot see subpaths at all.
  execFileSync(join(PACKAGE_ROOT, 'node_modules/.bin/attw'), [tarball, '--profile', 'node16', '--no-emoji', '--no-color'], { stdio: 'inherit' });
} catch {
  typesOk = false;
}
if (lint.messages.length > 0 || !typesOk) {
  console.error('check:package failed');
  process.exitCode = 1;
}

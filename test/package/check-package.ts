/**
 * Lints the packed tarball, exactly what `npm publish` would upload. First it
 * removes dist/, as on a fresh clone, so the tarball holds only what `npm pack`
 * built itself (the `prepack` script). Then: every file package.json names
 * (each `exports` target, `main`, `types`, `module`, the bin) and every file
 * the README links to (the npm page shows it) is in the tarball, and nothing
 * of the tests or the TypeScript sources is; publint
 * (package.json against the files); Are The Types Wrong (types under
 * node16/nodenext for both import and require, and under bundler
 * resolution). Any finding fails.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { packageLinks } from '../../scripts/doc-links.js';
import { PACKAGE_ROOT, packTarball } from './pack.js';
import { missingFromPackage, namedFiles, type Manifest } from './packed-files.js';

rmSync(join(PACKAGE_ROOT, 'dist'), { recursive: true, force: true });
const { tarball } = packTarball();
console.log(`packed ${tarball} from a checkout without dist/`);

const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as Manifest;
const listed = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
  .split('\n')
  .filter((line) => line !== '')
  .map((line) => line.replace(/^package\//, ''));
const linked = packageLinks(readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8')).map(({ path }) => path);
const problems = missingFromPackage(manifest, listed, linked);
for (const problem of problems) console.error(`files: ${problem}`);
console.log(`files: ${listed.length} packed, ${namedFiles(manifest).length} named by package.json, ${problems.length} problem(s)`);

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
if (problems.length > 0 || lint.messages.length > 0 || !typesOk) {
  console.error('check:package failed');
  process.exitCode = 1;
}

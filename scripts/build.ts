/**
 * Builds dist/esm (import) and dist/cjs (require), each with its declarations.
 * Unbundled, so every subpath of one format shares one copy of the core.
 */
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from './pack.js';

const tsc = join(PACKAGE_ROOT, 'node_modules/typescript/bin/tsc');
rmSync(join(PACKAGE_ROOT, 'dist'), { recursive: true, force: true });
for (const config of ['tsconfig.build.json', 'tsconfig.build-cjs.json']) {
  execFileSync(process.execPath, [tsc, '-p', config], { cwd: PACKAGE_ROOT, stdio: 'inherit' });
}
// The package is "type": "module"; this scope makes Node and TypeScript read dist/cjs as CommonJS.
writeFileSync(join(PACKAGE_ROOT, 'dist/cjs/package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
console.log('built dist/esm and dist/cjs');

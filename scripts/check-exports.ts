/**
 * Checks that package.json "exports", "main", "module" and "types" match
 * build/entries.ts; with --write, rewrites them to match instead.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { expectedPackageFields, staleFields } from '../build/exports-map.js';

const path = new URL('../package.json', import.meta.url);
const pkg = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
const stale = staleFields(pkg);

if (process.argv.includes('--write')) {
  writeFileSync(path, `${JSON.stringify({ ...pkg, ...expectedPackageFields() }, null, 2)}\n`);
  console.log(`package.json: ${stale.length} field(s) rewritten from build/entries.ts`);
} else if (stale.length > 0) {
  console.error(`package.json disagrees with build/entries.ts in: ${stale.join(', ')}; run \`npm run exports:write\``);
  process.exitCode = 1;
} else {
  console.log('package.json exports match build/entries.ts');
}

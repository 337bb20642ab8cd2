/**
 * The last step of `npm run build`: bundles the ES module build, which tsc
 * emits one file per source module, into one file per entry point of
 * package.json (its `exports` and its `bin`). Node loads an ES module graph
 * file by file, and a cold start (a serverless function's first request)
 * paid for every file: the Fetch entry loaded 25. Each entry then holds its
 * own copy of the code it uses, shared chunks costing a file each again;
 * `WebhookVerificationError` answers `instanceof` for any copy's errors. The
 * declaration files stay as tsc wrote them; the CommonJS build is left alone
 * (require is cheap per file).
 *
 * First, from the same module files, the web build: one file per entry
 * point with a `workerd` condition (and its `edge-light` and `worker`
 * twins), for runtimes that may lack `node:` modules (Vercel Edge,
 * Cloudflare Workers without `nodejs_compat`). Each `*.web.js` module takes
 * the place of its namesake (`runtime-crypto.web.js` of `runtime-crypto.js`,
 * `diagnostics-channel.web.js` of `node:diagnostics_channel`), and any other
 * `node:` import fails the build.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { build } from 'esbuild';
import { webModules } from './web-modules.js';

const ROOT = new URL('..', import.meta.url).pathname;
const ESM = join(ROOT, 'dist/esm');
const BUNDLED = join(ROOT, 'dist/esm-bundled');

interface PackageJson {
  readonly exports: Record<string, string | { readonly workerd?: { readonly default: string }; readonly import: { readonly default: string } }>;
  readonly bin: Record<string, string>;
}

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson;
// Every export but ./package.json, which is no module.
const modules = Object.values(pkg.exports).flatMap((entry) => (typeof entry === 'string' ? [] : [entry.import.default]));
const entryPoints = [...modules, ...Object.values(pkg.bin)].map((path) => join(ROOT, path));

const webEntries = Object.values(pkg.exports).flatMap((entry) =>
  typeof entry === 'string' || entry.workerd === undefined ? [] : [{ in: join(ROOT, entry.import.default), out: join(ROOT, entry.workerd.default).replace(/\.js$/, '') }],
);
const WEB = join(ROOT, 'dist/web');

rmSync(WEB, { recursive: true, force: true });
await build({
  entryPoints: webEntries,
  outdir: WEB,
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  packages: 'external',
  plugins: [webModules(ROOT, join(ESM, 'src/process/diagnostics-channel.web.js'), '.js')],
  logLevel: 'warning',
});

rmSync(BUNDLED, { recursive: true, force: true });
await build({
  entryPoints,
  outbase: ESM,
  outdir: BUNDLED,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Peers and node: builtins stay imports: a user's own copy is the one to use.
  packages: 'external',
  logLevel: 'warning',
});

// Out with tsc's module files, in with the bundles; the .d.ts files stay.
for (const file of walk(ESM)) if (file.endsWith('.js')) rmSync(file);
for (const file of walk(BUNDLED)) {
  const target = join(ESM, relative(BUNDLED, file));
  mkdirSync(dirname(target), { recursive: true });
  renameSync(file, target);
}
rmSync(BUNDLED, { recursive: true, force: true });
console.log(`bundled ${entryPoints.length} entry points into dist/esm, ${webEntries.length} into dist/web`);

function* walk(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else yield path;
  }
}

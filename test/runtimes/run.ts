/**
 * Runs every file of test/runtimes/cases/ against the built package on Node
 * (the one running this, and 22 and 24 from the npm registry's platform
 * packages), Bun, Deno and workerd (through miniflare, with nodejs_compat), and fails
 * if any case fails or any runtime does not report. Expects a fresh dist/.
 *
 * One esbuild bundle per shell, with the package itself resolved through its
 * "exports" to dist/. Node, Bun and Deno load dist/ as published files and
 * other packages (hono) from node_modules, so the cases and an adapter share
 * one copy; workerd gets everything bundled in, as a Worker would.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { Miniflare } from 'miniflare';
import { nodeBinary, OTHER_NODES } from '../helpers/node-versions.js';
import { PACKAGE_ROOT } from '../package/pack.js';

const COMPATIBILITY_DATE = '2025-07-01';
const TIMEOUT_MS = 60_000;
const BIN = join(PACKAGE_ROOT, 'node_modules/.bin');
const SUMMARY = /^(\w+): (\d+) passed, (\d+) failed$/;

interface Manifest {
  name: string;
  exports: Record<string, { import?: { default?: string } }>;
}
const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as Manifest;
const caseFiles = readdirSync(join(PACKAGE_ROOT, 'test/runtimes/cases')).filter((file) => file.endsWith('.ts')).sort();

/** The entry module of a shell: imports every case file, so a new case is just a new file. */
function entrySource(shell: 'cli' | 'worker'): string {
  const imports = caseFiles.map((file, i) => `import * as case${i} from './test/runtimes/cases/${file}';`);
  const list = `[${caseFiles.map((_, i) => `case${i}`).join(', ')}]`;
  const body =
    shell === 'cli'
      ? `import { main } from './test/runtimes/shells/cli.ts';\nawait main(${list});`
      : `import { conformanceWorker } from './test/runtimes/shells/worker.ts';\nexport default conformanceWorker(${list});`;
  return `${imports.join('\n')}\n${body}\n`;
}

/** Resolves `svc-webhooks[/subpath]` as Node would for `import`, to the file in dist/. */
function builtPackage(external: boolean): Plugin {
  const prefix = new RegExp(`^${manifest.name}(/|$)`);
  return {
    name: 'built-package',
    setup(esbuild) {
      esbuild.onResolve({ filter: prefix }, ({ path }) => {
        const subpath = path === manifest.name ? '.' : `./${path.slice(manifest.name.length + 1)}`;
        const target = manifest.exports[subpath]?.import?.default;
        if (target === undefined) return { errors: [{ text: `${path} is not in package.json "exports"` }] };
        const file = join(PACKAGE_ROOT, target);
        return external ? { path: pathToFileURL(file).href, external: true } : { path: file };
      });
    },
  };
}

async function bundle(shell: 'cli' | 'worker', outfile: string): Promise<void> {
  await build({
    stdin: { contents: entrySource(shell), resolveDir: PACKAGE_ROOT, sourcefile: `conformance-${shell}.ts`, loader: 'ts' },
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    target: 'es2022',
    external: ['node:*'],
    packages: shell === 'cli' ? 'external' : 'bundle',
    plugins: [builtPackage(shell === 'cli')],
    logLevel: 'warning',
  });
}

interface Run {
  readonly runtime: string;
  readonly ok: boolean;
  readonly output: string;
}

function runProcess(runtime: string, command: string, args: readonly string[], cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], timeout: TIMEOUT_MS });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk));
    child.on('error', (error) => resolve({ runtime, ok: false, output: `${output}${error.message}\n` }));
    child.on('close', (code, signal) => resolve({ runtime, ok: code === 0, output: code === 0 ? output : `${output}exit ${code ?? signal}\n` }));
  });
}

async function runWorkerd(scriptPath: string): Promise<Run> {
  const { version } = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'node_modules/workerd/package.json'), 'utf8')) as { version: string };
  const header = `workerd ${version} (miniflare, compatibility date ${COMPATIBILITY_DATE}, nodejs_compat)\n`;
  const miniflare = new Miniflare({
    name: 'conformance',
    modules: true,
    script: readFileSync(scriptPath, 'utf8'),
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: ['nodejs_compat'],
    // The cases reach the handlers they serve through workerd's own dispatch.
    serviceBindings: { SELF: 'conformance' },
  });
  try {
    const response = await miniflare.dispatchFetch('http://conformance.test/');
    return { runtime: 'workerd', ok: response.ok, output: header + (await response.text()) };
  } catch (error) {
    return { runtime: 'workerd', ok: false, output: `${header}${String(error)}\n` };
  } finally {
    // Cleanup only: a start-up failure is already in the report.
    await miniflare.dispose().catch(() => undefined);
  }
}

/** The counts of a run, if it closed with its own runtime's summary line and exited cleanly. */
function summary(run: Run): { passed: number; failed: number } | undefined {
  // The summary is the last line the set prints; the receivers' log lines (stderr) may come after it.
  const match = run.output
    .trimEnd()
    .split('\n')
    .reverse()
    .map((line) => SUMMARY.exec(line))
    .find((found) => found !== null) ?? null;
  if (!run.ok || match === null || match[1] !== run.runtime) return undefined;
  return { passed: Number(match[2]), failed: Number(match[3]) };
}

// Inside the package (so the CLI bundle finds node_modules) but outside
// node_modules (where Deno would take it for an npm package).
const cache = join(PACKAGE_ROOT, '.cache');
mkdirSync(cache, { recursive: true });
const workdir = mkdtempSync(join(cache, 'conformance-'));
try {
  const cli = join(workdir, 'conformance.mjs');
  const worker = join(workdir, 'worker.mjs');
  await Promise.all([bundle('cli', cli), bundle('worker', worker)]);
  const nodes = await Promise.all(OTHER_NODES.map(async (major) => [major, await nodeBinary(major)] as const));
  const runs = await Promise.all([
    runProcess(`node${process.versions.node.split('.')[0]}`, process.execPath, [cli], workdir),
    ...nodes.map(([major, binary]) => runProcess(`node${major}`, binary, [cli], workdir)),
    runProcess('bun', join(BIN, 'bun'), [cli], workdir),
    // Deno reads package.json here to find packages in node_modules. h3 2's server layer (srvx) reads
    // whether to color its output at import: the only environment the cases need.
    runProcess('deno', join(BIN, 'deno'), ['run', '--quiet', '--no-lock', '--allow-net=127.0.0.1', '--allow-env=FORCE_COLOR,NO_COLOR,TERM', cli], PACKAGE_ROOT),
    runWorkerd(worker),
  ]);
  let passed = 0;
  let failed = 0;
  const counts = new Set<number>();
  for (const run of runs) {
    console.log(`--- ${run.runtime}\n${run.output.trimEnd()}`);
    const result = summary(run);
    if (result === undefined) {
      console.log(`${run.runtime} did not finish the conformance set`);
      failed++;
      continue;
    }
    passed += result.passed;
    failed += result.failed;
    counts.add(result.passed + result.failed);
  }
  if (counts.size > 1) {
    console.log('the runtimes ran different numbers of cases');
    failed++;
  }
  console.log(`runtimes: ${passed} passed, ${failed} failed`);
  if (failed > 0) process.exitCode = 1;
} finally {
  rmSync(workdir, { recursive: true, force: true });
}

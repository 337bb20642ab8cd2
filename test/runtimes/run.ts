/**
 * Runs every file of test/runtimes/cases/ and test/runtimes/web-cases/
 * against the built package on Node (the one running this, and 22 and 24
 * from the npm registry's platform packages), Bun, Deno and workerd (through
 * miniflare, with nodejs_compat); and the web cases alone, which need no
 * node: module, on workerd without nodejs_compat and on Vercel's Edge
 * runtime (the edge-runtime package: no process, no require). Fails if any
 * case fails or any runtime does not report. Expects a fresh dist/.
 *
 * One esbuild bundle per shell, with the package itself resolved through its
 * "exports" to dist/, under the conditions the runtime's bundler uses
 * (wrangler's `workerd`, Next.js's `edge-light`, else `import`). Node, Bun
 * and Deno load dist/ as published files and other packages (hono) from
 * node_modules, so the cases and an adapter share one copy; workerd and the
 * Edge runtime get everything bundled in, as a Worker or an Edge function would.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { EdgeRuntime, runServer } from 'edge-runtime';
import { Miniflare } from 'miniflare';
import { nodeBinary, OTHER_NODES } from '../helpers/node-versions.js';
import { PACKAGE_ROOT } from '../package/pack.js';

const COMPATIBILITY_DATE = '2025-07-01';
const TIMEOUT_MS = 60_000;
const BIN = join(PACKAGE_ROOT, 'node_modules/.bin');
const SUMMARY = /^([\w-]+): (\d+) passed, (\d+) failed$/;

interface Manifest {
  name: string;
  exports: Record<string, Record<string, { default?: string } | undefined>>;
}
const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as Manifest;
const caseFolders = { all: 'test/runtimes/cases', web: 'test/runtimes/web-cases' } as const;
const filesOf = (folder: string): string[] => readdirSync(join(PACKAGE_ROOT, folder)).filter((file) => file.endsWith('.ts')).sort().map((file) => `./${folder}/${file}`);

/** Where a shell runs: its entry, the case folders it runs, the package conditions its bundler resolves. */
interface Shell {
  readonly name: 'cli' | 'worker' | 'worker-no-compat' | 'edge';
  readonly folders: readonly (keyof typeof caseFolders)[];
  readonly conditions: readonly string[];
}
const SHELLS = {
  cli: { name: 'cli', folders: ['all', 'web'], conditions: [] },
  worker: { name: 'worker', folders: ['all', 'web'], conditions: ['workerd', 'worker'] },
  workerNoCompat: { name: 'worker-no-compat', folders: ['web'], conditions: ['workerd', 'worker'] },
  edge: { name: 'edge', folders: ['web'], conditions: ['edge-light', 'worker'] },
} as const satisfies Record<string, Shell>;

/** The entry module of a shell: imports every case file of its folders, so a new case is just a new file. */
function entrySource(shell: Shell): string {
  const files = shell.folders.flatMap((folder) => filesOf(caseFolders[folder]));
  const imports = files.map((file, i) => `import * as case${i} from '${file}';`);
  const list = `[${files.map((_, i) => `case${i}`).join(', ')}]`;
  const body =
    shell.name === 'cli'
      ? `import { main } from './test/runtimes/shells/cli.ts';\nawait main(${list});`
      : shell.name === 'edge'
        ? `import { edgeConformance } from './test/runtimes/shells/edge.ts';\nedgeConformance(${list});`
        : `import { conformanceWorker } from './test/runtimes/shells/worker.ts';\nexport default conformanceWorker(${list});`;
  return `${imports.join('\n')}\n${body}\n`;
}

/** Resolves `svc-webhooks[/subpath]` as a bundler would under `conditions`, then `import`, to the file in dist/. */
function builtPackage(external: boolean, conditions: readonly string[]): Plugin {
  const prefix = new RegExp(`^${manifest.name}(/|$)`);
  return {
    name: 'built-package',
    setup(esbuild) {
      esbuild.onResolve({ filter: prefix }, ({ path }) => {
        const subpath = path === manifest.name ? '.' : `./${path.slice(manifest.name.length + 1)}`;
        const entry = manifest.exports[subpath];
        const condition = [...conditions, 'import'].find((name) => entry?.[name] !== undefined);
        const target = condition === undefined ? undefined : entry?.[condition]?.default;
        if (target === undefined) return { errors: [{ text: `${path} is not in package.json "exports"` }] };
        const file = join(PACKAGE_ROOT, target);
        return external ? { path: pathToFileURL(file).href, external: true } : { path: file };
      });
    },
  };
}

async function bundle(shell: Shell, outfile: string): Promise<void> {
  const cli = shell.name === 'cli';
  await build({
    stdin: { contents: entrySource(shell), resolveDir: PACKAGE_ROOT, sourcefile: `conformance-${shell.name}.ts`, loader: 'ts' },
    outfile,
    bundle: true,
    // An Edge function is a script.
    format: shell.name === 'edge' ? 'iife' : 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    conditions: [...shell.conditions],
    target: 'es2022',
    // Where the runtime has no node: module, one left in fails the load, as it would there.
    external: ['node:*'],
    packages: cli ? 'external' : 'bundle',
    plugins: [builtPackage(cli, shell.conditions)],
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

function packageVersion(name: string): string {
  return (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

async function runWorkerd(scriptPath: string, nodejsCompat: boolean): Promise<Run> {
  const runtime = nodejsCompat ? 'workerd' : 'workerd-no-compat';
  const header = `workerd ${packageVersion('workerd')} (miniflare, compatibility date ${COMPATIBILITY_DATE}, ${nodejsCompat ? 'nodejs_compat' : 'no nodejs_compat'})\n`;
  const miniflare = new Miniflare({
    name: 'conformance',
    modules: true,
    script: readFileSync(scriptPath, 'utf8'),
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: nodejsCompat ? ['nodejs_compat'] : [],
    // The cases reach the handlers they serve through workerd's own dispatch.
    serviceBindings: { SELF: 'conformance' },
  });
  try {
    const response = await miniflare.dispatchFetch('http://conformance.test/');
    return { runtime, ok: response.ok, output: header + (await response.text()) };
  } catch (error) {
    return { runtime, ok: false, output: `${header}${String(error)}\n` };
  } finally {
    // Cleanup only: a start-up failure is already in the report.
    await miniflare.dispose().catch(() => undefined);
  }
}

/**
 * The Edge runtime running the script at `scriptPath`, served by edge-runtime's own server, which the
 * cases' requests reach over HTTP.
 */
async function runEdge(scriptPath: string): Promise<Run> {
  const header = `edge-runtime ${packageVersion('edge-runtime')} (Vercel Edge: no process, no require)\n`;
  try {
    const runtime = new EdgeRuntime({ initialCode: readFileSync(scriptPath, 'utf8') });
    const server = await runServer({ runtime, port: 0, host: '127.0.0.1' });
    try {
      const output = await runtime.evaluate<Promise<string>>(`runConformance(${JSON.stringify(server.url.replace(/\/$/, ''))})`);
      return { runtime: 'edge-runtime', ok: true, output: header + output };
    } finally {
      await server.close();
    }
  } catch (error) {
    return { runtime: 'edge-runtime', ok: false, output: `${header}${String(error)}\n` };
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
  const workerNoCompat = join(workdir, 'worker-no-compat.mjs');
  const edge = join(workdir, 'edge.js');
  await Promise.all([bundle(SHELLS.cli, cli), bundle(SHELLS.worker, worker), bundle(SHELLS.workerNoCompat, workerNoCompat), bundle(SHELLS.edge, edge)]);
  const nodes = await Promise.all(OTHER_NODES.map(async (major) => [major, await nodeBinary(major)] as const));
  const runs = await Promise.all([
    runProcess(`node${process.versions.node.split('.')[0]}`, process.execPath, [cli], workdir),
    ...nodes.map(([major, binary]) => runProcess(`node${major}`, binary, [cli], workdir)),
    runProcess('bun', join(BIN, 'bun'), [cli], workdir),
    // Deno reads package.json here to find packages in node_modules. h3 2's server layer (srvx) reads
    // whether to color its output at import: the only environment the cases need.
    runProcess('deno', join(BIN, 'deno'), ['run', '--quiet', '--no-lock', '--allow-net=127.0.0.1', '--allow-env=FORCE_COLOR,NO_COLOR,TERM', cli], PACKAGE_ROOT),
    runWorkerd(worker, true),
    runWorkerd(workerNoCompat, false),
    runEdge(edge),
  ]);
  // Runtimes without node: modules run the web cases alone: their counts are compared among themselves.
  const webOnly = new Set(['workerd-no-compat', 'edge-runtime']);
  let passed = 0;
  let failed = 0;
  const counts = { all: new Set<number>(), web: new Set<number>() };
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
    counts[webOnly.has(run.runtime) ? 'web' : 'all'].add(result.passed + result.failed);
  }
  if (counts.all.size > 1 || counts.web.size > 1) {
    console.log('the runtimes ran different numbers of cases');
    failed++;
  }
  console.log(`runtimes: ${passed} passed, ${failed} failed`);
  if (failed > 0) process.exitCode = 1;
} finally {
  rmSync(workdir, { recursive: true, force: true });
}

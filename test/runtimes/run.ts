/**
 * Runs every file of test/runtimes/cases/ and test/runtimes/web-cases/
 * against the package on Node (the one running this, and 22 and 24 from the
 * npm registry's platform packages), Bun, Deno and workerd (through
 * miniflare, with nodejs_compat); and the web cases alone, which need no
 * node: module, on workerd without nodejs_compat and on Vercel's Edge
 * runtime (the edge-runtime package: no process, no require). Fails if any
 * case fails, any bundle does not build or any runtime does not report.
 *
 * It packs the package first, as `npm publish` would (the `prepack` script
 * builds dist/). One esbuild bundle per shell. Node, Bun and Deno load dist/
 * as published files, each `svc-webhooks[/subpath]` resolved through
 * package.json's "exports" (`import`), and other packages (hono) from
 * node_modules, so the cases and an adapter share one copy. workerd and the
 * Edge runtime get everything bundled in, as a Worker or an Edge function
 * would, with the package as a user has it: the tarball unpacked into
 * node_modules of an empty project, resolved there by esbuild itself under
 * one condition of the packed package.json: `workerd` (wrangler's first)
 * without nodejs_compat, `edge-light` (Next.js's first) on the Edge runtime,
 * `worker` (the generic one) with nodejs_compat. A bundler falls back from
 * its first condition to the next, so one condition each shows that each
 * leads to files that are packed and load, where a fallback would hide one
 * that does not.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { EdgeRuntime, runServer } from 'edge-runtime';
import { Miniflare } from 'miniflare';
import { nodeBinary, OTHER_NODES } from '../helpers/node-versions.js';
import { PACKAGE_ROOT, packTarball } from '../package/pack.js';

const COMPATIBILITY_DATE = '2025-07-01';
const TIMEOUT_MS = 60_000;
const BIN = join(PACKAGE_ROOT, 'node_modules/.bin');
const SUMMARY = /^([\w-]+): (\d+) passed, (\d+) failed$/;

interface Manifest {
  name: string;
  exports: Record<string, { import?: { default?: string } } | undefined>;
}
const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as Manifest;
const caseFolders = { all: 'test/runtimes/cases', web: 'test/runtimes/web-cases' } as const;
const filesOf = (folder: string): string[] => readdirSync(join(PACKAGE_ROOT, folder)).filter((file) => file.endsWith('.ts')).sort().map((file) => `./${folder}/${file}`);

/** Where a shell runs: its entry, the case folders it runs, the package condition its bundle resolves under. */
interface Shell {
  readonly name: 'cli' | 'worker' | 'worker-no-compat' | 'edge';
  readonly folders: readonly (keyof typeof caseFolders)[];
  /** The condition of the packed package a bundled shell resolves it under; the CLI shell loads dist/ through `import`. */
  readonly condition?: 'workerd' | 'edge-light' | 'worker';
}
const SHELLS = {
  cli: { name: 'cli', folders: ['all', 'web'] },
  worker: { name: 'worker', folders: ['all', 'web'], condition: 'worker' },
  workerNoCompat: { name: 'worker-no-compat', folders: ['web'], condition: 'workerd' },
  edge: { name: 'edge', folders: ['web'], condition: 'edge-light' },
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

const packageImports = new RegExp(`^${manifest.name}(/|$)`);

/** Resolves `svc-webhooks[/subpath]` through package.json's `import` condition to the file in dist/, left for the runtime to load. */
function builtPackage(): Plugin {
  return {
    name: 'built-package',
    setup(esbuild) {
      esbuild.onResolve({ filter: packageImports }, ({ path }) => {
        const subpath = path === manifest.name ? '.' : `./${path.slice(manifest.name.length + 1)}`;
        const target = manifest.exports[subpath]?.import?.default;
        if (target === undefined) return { errors: [{ text: `${path} is not in package.json "exports"` }] };
        return { path: pathToFileURL(join(PACKAGE_ROOT, target)).href, external: true };
      });
    },
  };
}

/**
 * Resolves `svc-webhooks[/subpath]` as esbuild resolves it from `project`,
 * where the tarball is installed: through the packed package.json, under the
 * build's conditions, to the packed files.
 */
function packedPackage(project: string): Plugin {
  const fromProject = { fromProject: true };
  return {
    name: 'packed-package',
    setup(esbuild) {
      esbuild.onResolve({ filter: packageImports }, async ({ path, kind, pluginData }) => {
        // The resolve below comes back through this hook: esbuild's own resolution takes it from there.
        if (pluginData === fromProject) return undefined;
        const { path: file, sideEffects, errors } = await esbuild.resolve(path, { kind, resolveDir: project, pluginData: fromProject });
        return errors.length > 0 ? { errors } : { path: file, sideEffects };
      });
    },
  };
}

/** Unpacks `tarball` into node_modules of the empty `project`, as npm installs a package without dependencies. */
function install(tarball: string, name: string, project: string): void {
  const folder = join(project, 'node_modules', name);
  mkdirSync(folder, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', folder, '--strip-components=1']);
}

/**
 * Bundles `shell` into `outfile`, the package resolved by `resolver`: the CLI
 * shell with node_modules left out, the others with everything in. Answers
 * esbuild's errors where it did not build (a file the package names and the
 * tarball lacks), else undefined.
 */
async function bundle(shell: Shell, outfile: string, resolver: Plugin): Promise<string | undefined> {
  const cli = shell.condition === undefined;
  try {
    await build({
      stdin: { contents: entrySource(shell), resolveDir: PACKAGE_ROOT, sourcefile: `conformance-${shell.name}.ts`, loader: 'ts' },
      outfile,
      bundle: true,
      // An Edge function is a script.
      format: shell.name === 'edge' ? 'iife' : 'esm',
      platform: 'neutral',
      mainFields: ['module', 'main'],
      conditions: cli ? [] : [shell.condition],
      target: 'es2022',
      // Where the runtime has no node: module, one left in fails the load, as it would there.
      external: ['node:*'],
      packages: cli ? 'external' : 'bundle',
      plugins: [resolver],
      logLevel: 'warning',
    });
    return undefined;
  } catch (error) {
    // esbuild printed each error above, with its notes.
    return `its bundle did not build: ${(error as Error).message}\n`;
  }
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
// Outside the repository, so that nothing of it (tsconfig.json's paths, its node_modules) resolves the package.
const project = mkdtempSync(join(tmpdir(), 'svc-webhooks-runtimes-'));
try {
  // The prepack build writes dist/, which the CLI shell loads, from the sources the tarball is packed from.
  const { tarball, name } = packTarball();
  install(tarball, name, project);
  rmSync(dirname(tarball), { recursive: true, force: true });
  const cli = join(workdir, 'conformance.mjs');
  const worker = join(workdir, 'worker.mjs');
  const workerNoCompat = join(workdir, 'worker-no-compat.mjs');
  const edge = join(workdir, 'edge.js');
  const packed = packedPackage(project);
  const [cliFailure, workerFailure, workerNoCompatFailure, edgeFailure] = await Promise.all([
    bundle(SHELLS.cli, cli, builtPackage()),
    bundle(SHELLS.worker, worker, packed),
    bundle(SHELLS.workerNoCompat, workerNoCompat, packed),
    bundle(SHELLS.edge, edge, packed),
  ]);
  // A runtime whose bundle did not build fails with esbuild's errors; the others run.
  const unlessFailed = (failure: string | undefined, runtime: string, run: () => Promise<Run>): Promise<Run> =>
    failure === undefined ? run() : Promise.resolve({ runtime, ok: false, output: failure });
  const nodes = await Promise.all(OTHER_NODES.map(async (major) => [major, await nodeBinary(major)] as const));
  const onCli = (runtime: string, command: string, args: readonly string[], cwd: string): Promise<Run> =>
    unlessFailed(cliFailure, runtime, () => runProcess(runtime, command, args, cwd));
  const runs = await Promise.all([
    onCli(`node${process.versions.node.split('.')[0]}`, process.execPath, [cli], workdir),
    ...nodes.map(([major, binary]) => onCli(`node${major}`, binary, [cli], workdir)),
    onCli('bun', join(BIN, 'bun'), [cli], workdir),
    // Deno reads package.json here to find packages in node_modules. h3 2's server layer (srvx) reads
    // whether to color its output at import: the only environment the cases need.
    onCli('deno', join(BIN, 'deno'), ['run', '--quiet', '--no-lock', '--allow-net=127.0.0.1', '--allow-env=FORCE_COLOR,NO_COLOR,TERM', cli], PACKAGE_ROOT),
    unlessFailed(workerFailure, 'workerd', () => runWorkerd(worker, true)),
    unlessFailed(workerNoCompatFailure, 'workerd-no-compat', () => runWorkerd(workerNoCompat, false)),
    unlessFailed(edgeFailure, 'edge-runtime', () => runEdge(edge)),
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
  rmSync(project, { recursive: true, force: true });
}

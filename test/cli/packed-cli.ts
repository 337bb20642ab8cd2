/**
 * The bin as a user gets it: the package's sources copied aside, without a
 * dist/, packed (its `prepack` script builds it), installed from the tarball into a new project,
 * and run there as npm linked its bin. The work tree's dist/ is left alone.
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { PACKAGE_ROOT, packTarball } from '../package/pack.js';

const SOURCES = ['package.json', 'README.md', 'LICENSE', 'tsconfig.json', 'tsconfig.build.json', 'tsconfig.build-cjs.json', 'src', 'adapters', 'scripts'];

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface PackedCli {
  /**
   * Runs the bin npm linked in the project (node_modules/.bin/svc-webhooks,
   * through its shebang); `input` is its standard input (empty if absent).
   */
  run(args: readonly string[], input?: string | Buffer): Promise<CliRun>;
  /** The same through `npx svc-webhooks …args`, which finds that link (and costs an npm start-up). */
  npx(args: readonly string[], input?: string | Buffer): Promise<CliRun>;
  /** Starts the bin with `args` and leaves it running, for a command that runs until stopped (dev). */
  start(args: readonly string[]): ChildProcessWithoutNullStreams;
  /** The packed tarball, for another project to install. */
  readonly tarball: string;
  /** Removes the temporary directories. */
  dispose(): void;
}

export async function installPackedCli(): Promise<PackedCli> {
  const stage = mkdtempSync(join(tmpdir(), 'svc-webhooks-stage-'));
  const project = mkdtempSync(join(tmpdir(), 'svc-webhooks-cli-'));
  const dirs = [stage, project];
  let packed: string;
  try {
    for (const source of SOURCES) cpSync(join(PACKAGE_ROOT, source), join(stage, source), { recursive: true });
    symlinkSync(join(PACKAGE_ROOT, 'node_modules'), join(stage, 'node_modules'), 'dir');
    const { tarball } = packTarball(stage);
    packed = tarball;
    dirs.push(dirname(tarball));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'receiver-ci', private: true }));
    await promisify(execFile)('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', tarball], { cwd: project });
  } catch (error) {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    run: (args, input) => runProcess(join(project, 'node_modules/.bin/svc-webhooks'), args, project, input),
    // --no: never fetch a package of that name from the registry if the bin were missing.
    npx: (args, input) => runProcess('npx', ['--no', '--', 'svc-webhooks', ...args], project, input),
    start: (args) => spawn(join(project, 'node_modules/.bin/svc-webhooks'), args, { cwd: project }),
    tarball: packed,
    dispose() {
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function runProcess(command: string, args: readonly string[], cwd: string, input: string | Buffer = ''): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

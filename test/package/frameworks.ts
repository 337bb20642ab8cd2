/**
 * Builds and serves the examples of the frameworks that compile a receiver
 * into a server of their own, on the packed tarball, as a user would: the
 * Next.js example (examples/nextjs, `next build` type-checks and compiles
 * it, `next start` serves it) and the Nitro one (examples/nitro, h3 1 under
 * Nitro 2 as Nuxt runs it: `nitropack build`, tsc against the types it
 * generated, then its .output server). A
 * temporary copy of each installs its dependencies and the tarball, and is
 * sent a signed event, a tampered one and an unsigned one. Prints how long
 * each step took.
 */
import { spawn, execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sign } from '../../src/index.js';
import { PACKAGE_ROOT, packTarball } from './pack.js';

const SECRET = 'whsec_bmV4dGpzLWV4YW1wbGUtY2ktc2VjcmV0LTAxMjM0NQ==';
const READY_TIMEOUT_MS = 60_000;

interface Framework {
  readonly name: string;
  /** Its folder under examples/. */
  readonly example: string;
  /** What the build leaves that a copy must not take along. */
  readonly outputs: RegExp;
  /** The build, as arguments to Node, in the project. */
  readonly build: readonly string[];
  /** A type check the build does not do itself, after it. */
  readonly typecheck?: readonly string[];
  /** The server, as arguments to Node, serving on `port`. */
  readonly start: (port: number) => readonly string[];
  /** The webhook route's path. */
  readonly path: string;
  readonly env: Readonly<Record<string, string>>;
}

const FRAMEWORKS: readonly Framework[] = [
  {
    name: 'next',
    example: 'nextjs',
    outputs: /[/\\](node_modules|\.next)$/,
    build: ['node_modules/next/dist/bin/next', 'build'],
    start: (port) => ['node_modules/next/dist/bin/next', 'start', '--port', String(port), '--hostname', '127.0.0.1'],
    path: '/api/webhooks',
    env: { NEXT_TELEMETRY_DISABLED: '1', WEBHOOK_SECRET: SECRET },
  },
  {
    name: 'nitro',
    example: 'nitro',
    outputs: /[/\\](node_modules|\.nitro|\.output)$/,
    build: ['node_modules/nitropack/dist/cli/index.mjs', 'build'],
    // Against the types the build generated for the auto-imports, and h3 1's own.
    typecheck: ['node_modules/typescript/bin/tsc', '--noEmit', '-p', '.'],
    start: () => ['.output/server/index.mjs'],
    path: '/webhooks',
    env: { NITRO_WEBHOOK_SECRET: SECRET, HOST: '127.0.0.1' },
  },
];

const started = Date.now();
const seconds = (since: number): string => `${((Date.now() - since) / 1000).toFixed(1)} s`;
function step<T>(name: string, run: () => T): T {
  const since = Date.now();
  const result = run();
  console.log(`${name}: ${seconds(since)}`);
  return result;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

async function waitUntilReady(url: string, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (exited()) throw new Error('the server exited');
    try {
      await fetch(url);
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`the server was not ready within ${READY_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** Builds and serves `framework`'s example in a temporary copy with `tarball` installed, and pushes what it checked to `checks`. */
async function tryFramework(framework: Framework, tarball: string, checks: Array<[string, boolean]>): Promise<void> {
  const { name } = framework;
  const project = mkdtempSync(join(tmpdir(), `svc-webhooks-${name}-`));
  const env = { ...process.env, PORT: '', ...framework.env };
  try {
    cpSync(join(PACKAGE_ROOT, 'examples', framework.example), project, { recursive: true, filter: (source) => !framework.outputs.test(source) });
    const run = (args: readonly string[]): void => {
      execFileSync(args[0]!, args.slice(1), { cwd: project, env, stdio: ['ignore', 'inherit', 'inherit'] });
    };
    // The example's own dependencies, with this package from the tarball in place of the registry.
    step(`${name}: npm install`, () => run(['npm', 'install', '--no-audit', '--no-fund', tarball]));
    step(`${name} build`, () => run([process.execPath, ...framework.build]));
    if (framework.typecheck !== undefined) step(`${name}: tsc`, () => run([process.execPath, ...framework.typecheck!]));

    const port = await freePort();
    const since = Date.now();
    const server = spawn(process.execPath, framework.start(port), { cwd: project, env: { ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'inherit'] });
    let log = '';
    let exited = false;
    server.stdout.on('data', (chunk: Buffer) => (log += chunk));
    server.on('exit', () => (exited = true));
    try {
      const url = `http://127.0.0.1:${port}${framework.path}`;
      await waitUntilReady(url, () => exited);
      console.log(`${name} start: ${seconds(since)}`);

      const id = `evt_${name}_${Date.now()}`;
      const body = JSON.stringify({ id, type: 'call.missed', data: { object: { id: 'call_1' } } });
      const headers = { ...sign(body, { id, timestamp: new Date(), secret: SECRET }), 'content-type': 'application/json' };
      const post = async (payload: string, sent: Record<string, string>): Promise<[number, string]> => {
        const response = await fetch(url, { method: 'POST', body: payload, headers: sent });
        return [response.status, await response.text()];
      };
      const codeOf = (text: string): unknown => (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;

      const [signedStatus] = await post(body, headers);
      checks.push([`${name}: a signed event is answered 204 (got ${signedStatus})`, signedStatus === 204]);
      const [tamperedStatus, tampered] = await post(body.replace('call_1', 'call_2'), headers);
      checks.push([`${name}: a tampered event is answered 400 invalid_signature (got ${tamperedStatus} ${tampered})`, tamperedStatus === 400 && codeOf(tampered) === 'invalid_signature']);
      const [unsignedStatus, unsigned] = await post(body, { 'content-type': 'application/json' });
      checks.push([`${name}: an unsigned event is answered 400 missing_header (got ${unsignedStatus})`, unsignedStatus === 400 && codeOf(unsigned) === 'missing_header']);
      const received = log.split('\n').filter((line) => line.includes(`received call.missed ${id}`)).length;
      checks.push([`${name}: the handler ran once (ran ${received} times)`, received === 1]);
    } finally {
      server.kill();
    }
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
}

const { tarball } = step('pack', () => packTarball());
const checks: Array<[string, boolean]> = [];
for (const framework of FRAMEWORKS) {
  try {
    await tryFramework(framework, tarball, checks);
  } catch (error) {
    checks.push([`${framework.name}: built and served (${String(error)})`, false]);
  }
}
for (const [name, ok] of checks) console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}`);
const failed = checks.filter(([, ok]) => !ok).length;
console.log(`in all: ${seconds(started)}`);
console.log(`frameworks: ${checks.length - failed} passed, ${failed} failed`);
if (failed > 0 || checks.length === 0) process.exitCode = 1;

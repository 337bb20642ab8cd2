/**
 * Builds and serves the Next.js example (examples/nextjs) on the packed
 * tarball, as a user would: a temporary copy installs its dependencies and the
 * tarball, `next build` type-checks and compiles it, `next start` serves it,
 * and it is sent a signed event, a tampered one and an unsigned one. Expects a
 * fresh build in dist/. Prints how long each step took.
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
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1', WEBHOOK_SECRET: SECRET };

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
    if (exited()) throw new Error('next start exited');
    try {
      await fetch(url);
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`next start was not ready within ${READY_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

const { tarball } = step('pack', () => packTarball());
const project = mkdtempSync(join(tmpdir(), 'svc-webhooks-nextjs-'));
const checks: Array<[string, boolean]> = [];
try {
  cpSync(join(PACKAGE_ROOT, 'examples/nextjs'), project, {
    recursive: true,
    filter: (source) => !/[/\\](node_modules|\.next)$/.test(source),
  });
  const run = (args: readonly string[]): void => {
    execFileSync(args[0]!, args.slice(1), { cwd: project, env, stdio: ['ignore', 'inherit', 'inherit'] });
  };
  // The example's own dependencies, with this package from the tarball in place of the registry.
  step('npm install', () => run(['npm', 'install', '--no-audit', '--no-fund', tarball]));
  const next = join(project, 'node_modules/next/dist/bin/next');
  step('next build', () => run([process.execPath, next, 'build']));

  const port = await freePort();
  const since = Date.now();
  const server = spawn(process.execPath, [next, 'start', '--port', String(port), '--hostname', '127.0.0.1'], {
    cwd: project,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let log = '';
  let exited = false;
  server.stdout.on('data', (chunk: Buffer) => (log += chunk));
  server.on('exit', () => (exited = true));
  try {
    const url = `http://127.0.0.1:${port}/api/webhooks`;
    await waitUntilReady(url, () => exited);
    console.log(`next start: ${seconds(since)}`);

    const id = `evt_nextjs_${Date.now()}`;
    const body = JSON.stringify({ id, type: 'call.missed', data: { object: { id: 'call_1' } } });
    const headers = { ...sign(body, { id, timestamp: new Date(), secret: SECRET }), 'content-type': 'application/json' };
    const post = async (payload: string, sent: Record<string, string>): Promise<[number, string]> => {
      const response = await fetch(url, { method: 'POST', body: payload, headers: sent });
      return [response.status, await response.text()];
    };
    const codeOf = (text: string): unknown => (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;

    const [signedStatus] = await post(body, headers);
    checks.push([`a signed event is answered 204 (got ${signedStatus})`, signedStatus === 204]);
    const [tamperedStatus, tampered] = await post(body.replace('call_1', 'call_2'), headers);
    checks.push([`a tampered event is answered 400 invalid_signature (got ${tamperedStatus} ${tampered})`, tamperedStatus === 400 && codeOf(tampered) === 'invalid_signature']);
    const [unsignedStatus, unsigned] = await post(body, { 'content-type': 'application/json' });
    checks.push([`an unsigned event is answered 400 missing_header (got ${unsignedStatus})`, unsignedStatus === 400 && codeOf(unsigned) === 'missing_header']);
    const received = log.split('\n').filter((line) => line.includes(`received call.missed ${id}`)).length;
    checks.push([`the handler ran once (ran ${received} times)`, received === 1]);
  } finally {
    server.kill();
  }
} finally {
  rmSync(project, { recursive: true, force: true });
}
for (const [name, ok] of checks) console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}`);
const failed = checks.filter(([, ok]) => !ok).length;
console.log(`in all: ${seconds(started)}`);
console.log(`nextjs: ${checks.length - failed} passed, ${failed} failed`);
if (failed > 0 || checks.length === 0) process.exitCode = 1;

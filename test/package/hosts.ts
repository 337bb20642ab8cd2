/**
 * Installs the packed tarball next to each framework a receiver runs on,
 * with a plain `npm install` (no peer-dependency flags), as a user would:
 * Express 4 and 5, Fastify 4 and 5, NestJS 10, 11 and 12 (the Express
 * middleware, and svc-webhooks/nestjs on both platforms), h3 2, Azure
 * Functions. In each project it compiles the host's example from examples/
 * with tsc against the installed types, starts it, and sends it a signed
 * event twice, a tampered copy, a stale event and three copies of another
 * event at once: each event must reach the handler once, the tampered copy be
 * refused 400 invalid_signature and the stale one 400 timestamp_too_old. The
 * Azure example has no server of its own (the Functions host serves it, which
 * does not run here): a driver hands its handler each request as Azure's own
 * HttpRequest, with an InvocationContext. Each compiled example runs on the
 * Node running this and on Node 22 and 24.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sign } from '../../src/index.js';
import { nodeBinary, OTHER_NODES } from '../helpers/node-versions.js';
import { PACKAGE_ROOT, packTarball } from './pack.js';

interface Host {
  readonly name: string;
  /** Installed beside the tarball, types included as a TypeScript user would have them. */
  readonly packages: readonly string[];
  /** Files of examples/ that run on this host. */
  readonly examples: readonly string[];
  /** Files of examples/ that those import, compiled beside them. */
  readonly modules?: readonly string[];
  /** Compile with the decorator options NestJS projects use. */
  readonly decorators?: boolean;
  /** Run this driver (with the example compiled beside it) instead of serving the example: it prints what the example answered. */
  readonly driver?: string;
}

/** Hands the Azure example's handler a signed request and a tampered copy, as Azure's classes, and prints the answers. */
const AZURE_DRIVER = `
import functions from '@azure/functions';
import { webhooks } from './azure.js';
const { HttpRequest, InvocationContext } = functions;
const [body, headers, tampered] = JSON.parse(process.env.DELIVERY);
const context = new InvocationContext({ invocationId: '1', functionName: 'webhooks', logHandler: (_level, ...args) => console.log(...args) });
const answer = (payload) => webhooks(new HttpRequest({ method: 'POST', url: 'http://127.0.0.1:7071/api/webhooks', headers, body: { string: payload } }), context);
const signed = await answer(body);
const refused = await answer(tampered);
console.log(JSON.stringify({ signed: signed.status, tampered: refused.status, code: JSON.parse(refused.body).error?.code }));
`;

const NODE_TYPES = '@types/node@20';
const HOSTS: readonly Host[] = [
  { name: 'express 4', packages: ['express@4', '@types/express@4', NODE_TYPES], examples: ['express.ts', 'express-global-parser.ts'] },
  { name: 'express 5', packages: ['express@5', '@types/express@5', NODE_TYPES], examples: ['express.ts', 'express-global-parser.ts'] },
  { name: 'fastify 4', packages: ['fastify@4', NODE_TYPES], examples: ['fastify.ts'] },
  { name: 'fastify 5', packages: ['fastify@5', NODE_TYPES], examples: ['fastify.ts'] },
  ...(['10', '11', '12'] as const).map(
    (major): Host => ({
      name: `nestjs ${major}`,
      packages: [
        `@nestjs/core@${major}`,
        `@nestjs/common@${major}`,
        `@nestjs/platform-express@${major}`,
        `@nestjs/platform-fastify@${major}`,
        'reflect-metadata',
        'rxjs',
        // Nest 10 runs on Express 4, 11 and 12 on Express 5.
        major === '10' ? '@types/express@4' : '@types/express@5',
        NODE_TYPES,
      ],
      examples: ['nest.ts', 'nest-module.ts', 'nest-module-fastify.ts'],
      modules: ['nest-module-app.ts'],
      decorators: true,
    }),
  ),
  { name: 'h3 2', packages: ['h3@2', NODE_TYPES], examples: ['h3.ts'] },
  { name: 'azure functions 4', packages: ['@azure/functions@4', NODE_TYPES], examples: ['azure.ts'], driver: AZURE_DRIVER },
];

const run = promisify(execFile);
const secret = `whsec_${randomBytes(24).toString('base64')}`;
let passed = 0;
let failed = 0;

function check(label: string, ok: boolean, detail = ''): boolean {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${label}${detail && !ok ? `\n${detail.trimEnd()}` : ''}`);
  return ok;
}

const seconds = (since: number): string => `${((performance.now() - since) / 1000).toFixed(1)} s`;

/** Runs a command in `cwd`; answers its output, or the error's, and whether it exited 0. */
async function attempt(command: string, args: readonly string[], cwd: string, timeout: number): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout, stderr } = await run(command, args, { cwd, timeout, maxBuffer: 16 * 1024 * 1024 });
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const { stdout = '', stderr = '', message } = error as { stdout?: string; stderr?: string; message: string };
    return { ok: false, output: `${message}\n${stdout}${stderr}` };
  }
}

/** Installs the tarball and the host's packages into the empty `project` with a plain `npm install`. */
async function install(host: Host, tarball: string, project: string): Promise<boolean> {
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'host', private: true, type: 'module' }));
  const started = performance.now();
  const { ok, output } = await attempt('npm', ['install', '--no-audit', '--no-fund', tarball, ...host.packages], project, 300_000);
  const installed = ok ? ` -> ${host.packages.map((spec) => installedVersion(project, spec)).join(' ')}` : '';
  return check(`${host.name}: npm install ${host.packages.join(' ')}${installed} (${seconds(started)})`, ok, output);
}

/** `name@version` of what `spec` installed in `project`. */
function installedVersion(project: string, spec: string): string {
  const name = spec.replace(/(?<=.)@[^@]*$/, '');
  const { version } = JSON.parse(readFileSync(join(project, 'node_modules', name, 'package.json'), 'utf8')) as { version: string };
  return `${name}@${version}`;
}

/** Compiles the examples with the project's own types; the output goes beside them as .js. */
async function compile(host: Host, project: string): Promise<boolean> {
  const files = [...host.examples, ...(host.modules ?? [])];
  for (const file of files) copyFileSync(join(PACKAGE_ROOT, 'examples', file), join(project, file));
  const tsc = join(PACKAGE_ROOT, 'node_modules/typescript/bin/tsc');
  const options = ['--strict', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext', '--types', 'node'];
  if (host.decorators) options.push('--experimentalDecorators', '--emitDecoratorMetadata');
  const started = performance.now();
  const { ok, output } = await attempt(process.execPath, [tsc, ...options, ...files], project, 180_000);
  return check(`${host.name}: tsc ${files.join(' ')} (${seconds(started)})`, ok, output);
}

/** Starts a compiled example on a free port; answers its URL and a way to stop it that yields all it printed. */
async function start(project: string, file: string, node: string): Promise<{ url: string; stop: () => Promise<string> }> {
  const child = spawn(node, [file], { cwd: project, env: { ...process.env, PORT: '0', WEBHOOK_SECRET: secret } });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = once(child, 'close');
  const stop = async (): Promise<string> => {
    if (child.exitCode === null) child.kill();
    await exited;
    return output;
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
    if (url !== undefined) return { url, stop };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${file} did not start:\n${await stop()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A signed call.missed event of a new id, signed `ageSeconds` ago. */
function delivery(ageSeconds = 0): { id: string; body: string; headers: Record<string, string> } {
  const id = `evt_${randomBytes(6).toString('hex')}`;
  const body = JSON.stringify({ id, type: 'call.missed', created_at: new Date().toISOString(), data: { object: { id: 'call_1' } } });
  return { id, body, headers: { 'content-type': 'application/json', ...sign(body, { id, timestamp: Math.floor(Date.now() / 1000) - ageSeconds, secret }) } };
}

/**
 * Starts the example on the `node` binary and sends it a signed event, the
 * same again, a tampered copy, a stale one, and three copies of another event
 * at once: each event's handler must run once.
 */
async function exercise(label: string, project: string, example: string, node: string): Promise<void> {
  const { id, body, headers } = delivery();
  const copied = delivery();
  let receiver: Awaited<ReturnType<typeof start>>;
  try {
    receiver = await start(project, example.replace(/\.ts$/, '.js'), node);
  } catch (error) {
    check(`${label}: starts`, false, String(error));
    return;
  }
  try {
    // The service gives up on an attempt after 10 s.
    const post = (sent: string): Promise<Response> =>
      fetch(receiver.url, { method: 'POST', body: sent, headers, signal: AbortSignal.timeout(10_000) });
    const signed = await post(body);
    check(`${label}: signed event answered ${signed.status}`, signed.status >= 200 && signed.status < 300);
    const again = await post(body);
    check(`${label}: the same event again answered ${again.status}`, again.status === 200);
    const tampered = await post(body.replace('call_1', 'call_2'));
    const code = async (response: Response): Promise<string | undefined> => ((await response.json().catch(() => ({}))) as { error?: { code?: string } }).error?.code;
    const tamperedCode = await code(tampered);
    check(`${label}: tampered copy answered ${tampered.status} ${tamperedCode}`, tampered.status === 400 && tamperedCode === 'invalid_signature');
    const stale = delivery(600);
    const late = await fetch(receiver.url, { method: 'POST', body: stale.body, headers: stale.headers, signal: AbortSignal.timeout(10_000) });
    const lateCode = await code(late);
    check(`${label}: an event signed 10 minutes ago answered ${late.status} ${lateCode}`, late.status === 400 && lateCode === 'timestamp_too_old');
    const send = (): Promise<number> => fetch(receiver.url, { method: 'POST', body: copied.body, headers: copied.headers, signal: AbortSignal.timeout(10_000) }).then((response) => response.status);
    const statuses = await Promise.all([send(), send(), send()]);
    check(`${label}: three copies at once answered ${statuses.join(', ')}`, statuses.every((status) => (status >= 200 && status < 300) || status === 409));
  } finally {
    const output = await receiver.stop();
    const runs = (of: string): number => output.split('\n').filter((line) => line.includes(`received call.missed ${of}`)).length;
    check(`${label}: handler ran ${runs(id)} time(s) for the event sent twice, ${runs(copied.id)} for the copies`, runs(id) === 1 && runs(copied.id) === 1, output);
  }
}

/** Runs the host's driver on the `node` binary, which hands the example a signed event and a tampered copy. */
async function drive(label: string, project: string, node: string): Promise<void> {
  const id = `evt_${randomBytes(6).toString('hex')}`;
  const body = JSON.stringify({ id, type: 'call.missed', created_at: new Date().toISOString(), data: { object: { id: 'call_1' } } });
  const headers = { 'content-type': 'application/json', ...sign(body, { id, timestamp: Math.floor(Date.now() / 1000), secret }) };
  const env = { ...process.env, WEBHOOK_SECRET: secret, DELIVERY: JSON.stringify([body, headers, body.replace('call_1', 'call_2')]) };
  let output: string;
  try {
    output = (await run(node, ['drive.mjs'], { cwd: project, env, timeout: 30_000 })).stdout;
  } catch (error) {
    check(`${label}: runs`, false, String(error));
    return;
  }
  const answers = JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as { signed?: number; tampered?: number; code?: string };
  check(`${label}: signed event answered ${answers.signed}`, answers.signed !== undefined && answers.signed >= 200 && answers.signed < 300, output);
  check(`${label}: tampered copy answered ${answers.tampered} ${answers.code}`, answers.tampered === 400 && answers.code === 'invalid_signature', output);
  const handled = output.split('\n').filter((line) => line.includes(`received call.missed ${id}`)).length;
  check(`${label}: handler ran ${handled} time(s)`, handled === 1, output);
}

/** Installs, compiles and exercises one host in a temporary project. */
async function tryHost(host: Host, tarball: string): Promise<void> {
  const project = mkdtempSync(join(tmpdir(), 'svc-webhooks-host-'));
  try {
    if (!(await install(host, tarball, project)) || !(await compile(host, project))) return;
    if (host.driver !== undefined) writeFileSync(join(project, 'drive.mjs'), host.driver);
    for (const [major, node] of nodes) {
      for (const example of host.examples) {
        const label = `${host.name} on node${major}: ${example}`;
        await (host.driver === undefined ? exercise(label, project, example, node) : drive(label, project, node));
      }
    }
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
}

// The Node running this, then the others, each as [major, binary].
const nodes = await Promise.all([
  [process.versions.node.split('.')[0]!, process.execPath] as const,
  ...OTHER_NODES.map(async (major) => [major, await nodeBinary(major)] as const),
]);
const started = performance.now();
const { tarball } = packTarball();
// Hosts side by side: one's install waits on the network while another compiles.
const runs = await Promise.allSettled(HOSTS.map((host) => tryHost(host, tarball)));
for (const [i, result] of runs.entries()) {
  if (result.status === 'rejected') check(`${HOSTS[i]!.name}: ran to the end`, false, String(result.reason));
}
console.log(`took ${seconds(started)}`);
console.log(`hosts: ${passed} passed, ${failed} failed`);
if (failed > 0) process.exitCode = 1;

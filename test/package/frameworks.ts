/**
 * Builds and runs, on the packed tarball, as a user would, the apps whose
 * receiver a build step of their own compiles: the Next.js example
 * (examples/nextjs, `next build` type-checks and compiles it, `next start`
 * serves it), the Nitro 2 one (examples/nitro, h3 1 as Nuxt runs it:
 * `nitropack build`, tsc against the types it generated, then its .output
 * server), the Nitro 3 one (examples/nitro3, the h3 2 release candidate
 * Nitro 3 brings: `nitro build`, tsc, its .output server) and a Lambda
 * function (examples/lambda.ts in an empty project, bundled by the esbuild
 * command of its header), and a NestJS app with a queue (test/package/
 * nest-queue/: a receiving app whose `handoff` queues on BullMQ through
 * @nestjs/bullmq, and a worker app of `WebhooksModule.forWorker`, compiled by
 * tsc against the installed types). A temporary copy of each installs its
 * dependencies and the tarball, all side by side; then each is built and
 * run in turn. A
 * server is sent a signed event, the same again, a tampered one and an
 * unsigned one, and is started again with its secret empty, which must stop
 * the start (a Nitro plugin, or Next.js's instrumentation hook, creates the
 * route's entry then). The bundled Lambda handler is invoked with the same
 * events as an HTTP API (payload 2.0) and a REST API pass them. The NestJS
 * apps are sent a signed event through the testing kit, then the same event
 * again once its job is done: the worker's injected service must see it
 * once, and the repeat's job end as a duplicate. Prints how long each step
 * took. Arguments name the apps to run (next, nitro, nitro3, lambda,
 * nestjs-queue); none runs them all.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Queue } from 'bullmq';
import { sign, type WebhookEvent } from '../../src/index.js';
import { simulateDelivery, testEvent } from '../../src/testing/index.js';
import { freePort } from '../helpers/free-port.js';
import { lambdaContext, lambdaEvent, type LambdaSource } from '../helpers/lambda-events.js';
import { PACKAGE_ROOT, packTarball } from './pack.js';

const SECRET = 'whsec_bmV4dGpzLWV4YW1wbGUtY2ktc2VjcmV0LTAxMjM0NQ==';
const READY_TIMEOUT_MS = 60_000;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

type Checks = Array<[string, boolean]>;

/** One app: its project, what it installs beside the tarball, and what runs once it is installed. */
interface App {
  readonly name: string;
  /** Lays out the project in the empty directory `project`. */
  readonly layOut: (project: string) => void;
  /** Installed beside the tarball, as `npm install` takes them. */
  readonly packages: readonly string[];
  /** Builds and runs the installed project, and pushes what it checked to `checks`. */
  readonly run: (project: string, checks: Checks) => Promise<void>;
}

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
  /** The variable holding the secret: started with it empty, the app must stop, since it creates its entry as it starts. */
  readonly secretVariable: string;
  /** Checks of the installed dependencies. */
  readonly installed?: (project: string) => Checks;
}

/** `name`'s version in the project's node_modules, under `parent` when given; undefined where it is not installed. */
function installedVersion(project: string, name: string, parent?: string): string | undefined {
  const manifest = join(project, 'node_modules', ...(parent === undefined ? [] : [parent, 'node_modules']), name, 'package.json');
  return existsSync(manifest) ? (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version : undefined;
}

/**
 * A Nitro app, examples/`name`, built by the Nitro CLI at `cli`, type-checked
 * after the build (Nitro 2's against the types the build generated for its
 * auto-imports), served from .output with the secret in its runtime config.
 */
function nitroApp(name: string, cli: string): Framework {
  return {
    name,
    example: name,
    outputs: /[/\\](node_modules|\.nitro|\.output)$/,
    build: [cli, 'build'],
    typecheck: ['node_modules/typescript/bin/tsc', '--noEmit', '-p', '.'],
    start: () => ['.output/server/index.mjs'],
    path: '/webhooks',
    env: { NITRO_WEBHOOK_SECRET: SECRET, HOST: '127.0.0.1' },
    secretVariable: 'NITRO_WEBHOOK_SECRET',
  };
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
    secretVariable: 'WEBHOOK_SECRET',
  },
  nitroApp('nitro', 'node_modules/nitropack/dist/cli/index.mjs'),
  {
    ...nitroApp('nitro3', 'node_modules/nitro/dist/cli/index.mjs'),
    // Nested under nitro, h3 is out of reach of svc-webhooks/h3's types, which then take any event at all.
    installed: (project) => {
      const top = installedVersion(project, 'h3');
      const nested = installedVersion(project, 'h3', 'nitro');
      return [[`nitro3: Nitro's h3 is installed where svc-webhooks/h3's types find it (node_modules/h3: ${top ?? 'none'}, under nitro: ${nested ?? 'none'})`, top !== undefined && nested === undefined]];
    },
  },
];

/** The apps to run: those named in the arguments, or all. */
const chosen = process.argv.slice(2);
const runs = (name: string): boolean => chosen.length === 0 || chosen.includes(name);

const started = Date.now();
const seconds = (since: number): string => `${((Date.now() - since) / 1000).toFixed(1)} s`;
function step<T>(name: string, run: () => T): T {
  const since = Date.now();
  const result = run();
  console.log(`${name}: ${seconds(since)}`);
  return result;
}

/** Runs `args` in `project`, its output shown. */
function runIn(project: string, env: NodeJS.ProcessEnv, args: readonly string[]): void {
  execFileSync(args[0]!, args.slice(1), { cwd: project, env, stdio: ['ignore', 'inherit', 'inherit'] });
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

/** A signed call.missed event of a new id, the same event tampered with, and the headers of neither. */
function deliveryOf(name: string): { id: string; body: string; headers: Record<string, string>; tampered: string } {
  const id = `evt_${name}_${Date.now()}`;
  const body = JSON.stringify({ id, type: 'call.missed', data: { object: { id: 'call_1' } } });
  const headers = { ...sign(body, { id, timestamp: new Date(), secret: SECRET }), 'content-type': 'application/json' };
  return { id, body, headers, tampered: body.replace('call_1', 'call_2') };
}

const errorCodeOf = (text: string): unknown => (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
const isDuplicate = (text: string): boolean => (JSON.parse(text) as { duplicate?: unknown }).duplicate === true;
const runsOf = (log: string, id: string): number => log.split('\n').filter((line) => line.includes(`received call.missed ${id}`)).length;

/** Checks the four answers of `label` in the order sent: signed, the same again, tampered, unsigned. */
function checkAnswers(label: string, [signed, again, tampered, unsigned]: ReadonlyArray<readonly [number, string]>, checks: Checks): void {
  checks.push([`${label}: a signed event is answered 204 (got ${signed![0]})`, signed![0] === 204]);
  checks.push([`${label}: the same event again is answered 200 duplicate (got ${again![0]} ${again![1]})`, again![0] === 200 && isDuplicate(again![1])]);
  checks.push([`${label}: a tampered event is answered 400 invalid_signature (got ${tampered![0]} ${tampered![1]})`, tampered![0] === 400 && errorCodeOf(tampered![1]) === 'invalid_signature']);
  checks.push([`${label}: an unsigned event is answered 400 missing_header (got ${unsigned![0]})`, unsigned![0] === 400 && errorCodeOf(unsigned![1]) === 'missing_header']);
}

/** A Node process of a project: what it printed so far, its exit code once it exited, and a way to stop it. */
interface Started {
  readonly state: { log: string; exitCode: number | null | undefined };
  readonly stop: () => Promise<void>;
}

/** Runs Node with `args` in `project`, its errors shown when `showErrors`. */
function startNode(project: string, args: readonly string[], env: NodeJS.ProcessEnv, showErrors: boolean): Started {
  const child = spawn(process.execPath, args, { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const state: Started['state'] = { log: '', exitCode: undefined };
  child.stdout.on('data', (chunk: Buffer) => (state.log += chunk));
  child.stderr.on('data', (chunk: Buffer) => {
    state.log += chunk;
    if (showErrors) process.stderr.write(chunk);
  });
  const exited = new Promise<void>((resolve) => child.on('exit', (code) => resolve(void (state.exitCode = code))));
  const stop = async (): Promise<void> => {
    if (state.exitCode === undefined) child.kill();
    await exited;
  };
  return { state, stop };
}

/** Starts `framework`'s server, its errors shown when `showErrors`; answers its URL, its exit code once it exited, what it printed and a way to stop it. */
async function startServer(framework: Framework, project: string, env: NodeJS.ProcessEnv, showErrors: boolean) {
  const port = await freePort();
  return { url: `http://127.0.0.1:${port}${framework.path}`, ...startNode(project, framework.start(port), { ...env, PORT: String(port) }, showErrors) };
}

/** Waits until `started` printed a line matching `pattern`, and answers the match; fails if it exits first. */
async function printed(started: Started, pattern: RegExp): Promise<RegExpExecArray> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const match = pattern.exec(started.state.log);
    if (match !== null) return match;
    if (started.state.exitCode !== undefined) throw new Error(`it exited before printing ${pattern}:\n${started.state.log}`);
    if (Date.now() > deadline) throw new Error(`it did not print ${pattern} within ${READY_TIMEOUT_MS} ms:\n${started.state.log}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Serves the built project, sends it the deliveries and pushes what it checked to `checks`. */
async function serve(framework: Framework, project: string, env: NodeJS.ProcessEnv, checks: Checks): Promise<void> {
  const { name } = framework;
  const since = Date.now();
  const server = await startServer(framework, project, env, true);
  try {
    await waitUntilReady(server.url, () => server.state.exitCode !== undefined);
    console.log(`${name} start: ${seconds(since)}`);
    const { id, body, headers, tampered } = deliveryOf(name);
    const post = async (payload: string, sent: Record<string, string>): Promise<readonly [number, string]> => {
      const response = await fetch(server.url, { method: 'POST', body: payload, headers: sent });
      return [response.status, await response.text()];
    };
    const answers = [await post(body, headers), await post(body, headers), await post(tampered, headers), await post(body, { 'content-type': 'application/json' })];
    checkAnswers(name, answers, checks);
    const received = runsOf(server.state.log, id);
    checks.push([`${name}: the handler ran once (ran ${received} times)`, received === 1]);
  } finally {
    await server.stop();
  }
}

/** Starts the built project with its secret empty: the start must stop with the WebhookOptionsError that says so. */
async function startWithEmptySecret(framework: Framework, project: string, env: NodeJS.ProcessEnv, checks: Checks): Promise<void> {
  const variable = framework.secretVariable;
  const server = await startServer(framework, project, { ...env, [variable]: '' }, false);
  let served = false;
  try {
    await waitUntilReady(server.url, () => server.state.exitCode !== undefined);
    served = true;
  } catch {
    // It exited, as it should, or never came up: the exit code and the log tell which.
  } finally {
    await server.stop();
  }
  const { exitCode, log } = server.state;
  // Node prints the error as `WebhookOptionsError: …`, Next.js's console as `Error [WebhookOptionsError]: …`.
  const told = /WebhookOptionsError\]?: svc-webhooks: the secret is empty/.test(log);
  checks.push([
    `${framework.name}: with ${variable} empty the start stops with a WebhookOptionsError (${served ? 'it served' : `exit code ${exitCode}${told ? '' : `, log: ${log.slice(0, 300)}`}`})`,
    !served && exitCode !== 0 && told,
  ]);
}

/** `framework`'s example, copied without what a build left, installed with its own dependencies (this package from the tarball), built and served. */
function frameworkApp(framework: Framework): App {
  const { name } = framework;
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '', ...framework.env };
  return {
    name,
    layOut: (project) => cpSync(join(PACKAGE_ROOT, 'examples', framework.example), project, { recursive: true, filter: (source) => !framework.outputs.test(source) }),
    packages: [],
    run: async (project, checks) => {
      checks.push(...(framework.installed?.(project) ?? []));
      step(`${name} build`, () => runIn(project, env, [process.execPath, ...framework.build]));
      if (framework.typecheck !== undefined) {
        // A type error fails this check alone: the build does not type-check, so the app is served all the same.
        const typed = step(`${name}: tsc`, () => {
          try {
            runIn(project, env, [process.execPath, ...framework.typecheck!]);
            return true;
          } catch {
            return false;
          }
        });
        checks.push([`${name}: the app type-checks`, typed]);
      }
      await serve(framework, project, env, checks);
      await startWithEmptySecret(framework, project, env, checks);
    },
  };
}

/** Invokes the bundled handler with the events in events.json and prints its answers, `[statusCode, body]` each, as JSON. */
const LAMBDA_DRIVER = `
import { readFileSync } from 'node:fs';
import { handler } from './dist-lambda/index.mjs';
const context = { ...JSON.parse(process.env.LAMBDA_CONTEXT), getRemainingTimeInMillis: () => 30000 };
const answers = [];
for (const event of JSON.parse(readFileSync('events.json', 'utf8'))) {
  const { statusCode, body } = await handler(event, context);
  answers.push([statusCode, body]);
}
console.log(JSON.stringify(answers));
`;

const LAMBDA_APIS: ReadonlyArray<readonly [LambdaSource, string]> = [
  ['http-api', 'an HTTP API (payload 2.0)'],
  ['api-gateway-rest', 'a REST API'],
];

/**
 * A Lambda function: examples/lambda.ts in an empty project with the tarball
 * and esbuild, bundled with the command of its header, and the bundle invoked
 * with each source's deliveries, as Lambda would.
 */
const LAMBDA: App = {
  name: 'lambda',
  layOut: (project) => {
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'lambda-app', private: true, type: 'module' }));
    mkdirSync(join(project, 'examples'));
    copyFileSync(join(PACKAGE_ROOT, 'examples/lambda.ts'), join(project, 'examples/lambda.ts'));
  },
  packages: ['esbuild@0.28'],
  run: async (project, checks) => {
    const env: NodeJS.ProcessEnv = { ...process.env, WEBHOOK_SECRET: SECRET, LAMBDA_CONTEXT: JSON.stringify(lambdaContext) };
    const command = /^ \* +(npx esbuild .+)$/m.exec(readFileSync(join(project, 'examples/lambda.ts'), 'utf8'))?.[1];
    if (command === undefined) throw new Error('examples/lambda.ts names no esbuild command in its header');
    step('lambda: esbuild', () => runIn(project, env, command.split(' ')));

    const deliveries = LAMBDA_APIS.map(([source]) => ({ source, ...deliveryOf(`lambda_${source.replaceAll('-', '_')}`) }));
    const events = deliveries.flatMap(({ source, body, headers, tampered }) =>
      [{ body, headers }, { body, headers }, { body: tampered, headers }, { body, headers: { 'content-type': 'application/json' } }].map((request) => lambdaEvent(source, request)),
    );
    writeFileSync(join(project, 'events.json'), JSON.stringify(events));
    writeFileSync(join(project, 'invoke.mjs'), LAMBDA_DRIVER);
    const output = step('lambda: invoke', () => execFileSync(process.execPath, ['invoke.mjs'], { cwd: project, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
    const answers = JSON.parse(output.trim().split('\n').at(-1)!) as Array<[number, string]>;
    deliveries.forEach(({ source, id }, index) => {
      const label = `lambda, ${LAMBDA_APIS.find(([name]) => name === source)![1]}`;
      checkAnswers(label, answers.slice(index * 4, index * 4 + 4), checks);
      const received = runsOf(output, id);
      checks.push([`${label}: the handler ran once (ran ${received} times)`, received === 1]);
    });
  },
};

/** The NestJS app with a queue, in test/package/nest-queue/: the module both apps import, the receiving app, the worker app. */
const NEST_QUEUE_FILES = ['calls.ts', 'receiver.ts', 'worker.ts'];

/**
 * The NestJS apps of test/package/nest-queue/ in an empty project with the
 * tarball, NestJS 12, @nestjs/bullmq and BullMQ, compiled by tsc as a Nest
 * project compiles (decorators and their metadata), both started on a queue
 * of the run's own. A signed event, then another, whose run shows the first's
 * job done and removed (one worker runs the jobs in order); the first again,
 * queued again since the receiving app keeps no store, then another.
 */
const NEST_QUEUE: App = {
  name: 'nestjs-queue',
  layOut: (project) => {
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'nestjs-queue-app', private: true, type: 'module' }));
    for (const file of NEST_QUEUE_FILES) copyFileSync(join(PACKAGE_ROOT, 'test/package/nest-queue', file), join(project, file));
  },
  packages: ['@nestjs/common@12', '@nestjs/core@12', '@nestjs/platform-express@12', '@nestjs/bullmq@12', 'bullmq@6', 'ioredis@6', 'reflect-metadata', 'rxjs', '@types/node@20'],
  run: async (project, checks) => {
    const tsc = join(PACKAGE_ROOT, 'node_modules/typescript/bin/tsc');
    const options = ['--strict', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext', '--types', 'node', '--experimentalDecorators', '--emitDecoratorMetadata'];
    step('nestjs-queue: tsc', () => runIn(project, process.env, [process.execPath, tsc, ...options, ...NEST_QUEUE_FILES]));
    const queue = `svc-webhooks-frameworks-${Date.now()}`;
    const env: NodeJS.ProcessEnv = { ...process.env, WEBHOOK_SECRET: SECRET, QUEUE: queue, REDIS_URL, PORT: String(await freePort()) };
    const since = Date.now();
    const receiver = startNode(project, ['receiver.js'], env, true);
    const worker = startNode(project, ['worker.js'], env, true);
    try {
      const [, url] = await printed(receiver, /listening on (\S+)/);
      await printed(worker, /Working the BullMQ queue/);
      console.log(`nestjs-queue start: ${seconds(since)}`);
      const deliver = async (event: WebhookEvent): Promise<string> => {
        const { attempts } = await simulateDelivery(url!, event, { secret: SECRET });
        return attempts.map(({ status }) => status ?? 'no answer').join(', ');
      };
      /** Delivers an event of its own and waits until the service saw it: the jobs queued before it are done. */
      const drain = async (): Promise<void> => {
        const marker = testEvent('call.missed');
        await deliver(marker);
        await printed(worker, new RegExp(`received call\\.missed ${marker.id}`));
      };
      const event = testEvent('call.missed');
      const first = await deliver(event);
      await drain();
      const again = await deliver(event);
      await drain();
      checks.push([`nestjs-queue: a signed event is answered 202 by the receiving app (got ${first})`, first === '202']);
      checks.push([`nestjs-queue: the same event, once its job is done, is answered 202 and queued again (got ${again})`, again === '202']);
      const seen = runsOf(worker.state.log, event.id);
      checks.push([`nestjs-queue: the worker's @OnWebhook method ran with its injected service once (ran ${seen} times)`, seen === 1]);
      const jobs = worker.state.log.split('\n').flatMap((line) => (line.startsWith(`job of ${event.id}: `) ? [line.slice(`job of ${event.id}: `.length)] : []));
      checks.push([`nestjs-queue: the event's two jobs ended processed, then duplicate (got ${jobs.join(', ')})`, jobs.join(', ') === 'processed, duplicate']);
    } finally {
      await Promise.all([receiver.stop(), worker.stop()]);
      const { hostname, port } = new URL(REDIS_URL);
      const left = new Queue(queue, { connection: { host: hostname, port: Number(port || 6379) } });
      await left.obliterate({ force: true });
      await left.close();
    }
  },
};

/** Runs `npm install` of `packages` in `project`; prints what npm said only if it failed. */
async function install(app: App, project: string, packages: readonly string[]): Promise<void> {
  const since = Date.now();
  try {
    await promisify(execFile)('npm', ['install', '--no-audit', '--no-fund', ...packages], { cwd: project, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    console.error(`${app.name}: npm install failed\n${stdout}${stderr}`);
    throw error;
  }
  console.log(`${app.name}: npm install: ${seconds(since)}`);
}

const { tarball } = step('pack', () => packTarball());
const checks: Checks = [];
const apps = [...FRAMEWORKS.map(frameworkApp), LAMBDA, NEST_QUEUE].filter(({ name }) => runs(name));
const projects = apps.map(({ name }) => mkdtempSync(join(tmpdir(), `svc-webhooks-${name}-`)));
try {
  // Side by side, since an install waits on the network; then one app at a time, since builds and servers share the cores.
  const installs = await Promise.allSettled(
    apps.map(async (app, index) => {
      app.layOut(projects[index]!);
      await install(app, projects[index]!, [tarball, ...app.packages]);
    }),
  );
  for (const [index, app] of apps.entries()) {
    const installed = installs[index]!;
    try {
      if (installed.status === 'rejected') throw installed.reason;
      await app.run(projects[index]!, checks);
    } catch (error) {
      checks.push([`${app.name}: installed, built and run (${String(error)})`, false]);
    }
  }
} finally {
  for (const project of projects) rmSync(project, { recursive: true, force: true });
}
for (const [name, ok] of checks) console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}`);
const failed = checks.filter(([, ok]) => !ok).length;
console.log(`in all: ${seconds(started)}`);
console.log(`frameworks: ${checks.length - failed} passed, ${failed} failed`);
if (failed > 0 || checks.length === 0) process.exitCode = 1;

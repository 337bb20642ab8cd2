/**
 * Installs the packed tarball into a new temporary project, as a user would,
 * and loads every subpath of its "exports": with import from ESM, with
 * require from CommonJS, and through the type checker under nodenext (both
 * module kinds) and bundler resolution.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT, packTarball } from './pack.js';

interface Manifest {
  name: string;
  exports: Record<string, unknown>;
  peerDependencies?: Record<string, string>;
}

const DATABASE_CLIENTS = new Set(['ioredis', 'redis', 'pg', 'postgres', 'better-sqlite3']);
// The queue engines bring database clients of their own, and their entries must load without them too.
const QUEUE_ENGINES = new Set(['bullmq', 'pg-boss']);
const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as Manifest;
const specifiers = Object.keys(manifest.exports)
  .filter((subpath) => subpath !== './package.json')
  .map((subpath) => (subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`));
const { tarball } = packTarball();
const project = mkdtempSync(join(tmpdir(), 'svc-webhooks-smoke-'));

function run(command: string, args: readonly string[]): string {
  return execFileSync(command, args, { cwd: project, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
}

// A module that loads every subpath, checks each exports something, and signs then verifies with the root.
function loader(load: (specifier: string) => string): string {
  const lines = specifiers.map(
    (specifier) =>
      `{ const m = ${load(specifier)}; if (Object.keys(m).length === 0) throw new Error('${specifier}: no exports'); ` +
      `console.log('loaded ${specifier}: ' + Object.keys(m).length + ' exports'); }`,
  );
  const root = load(manifest.name);
  lines.push(
    `{ const { sign, verify } = ${root}; const body = JSON.stringify({ id: 'msg_1', type: 'webhook.test', data: { object: { id: 'o' } } });`,
    `  const now = Math.floor(Date.now() / 1000); const headers = sign(body, { id: 'msg_1', timestamp: now, secret: 'whsec_c2VjcmV0' });`,
    `  if (verify(body, headers, 'whsec_c2VjcmV0').id !== 'msg_1') throw new Error('round trip failed'); console.log('sign/verify round trip ok'); }`,
  );
  return `${lines.join('\n')}\n`;
}

function typeCheck(file: string, moduleKind: string, resolution: string): void {
  const tsc = join(PACKAGE_ROOT, 'node_modules/typescript/bin/tsc');
  const options = ['--noEmit', '--strict', '--skipLibCheck', '--target', 'es2022', '--module', moduleKind, '--moduleResolution', resolution];
  execFileSync(process.execPath, [tsc, ...options, file], { cwd: project, stdio: 'inherit' });
  console.log(`types resolve: ${file} (${resolution})`);
}

try {
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'smoke', private: true, type: 'commonjs' }));
  // The stores take a client the caller made and never import one, and the queue entries take the engine's
  // objects: leave the database clients and the engines out, so that every entry is shown to load without them.
  const peers = Object.entries(manifest.peerDependencies ?? {})
    .filter(([name]) => !DATABASE_CLIENTS.has(name) && !QUEUE_ENGINES.has(name))
    .map(([name, range]) => `${name}@${range}`);
  run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', tarball, ...peers]);
  for (const client of [...DATABASE_CLIENTS, ...QUEUE_ENGINES]) {
    if (existsSync(join(project, 'node_modules', client))) throw new Error(`${client} was installed, but the smoke test must load every entry without it`);
  }

  writeFileSync(join(project, 'esm.mjs'), loader((specifier) => `await import('${specifier}')`));
  writeFileSync(join(project, 'cjs.cjs'), loader((specifier) => `require('${specifier}')`));
  console.log(`ESM:\n${run(process.execPath, ['esm.mjs'])}CJS:\n${run(process.execPath, ['cjs.cjs'])}`);
  // Each entry ships as one file with its own copy of the error class, and the CommonJS build is another:
  // an error of the Fetch entry is still an instance of the class every copy exports.
  writeFileSync(
    join(project, 'identity.mjs'),
    [
      `import { createRequire } from 'node:module';`,
      `import { WebhookVerificationError } from '${manifest.name}';`,
      `import { verifyWebhook } from '${manifest.name}/fetch';`,
      `const { WebhookVerificationError: FromRequire } = createRequire(import.meta.url)('${manifest.name}');`,
      `let refused;`,
      `const entry = verifyWebhook({ secret: 'whsec_c2VjcmV0', dedup: false, onError: (error) => { refused = error; return new Response(null, { status: 400 }); } }, () => undefined);`,
      `await entry(new Request('http://receiver.test/', { method: 'POST', body: '{}' }));`,
      `if (!(refused instanceof WebhookVerificationError) || !(refused instanceof FromRequire) || new Error('x') instanceof FromRequire) throw new Error('instanceof failed across copies');`,
      `console.log('an error of the Fetch entry is an instance of the class of the root, imported and required');`,
    ].join('\n'),
  );
  console.log(run(process.execPath, ['identity.mjs']));

  const imports = specifiers.map((specifier, i) => `import * as m${i} from '${specifier}';\nexport const e${i} = Object.keys(m${i});`);
  // The handler types must hold as published, with no schema library installed: were a type lost to
  // `any`, the directive below would go unused and fail the check.
  imports.push(
    `import { dispatch, type StandardSchema, type WebhookDelivery } from '${manifest.name}';`,
    `declare const delivery: WebhookDelivery;`,
    `const schema: StandardSchema<unknown, { id: string }> = { '~standard': { version: 1, vendor: 'smoke', validate: (value) => ({ value: value as { id: string } }) } };`,
    `export const handled = dispatch(delivery, { on: { 'call.missed': (e: { id: string }) => e.id, 'webhook.test': (e, { id }) => e.data.object.id + id }, schemas: { 'call.missed': schema } });`,
    `// @ts-expect-error a type that is not known is no key of on`,
    `export const misspelled = dispatch(delivery, { on: { 'call.mised': () => {} } });`,
  );
  writeFileSync(join(project, 'types.mts'), `${imports.join('\n')}\n`);
  writeFileSync(join(project, 'types.cts'), `${imports.join('\n')}\n`);
  writeFileSync(join(project, 'types.ts'), `${imports.join('\n')}\n`);
  typeCheck('types.mts', 'nodenext', 'nodenext');
  typeCheck('types.cts', 'nodenext', 'nodenext');
  typeCheck('types.ts', 'esnext', 'bundler');
  console.log(`smoke: ${specifiers.length} subpath(s) load from ESM and CJS with types`);
} finally {
  rmSync(project, { recursive: true, force: true });
}

/**
 * The bin from the packed tarball, run in a project that installed it (the
 * examples' checks and the help through `npx svc-webhooks`, the rest through
 * the bin npm linked, which npx would run): check grades the example receivers and receivers written
 * without this library; send and sign agree with an HMAC computed here with
 * node:crypto alone; verify names the cause of each fixtures/cli request.
 * Tests run concurrently: the slow ones wait out the 10 s answer window.
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CLI_FIXTURES_DIR, type CliCase } from '../../fixtures/cli/cases.js';
import {
  ACCEPTANCE_CHECKS,
  checkHandWritten,
  expectExamplePasses,
  expectFaultFlagged,
  expectTableOfTimestampFaults,
  expectUnansweredSendFails,
  FAULT_SCENARIOS,
  hmac,
  OLD_SECRET,
  type RunCli,
  SECRET,
  SEND_SCENARIOS,
} from './delivery-scenarios.js';
import { EXAMPLES } from './example-receivers.js';
import { installPackedCli, runProcess, type PackedCli } from './packed-cli.js';
import { CONTRACTS } from '../helpers/contract-types.js';

// Most tests wait on a subprocess or a receiver's clock, not the CPU: let them all run at once.
vi.setConfig({ maxConcurrency: 10 });

let cli: PackedCli;
const scratch = mkdtempSync(join(tmpdir(), 'svc-webhooks-cli-test-'));
beforeAll(async () => {
  cli = await installPackedCli();
}, 240_000);
afterAll(() => {
  cli?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

// The installed bin once beforeAll has installed it.
const bin: RunCli = (args, input) => cli.run(args, input);
const npx: RunCli = (args, input) => cli.npx(args, input);

describe.concurrent('svc-webhooks check', () => {
  it('flags a receiver that answers after 12 s: no 2xx within 10 s, while its refusals pass', async () => {
    const { run, report, failing } = await checkHandWritten(bin, { answersAfterMs: 12_000 });
    expect(run.code).toBe(1);
    expect(failing).toEqual(ACCEPTANCE_CHECKS);
    for (const check of report.checks.filter((one) => !one.passed)) expect(check.detail).toContain('no answer within 10 s');
  }, 60_000);

  it.each(EXAMPLES)('passes the receiver of examples/%s.ts', (name) => expectExamplePasses(npx, name), 60_000);

  it.each(FAULT_SCENARIOS)('$title', (scenario) => expectFaultFlagged(bin, scenario), 30_000);

  it('prints a table in plain words, one row per check, and exits 1 when one fails', () => expectTableOfTimestampFaults(bin), 30_000);
});

describe.concurrent('svc-webhooks send', () => {
  it('counts an attempt unanswered after 10 s as failed', () => expectUnansweredSendFails(bin, '10 s'), 30_000);

  it.each(Object.entries(SEND_SCENARIOS))('%s', (_title, scenario) => scenario(bin), 30_000);
});

describe.concurrent('svc-webhooks sign', () => {
  const body = '{"id":"msg_sign_1","type":"webhook.test","data":{"object":{"id":"we_1"}}}';

  it('prints the three headers, with the signature an independent HMAC gives', async () => {
    const file = join(scratch, 'sign-body.json');
    writeFileSync(file, body);
    const run = await cli.run(['sign', '--secret', SECRET, '--id', 'msg_sign_1', '--timestamp', '1795000000', '--body', `@${file}`]);
    expect(run.stdout).toBe(
      `webhook-id: msg_sign_1\nwebhook-timestamp: 1795000000\nwebhook-signature: v1,${hmac(SECRET, 'msg_sign_1', '1795000000', body)}\n`,
    );
    expect(run.code).toBe(0);
  }, 30_000);

  it('reads the body from standard input and signs with each secret', async () => {
    const run = await cli.run(['sign', '--secret', OLD_SECRET, '--secret', SECRET, '--id', 'msg_sign_1', '--timestamp', '1795000000', '--body', '-'], body);
    const expected = [OLD_SECRET, SECRET].map((secret) => `v1,${hmac(secret, 'msg_sign_1', '1795000000', body)}`).join(' ');
    expect(run.stdout).toContain(`webhook-signature: ${expected}\n`);
  }, 30_000);

  it('prints curl -H arguments that a shell reads back as the headers', async () => {
    const id = "msg_it's quoted";
    const run = await cli.run(['sign', '--secret', SECRET, '--id', id, '--timestamp', '1795000000', '--curl'], body);
    expect(run.code).toBe(0);
    const words = execFileSync('sh', ['-c', `printf '%s\\n' ${run.stdout}`], { encoding: 'utf8' }).trimEnd().split('\n');
    expect(words).toEqual([
      '-H',
      'content-type: application/json',
      '-H',
      `webhook-id: ${id}`,
      '-H',
      'webhook-timestamp: 1795000000',
      '-H',
      `webhook-signature: v1,${hmac(SECRET, id, '1795000000', body)}`,
    ]);
  }, 30_000);

  it("feeds verify: sign's lines are verify's --headers", async () => {
    const now = String(Math.floor(Date.now() / 1000));
    const signed = await cli.run(['sign', '--secret', SECRET, '--id', 'msg_sign_1', '--timestamp', now], body);
    const bodyFile = join(scratch, 'round-trip.json');
    writeFileSync(bodyFile, body);
    const run = await cli.run(['verify', '--secret', SECRET, '--headers', '-', '--body', `@${bodyFile}`], signed.stdout);
    expect(run.stdout).toMatch(/^valid: webhook\.test msg_sign_1$/m);
    expect(run.code).toBe(0);
  }, 30_000);
});

/** What verify must say for each cause of fixtures/cli/cases.json. */
const CAUSE_TEXT: Record<string, RegExp> = {
  valid: /^valid: call\.missed msg_/m,
  'body:compact_json': /^cause: the signature matches the body parsed and printed again as compact JSON.*re-serialized/m,
  'body:pretty_json_2': /^cause: the signature matches the body parsed and printed again as JSON indented with 2 spaces.*re-serialized/m,
  'body:final_newline_removed': /^cause: the signature matches the body without its final newline/m,
  'key:prefix_kept': /^cause: the signature was made with the whole secret, "whsec_" prefix included/m,
  'key:not_base64_decoded': /^cause: the signature was made with the part after "whsec_" used as UTF-8 text, not base64-decoded/m,
  'key:base64_decoded': /^cause: the signature was made with this secret base64-decoded/m,
  clock: /^cause: the signature is valid, but the timestamp is 412 s behind this clock/m,
  milliseconds: /^cause: webhook-timestamp is in milliseconds/m,
  other_secret: /^cause: the request was signed with a different secret/m,
  missing_header: /^cause: the request has no webhook-signature header/m,
};

const cases = JSON.parse(readFileSync(new URL('cases.json', CLI_FIXTURES_DIR), 'utf8')) as CliCase[];

describe.concurrent('svc-webhooks verify', () => {
  const fixture = (path: string): string => `@${new URL(path, CLI_FIXTURES_DIR).pathname}`;

  it.each(cases.map((one) => [one.name, one] as const))('names the cause of fixtures/cli/%s', async (_name, one) => {
    const files = 'request' in one.files ? ['--request', fixture(one.files.request)] : ['--headers', fixture(one.files.headers), '--body', fixture(one.files.body)];
    const run = await cli.run(['verify', ...one.secrets.flatMap((secret) => ['--secret', secret]), '--now', String(one.now), ...files]);
    expect(Object.keys(CAUSE_TEXT)).toContain(one.cause);
    expect(run.stdout).toMatch(CAUSE_TEXT[one.cause]!);
    expect(run.stdout.split('\n')[0]).toMatch(one.verdict === 'valid' ? /^valid: / : new RegExp(`^invalid: ${one.verdict}: `));
    expect(run.code).toBe(one.verdict === 'valid' ? 0 : 1);
  }, 30_000);

  it('covers every cause with a fixture', () => {
    expect(new Set(cases.map((one) => one.cause))).toEqual(new Set(Object.keys(CAUSE_TEXT)));
  });
});

describe('dev, from the tarball', () => {
  it('relays a delivery to the receiver, lists it on its API, and stops on Ctrl-C', async () => {
    const receiver = createServer((_req, res) => void res.writeHead(204, { 'svc-webhooks-outcome': 'processed; handler-ms=1; key-id=0' }).end());
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
    const { port } = receiver.address() as AddressInfo;
    const dev = cli.start(['dev', '--forward', `http://127.0.0.1:${port}/webhooks`, '--port', '0', '--secret', SECRET]);
    try {
      let out = '';
      dev.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
      await vi.waitFor(() => expect(out.split('\n').length).toBeGreaterThan(2), { timeout: 20_000 });
      const [inspector, webhooks] = out.split('\n');
      const page = new URL(inspector!.replace('Inspector: ', ''));
      const relay = webhooks!.replace('Webhooks: ', '').split(' -> ')[0]!;
      expect((await fetch(page)).status).toBe(200);
      const body = JSON.stringify({ id: 'msg_packed_dev', type: 'webhook.test', data: { object: { id: 'obj_1' } } });
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = `v1,${hmac(SECRET, 'msg_packed_dev', timestamp, body)}`;
      const answer = await fetch(relay, { method: 'POST', body, headers: { 'webhook-id': 'msg_packed_dev', 'webhook-timestamp': timestamp, 'webhook-signature': signature } });
      expect(answer.status).toBe(204);
      const listed = (await (await fetch(new URL('/api/deliveries', page), { headers: { authorization: `Bearer ${page.searchParams.get('token')}` } })).json()) as { deliveries: unknown[] };
      expect(listed.deliveries).toEqual([expect.objectContaining({ n: 1, valid: true, status: 204, outcome: { outcome: 'processed', handlerMs: 1, keyId: '0' } })]);
      dev.kill('SIGINT');
      const [code] = (await once(dev, 'exit')) as [number | null];
      expect(code).toBe(0);
    } finally {
      dev.kill();
      receiver.close();
    }
  }, 60_000);
});

describe('types, its optional peers installed beside the package', () => {
  it('names what to install while they are missing, exit 2', async () => {
    const run = await bin(['types', join(CONTRACTS, 'rich.yaml'), '-o', join(scratch, 'webhook-types.ts')]);
    expect(run).toMatchObject({
      code: 2,
      stderr: 'svc-webhooks types: this needs @redocly/openapi-core, an optional peer: npm install --save-dev openapi-typescript@7 typescript@5 @redocly/openapi-core@1\n',
    });
  });

  it('refuses generators of another major installed beside it in one line, exit 2', async () => {
    const project = mkdtempSync(join(tmpdir(), 'svc-webhooks-majors-'));
    try {
      writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'receiver-majors', private: true }));
      execFileSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', cli.tarball], { cwd: project });
      // What npm install --legacy-peer-deps leaves today: TypeScript 7 and openapi-core 2 beside openapi-typescript 7.
      for (const [name, version] of [['openapi-typescript', '7.13.0'], ['typescript', '7.0.2'], ['@redocly/openapi-core', '2.64.0']]) {
        mkdirSync(join(project, 'node_modules', name!), { recursive: true });
        writeFileSync(join(project, 'node_modules', name!, 'package.json'), JSON.stringify({ name, version }));
      }
      const run = await runProcess(join(project, 'node_modules/.bin/svc-webhooks'), ['types', join(CONTRACTS, 'rich.yaml')], project);
      expect(run).toEqual({
        code: 2,
        stdout: '',
        stderr:
          'svc-webhooks types: unsupported generator version(s): found typescript 7.0.2, @redocly/openapi-core 2.64.0; wanted typescript ^5.0.0, @redocly/openapi-core ^1.34.0: npm install --save-dev openapi-typescript@7 typescript@5 @redocly/openapi-core@1\n',
      });
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  }, 60_000);

  it("writes modules a project compiles with its own tsc against the installed package, and whose validators run compiled", async () => {
    const project = mkdtempSync(join(tmpdir(), 'svc-webhooks-types-'));
    try {
      writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'typed-receiver', private: true, type: 'module' }));
      // The versions this repository tests with, from its own install.
      const pinned = ['openapi-typescript', '@redocly/openapi-core', '@exodus/schemasafe', 'typescript', '@types/node'].map(
        (name) => `${name}@${(JSON.parse(readFileSync(join(import.meta.dirname, '../../node_modules', name, 'package.json'), 'utf8')) as { version: string }).version}`,
      );
      execFileSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', cli.tarball, ...pinned], { cwd: project });
      const svcWebhooks = join(project, 'node_modules/.bin/svc-webhooks');
      const generated = await runProcess(svcWebhooks, ['types', join(CONTRACTS, 'rich.yaml'), '-o', 'src/webhook-types.ts', '--schemas'], project);
      expect(generated).toMatchObject({ code: 0, stderr: '' });
      writeFileSync(
        join(project, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { strict: true, exactOptionalPropertyTypes: true, module: 'nodenext', target: 'es2022', outDir: 'dist', types: ['node'] }, include: ['src'] }),
      );
      writeFileSync(
        join(project, 'src/receiver.ts'),
        [
          "import './webhook-types.js';",
          "import type { EventHandlers } from 'svc-webhooks';",
          "import { verifyWebhook } from 'svc-webhooks/fetch';",
          "import { schemas, schemasFor } from './webhook-types.schemas.js';",
          "const on = { 'voicemail.received': (event) => event.data.object.durationMs } satisfies EventHandlers;",
          "export const receiver = verifyWebhook({ secret: 'whsec_c2VjcmV0', on, schemas: schemasFor(on) });",
          "const event = { id: 'evt_1', type: 'voicemail.received', data: { object: { id: 'vm_1', durationMs: 'long' } } };",
          "console.log(JSON.stringify(await schemas['voicemail.received']['~standard'].validate(event)));",
        ].join('\n'),
      );
      const tsc = join(project, 'node_modules/.bin/tsc');
      expect(await runProcess(tsc, ['-p', '.'], project)).toMatchObject({ code: 0, stdout: '' });
      const ran = await runProcess(process.execPath, ['dist/receiver.js'], project);
      expect(ran.code).toBe(0);
      expect(JSON.parse(ran.stdout)).toMatchObject({ issues: expect.arrayContaining([{ message: 'fails "required"', path: ['data', 'object', 'call'] }]) });

      mkdirSync(join(project, 'src'), { recursive: true });
      writeFileSync(join(project, 'src/misspelled.ts'), "import type { KnownEventMap } from 'svc-webhooks';\nexport const f = (e: KnownEventMap['voicemail.received']) => e.data.object.durationSeconds;\n");
      const refused = await runProcess(tsc, ['-p', '.', '--noEmit'], project);
      expect(refused.code).not.toBe(0);
      expect(refused.stdout).toMatch(/^src\/misspelled\.ts\(2,\d+\): error TS2339: Property 'durationSeconds' does not exist/);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  }, 240_000);
});

it('npx svc-webhooks prints help for each command and exits 2 on a usage mistake', async () => {
  const runs = await Promise.all([
    cli.npx(['--help']),
    ...['send', 'check', 'sign', 'verify', 'types', 'dev', 'replay'].map((command) => cli.npx([command, '--help'])),
    cli.npx(['send', '--secret', SECRET]),
  ]);
  expect(runs[0]!.stdout).toMatch(/^Usage: svc-webhooks <command>/);
  for (const [i, command] of ['send', 'check', 'sign', 'verify', 'types', 'dev', 'replay'].entries()) {
    expect(runs[i + 1]!.stdout).toMatch(new RegExp(`^Usage: svc-webhooks ${command} `));
    expect(runs[i + 1]!.code).toBe(0);
  }
  expect(runs[8]!.stderr).toContain('<url> is missing');
  expect(runs[8]!.code).toBe(2);
}, 30_000);

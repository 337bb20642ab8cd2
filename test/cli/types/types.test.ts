/** `svc-webhooks types` as a user runs it: what it writes and prints, --check, and each contract it cannot use. */
import { Buffer } from 'node:buffer';
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { ContractError } from '../../../src/cli/shared/contract-error.js';
import { loadPeer, SCHEMA_INSTALL } from '../../../src/cli/shared/peers.js';
import { shortDiff, typesCommand } from '../../../src/cli/types/types.js';
import { inProcessCli } from '../in-process-cli.js';
import { CONTRACTS, runTypes, typesFolder } from '../../helpers/contract-types.js';

const cli = inProcessCli();

describe('svc-webhooks types', () => {
  it('writes the module and names the types it describes', async () => {
    const run = await runTypes('rich.yaml');
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toBe(`wrote ${join(run.dir, 'webhook-types.ts')}\n4 event type(s): call.missed, message.received, webhook.test, voicemail.received\n`);
    expect(await readFile(join(run.dir, 'webhook-types.ts'), 'utf8')).toContain('interface ContractEventMap');
  });

  it('says how to run it and import what it writes, and is listed with the other commands', async () => {
    const help = await cli(['types', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: svc-webhooks types <contract\.yaml\|contract\.json\|file: URL> \[-o webhook-types\.ts\] \[--schemas\] \[--check\]\n/);
    expect(help.stdout).toContain("once (import './webhook-types.js') or include it in your tsconfig");
    expect(help.stdout).toContain('  -o, --out FILE  the module to write (default: webhook-types.ts)\n');
    expect((await cli(['--help'])).stdout).toMatch(/\n {2}types +write the types of every event from the OpenAPI contract\n/);
  });

  it('writes the same module from the same contract, and reads a file: URL as its path', async () => {
    const first = await runTypes('rich.yaml');
    const dir = await typesFolder();
    const out = join(dir, 'webhook-types.ts');
    const byUrl = await cli(['types', pathToFileURL(join(CONTRACTS, 'rich.yaml')).href, '-o', out]);
    expect(byUrl.code).toBe(0);
    expect(await readFile(out, 'utf8')).toBe(await readFile(join(first.dir, 'webhook-types.ts'), 'utf8'));
  });

  it('writes the validators beside the module with --schemas', async () => {
    const run = await runTypes('rich.yaml', ['--schemas']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`wrote ${join(run.dir, 'webhook-types.schemas.ts')}\n`);
    const text = await readFile(join(run.dir, 'webhook-types.schemas.ts'), 'utf8');
    expect(text).toContain(`import type {} from "./webhook-types.js";`);
    expect(text).toContain(`export type ContractEventType = "call.missed" | "message.received" | "webhook.test" | "voicemail.received";`);
    expect(text).toMatch(/^\/\/ @ts-nocheck.*\n\/\*\*\n \* Standard Schema validators for the event types of the service's contract, written by `svc-webhooks types` from\n \* rich\.yaml\. /);
    // One validator a line, each under the comment that says where its schema is.
    expect(text).toContain('\n  /** #/webhooks/message.received/post/requestBody/content/application~1json/schema */\n  "message.received": standard(');
    expect(text).not.toMatch(/\bfrom ['"]@exodus\/schemasafe['"]|\brequire\(/);
  });

  it('generates a payload that does not fit the envelope, with a warning naming where, and leaves out a body that is not JSON', async () => {
    const run = await runTypes('off-envelope.yaml');
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(
      `svc-webhooks types: warning: #/webhooks/number.ported/post/requestBody/content/application~1json/schema does not require the envelope's "data.object.id": generated with the envelope added\n` +
        'svc-webhooks types: warning: #/webhooks/conversation.closed has no JSON request body: left out\n',
    );
    expect(run.stdout).toContain('1 event type(s): number.ported\n');
  });

  it.each([
    ['no webhooks section', 'no-webhooks.yaml', 'svc-webhooks types: no-webhooks.yaml has no webhooks section: it describes no event (OpenAPI 3.1 "webhooks")\n'],
    [
      'a broken $ref',
      'broken-ref.yaml',
      "svc-webhooks types: broken-ref.yaml: Can't resolve $ref at #/webhooks/call.missed/post/requestBody/content/application~1json/schema\n",
    ],
    ['YAML that does not parse', 'not-yaml.yaml', /^svc-webhooks types: not-yaml\.yaml cannot be read: unexpected end of the stream .*\n$/],
    ['a file that is not there, named without its folder', 'absent.yaml', /^svc-webhooks types: absent\.yaml cannot be read: ENOENT: [^/]*'absent\.yaml'\n$/],
  ])('refuses a contract with %s in one line, exit 2, writing nothing', async (_name, fixture, message) => {
    const run = await runTypes(fixture);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    if (typeof message === 'string') expect(run.stderr).toBe(message);
    else expect(run.stderr).toMatch(message);
    await expect(readFile(join(run.dir, 'webhook-types.ts'))).rejects.toThrow('ENOENT');
  });

  it('refuses two webhooks of one event type', async () => {
    const dir = await typesFolder();
    const contract = (await readFile(join(CONTRACTS, 'rich.yaml'), 'utf8')).replace('  message.received:\n', '  messageReceived:\n') + '';
    const twice = contract.replace('webhooks:\n', 'webhooks:\n  again:\n    post:\n      requestBody:\n        content:\n          application/json:\n            schema:\n              $ref: \'#/components/schemas/CallMissedEvent\'\n      responses:\n        \'204\': { description: Taken }\n');
    await writeFile(join(dir, 'twice.yaml'), twice);
    const run = await cli(['types', join(dir, 'twice.yaml'), '-o', join(dir, 'webhook-types.ts')]);
    expect(run).toMatchObject({ code: 2, stderr: 'svc-webhooks types: webhooks "again" and "callMissed" both describe the event type "call.missed"\n' });
  });

  it("prints nothing of openapi-typescript's own: what the contract needs said, the command says", async () => {
    const dir = await typesFolder();
    // A discriminator mapped to a schema that is no object, which openapi-typescript would warn about on the console.
    const contract = (await readFile(join(CONTRACTS, 'rich.yaml'), 'utf8')).replace("            - $ref: '#/components/schemas/MediaContent'\n", '') + '    Plain: { type: string }\n';
    await writeFile(join(dir, 'plain.yaml'), contract.replace("              media: '#/components/schemas/MediaContent'", "              media: '#/components/schemas/Plain'"));
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      expect(await cli(['types', join(dir, 'plain.yaml'), '-o', join(dir, 'webhook-types.ts')])).toMatchObject({ code: 0, stderr: '' });
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  it('prints what comes from the contract escaped', async () => {
    const dir = await typesFolder();
    const contract = (await readFile(join(CONTRACTS, 'off-envelope.yaml'), 'utf8')).replace('conversation.closed:', '"conversation.closed\\e[2J\\r\\nattempt 2: 204":');
    await writeFile(join(dir, 'escape.yaml'), contract);
    const run = await cli(['types', join(dir, 'escape.yaml'), '-o', join(dir, 'webhook-types.ts')]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('#/webhooks/conversation.closed\\x1b[2J\\r\\nattempt 2: 204 has no JSON request body');
    expect(run.stderr).not.toMatch(/[\x1b\r]/);
  });

  it('makes the folders of the module it writes, and names the validators and their import after the module alone', async () => {
    const dir = await typesFolder();
    // A ".ts" inside a folder's or the file's name is not the module's extension.
    const out = join(dir, 'generated.ts', 'hooks.ts-types.ts');
    const run = await cli(['types', join(CONTRACTS, 'rich.yaml'), '-o', out, '--schemas']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toBe(`wrote ${out}\nwrote ${join(dir, 'generated.ts', 'hooks.ts-types.schemas.ts')}\n4 event type(s): call.missed, message.received, webhook.test, voicemail.received\n`);
    expect(await readFile(join(dir, 'generated.ts', 'hooks.ts-types.schemas.ts'), 'utf8')).toContain(`import type {} from "./hooks.ts-types.js";`);
  });

  it('makes every missing folder above the module, one level at a time', async () => {
    const dir = await typesFolder();
    const out = join(dir, 'src', 'generated', 'webhook-types.ts');
    expect(await cli(['types', join(CONTRACTS, 'rich.yaml'), '-o', out])).toMatchObject({ code: 0, stderr: '' });
    expect(await readFile(out, 'utf8')).toContain('interface ContractEventMap');
  });

  it.each([
    ['a folder', async (dir: string) => (await mkdir(join(dir, 'webhook-types.ts')), join(dir, 'webhook-types.ts')), 'it is a folder'],
    ['under a file', async (dir: string) => (await writeFile(join(dir, 'file'), ''), join(dir, 'file', 'webhook-types.ts')), 'ENOTDIR: not a directory'],
    ['under a file, deeper', async (dir: string) => (await writeFile(join(dir, 'file'), ''), join(dir, 'file', 'deeper', 'webhook-types.ts')), 'ENOTDIR: not a directory'],
    // Node 20's recursive mkdir never returns for a folder under /proc.
    ['in /proc', async () => '/proc/svc-webhooks-absent/webhook-types.ts', 'ENOENT: no such file or directory'],
  ])('refuses to write %s in one line, exit 2, writing nothing', async (_name, place, reason) => {
    const dir = await typesFolder();
    const out = await place(dir);
    const run = await cli(['types', join(CONTRACTS, 'rich.yaml'), '-o', out, '--schemas']);
    expect(run).toMatchObject({ code: 2, stdout: '', stderr: `svc-webhooks types: cannot write ${out}: ${reason}\n` });
    expect(await readdir(dir)).toEqual(out.startsWith(dir) ? [out.slice(dir.length + 1).split('/')[0]] : []);
  });

  it('with --schemas, replaces neither file when one cannot be written', async () => {
    const dir = await typesFolder();
    await writeFile(join(dir, 'webhook-types.ts'), 'before');
    await mkdir(join(dir, 'webhook-types.schemas.ts'));
    const run = await runTypes('rich.yaml', ['--schemas'], dir);
    expect(run).toMatchObject({ code: 2, stdout: '', stderr: `svc-webhooks types: cannot write ${join(dir, 'webhook-types.schemas.ts')}: it is a folder\n` });
    expect(await readFile(join(dir, 'webhook-types.ts'), 'utf8')).toBe('before');
    expect((await readdir(dir)).sort()).toEqual(['webhook-types.schemas.ts', 'webhook-types.ts']);
  });

  it.each([
    ['on another host', 'file://evil.example/openapi.yaml', 'File URL host must be "localhost" or empty on linux'],
    ['with an encoded "/"', 'file:///tmp/a%2Fb.yaml', 'File URL path must not include encoded / characters'],
    ['with a bad escape', 'file:///tmp/rich%zz.yaml', 'URI malformed'],
  ])('refuses a file: URL %s as a usage error', async (_name, url, reason) => {
    const run = await cli(['types', url, '-o', join(await typesFolder(), 'webhook-types.ts')]);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr.split('\n')[0]).toBe(`svc-webhooks types: <contract> is not a local file: URL: ${reason}`);
  });

  it('refuses a contract of no event in one line, exit 2, rather than write a module that does not compile', async () => {
    const dir = await typesFolder();
    const contract = (await readFile(join(CONTRACTS, 'off-envelope.yaml'), 'utf8')).replace(/\n {2}number\.ported:\n(?: {4,}.*\n)+/, '\n');
    await writeFile(join(dir, 'openapi.yaml'), contract);
    const run = await cli(['types', join(dir, 'openapi.yaml'), '-o', join(dir, 'webhook-types.ts'), '--schemas']);
    expect(run).toMatchObject({ code: 2, stdout: '', stderr: 'svc-webhooks types: openapi.yaml describes no event it can use: #/webhooks/conversation.closed has no JSON request body: left out\n' });
    expect(await readdir(dir)).toEqual(['openapi.yaml']);
  });

  it('refuses a contract of a $ref to a URL in one line, exit 2', async () => {
    const dir = await typesFolder();
    const contract = (await readFile(join(CONTRACTS, 'rich.yaml'), 'utf8')).replace("$ref: '#/components/schemas/CallMissedEvent'", "$ref: 'https://contracts.invalid/call-missed.yaml'");
    await writeFile(join(dir, 'openapi.yaml'), contract);
    const run = await cli(['types', join(dir, 'openapi.yaml'), '-o', join(dir, 'webhook-types.ts')]);
    expect(run).toMatchObject({
      code: 2,
      stderr: 'svc-webhooks types: the $ref https://contracts.invalid/call-missed.yaml is a URL: the command reads no network; download it and refer to the file\n',
    });
  });

  it.each([[[]], [['--check']]])('refuses a $ref to a file outside the folder in one line, exit 2, printing none of it (%j)', async (extra) => {
    const dir = await typesFolder();
    const contract = (await readFile(join(CONTRACTS, 'rich.yaml'), 'utf8')).replace('info:', "x-leak: { description: { $ref: '/proc/self/environ' } }\ninfo:");
    await writeFile(join(dir, 'openapi.yaml'), contract);
    const run = await cli(['types', join(dir, 'openapi.yaml'), '-o', join(dir, 'webhook-types.ts'), ...extra]);
    expect(run).toMatchObject({
      code: 2,
      stdout: '',
      stderr: "svc-webhooks types: the $ref to /proc/self/environ leaves the contract's folder: only the files in it and its subfolders are read\n",
    });
    expect(await readdir(dir)).toEqual(['openapi.yaml']);
  });

  it("throws a failure that is not the contract's, such as its output's, rather than call it a usage error", async () => {
    const dir = await typesFolder();
    const closed = new Error('write EPIPE');
    const io = { out: () => { throw closed; }, err: () => {}, stdin: async () => Buffer.alloc(0) };
    await expect(typesCommand.run([join(CONTRACTS, 'rich.yaml'), '-o', join(dir, 'webhook-types.ts')], io)).rejects.toBe(closed);
  });

  it('reads a path that only looks like a URL further on as a file', async () => {
    const run = await cli(['types', './contracts/https://example.test/openapi.yaml']);
    expect(run).toMatchObject({ code: 2, stderr: expect.stringContaining('svc-webhooks types: openapi.yaml cannot be read: ') });
  });

  it.each([
    ['a URL it would have to download', ['types', 'https://example.test/openapi.yaml'], '<contract> must be a local file or a file: URL'],
    ['a URL in capitals', ['types', 'HTTPS://EXAMPLE.TEST/openapi.yaml'], '<contract> must be a local file or a file: URL'],
    ['a URL of a scheme with a plus', ['types', 'git+ssh://example.test/api.git'], '<contract> must be a local file or a file: URL'],
    ['an output that is no .ts module', ['types', 'openapi.yaml', '-o', 'webhook-types.js'], '--out must name a .ts module (not .d.ts)'],
    ['an output that is no .ts module', ['types', 'openapi.yaml', '-o', 'webhook-types.d.ts'], '--out must name a .ts module (not .d.ts)'],
    ['no contract', ['types'], '<contract> is missing'],
  ])('refuses %s as a usage error', async (_name, args, message) => {
    const run = await cli(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
  });

  it('names the packages to install when a peer is missing', async () => {
    const missing = Object.assign(new Error("Cannot find package 'openapi-typescript' imported from /app/cli.js"), { code: 'ERR_MODULE_NOT_FOUND' });
    await expect(loadPeer('openapi-typescript', () => Promise.reject(missing))).rejects.toThrow(
      new ContractError('this needs openapi-typescript, an optional peer: npm install --save-dev openapi-typescript@7 typescript@5 @redocly/openapi-core@1'),
    );
    // Another failure, or one of another package the peer itself needs, is not told as a missing peer.
    const inner = Object.assign(new Error("Cannot find package 'change-case'"), { code: 'ERR_MODULE_NOT_FOUND' });
    await expect(loadPeer('openapi-typescript', () => Promise.reject(inner))).rejects.toBe(inner);
  });

  it("names them for require's failure too, with --schemas' packages when it is the one loading", async () => {
    const missing = Object.assign(new Error("Cannot find module '@exodus/schemasafe'"), { code: 'MODULE_NOT_FOUND' });
    await expect(loadPeer('@exodus/schemasafe', () => Promise.reject(missing), SCHEMA_INSTALL)).rejects.toThrow(
      new ContractError('this needs @exodus/schemasafe, an optional peer: npm install --save-dev @exodus/schemasafe@1'),
    );
    // A failure of another kind, even one that names the package or is no error at all, is thrown as it is.
    const other = Object.assign(new Error("Cannot find package '@exodus/schemasafe'"), { code: 'ERR_INVALID_PACKAGE_CONFIG' });
    await expect(loadPeer('@exodus/schemasafe', () => Promise.reject(other), SCHEMA_INSTALL)).rejects.toBe(other);
    await expect(loadPeer('@exodus/schemasafe', () => Promise.reject(null), SCHEMA_INSTALL)).rejects.toBeNull();
    expect(await loadPeer('@exodus/schemasafe', async () => 'loaded')).toBe('loaded');
  });
});

describe('svc-webhooks types --check', () => {
  it('exits 0 when the files are current, and 1 with a short diff once the contract changed', async () => {
    const dir = await typesFolder();
    const contract = join(dir, 'openapi.yaml');
    await copyFile(join(CONTRACTS, 'rich.yaml'), contract);
    const args = ['types', contract, '-o', join(dir, 'webhook-types.ts'), '--schemas'];
    expect((await cli(args)).code).toBe(0);
    const current = await cli([...args, '--check']);
    expect(current).toMatchObject({ code: 0, stderr: '' });
    expect(current.stdout).toBe(
      `up to date: ${join(dir, 'webhook-types.ts')}, ${join(dir, 'webhook-types.schemas.ts')} (call.missed, message.received, webhook.test, voicemail.received)\n`,
    );

    await writeFile(contract, (await readFile(contract, 'utf8')).replace("transcript: { type: [string, 'null'] }", "transcription: { type: [string, 'null'] }"));
    const stale = await cli([...args, '--check']);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/^svc-webhooks types: .*webhook-types\.ts differs from the contract:\n@@ line \d+ @@\n/);
    expect(stale.stderr).toContain('webhook-types.schemas.ts differs from the contract');
    expect(stale.stdout).toBe('');
    expect(stale.stderr).toMatch(/run the command without --check to write what the contract gives\n$/);
    // --check writes nothing.
    expect((await cli([...args, '--check'])).code).toBe(1);
  });

  it('exits 1 when a file is missing', async () => {
    const dir = await typesFolder();
    const run = await cli(['types', join(CONTRACTS, 'rich.yaml'), '-o', join(dir, 'webhook-types.ts'), '--check']);
    expect(run).toMatchObject({ code: 1, stderr: expect.stringContaining('webhook-types.ts is missing') });
  });

  it('shows the changed stretch only, cut short', () => {
    expect(shortDiff('a\nb\nc\n', 'a\nB\nc\n')).toBe('@@ line 2 @@\n- b\n+ B');
    // Lines added or removed at the end, or in the middle between lines alike.
    expect(shortDiff('a\nb', 'a\nb\nc')).toBe('@@ line 3 @@\n+ c');
    expect(shortDiff('a\nb\nc', 'a\nb')).toBe('@@ line 3 @@\n- c');
    expect(shortDiff('x\nx\nx', 'x\nx')).toBe('@@ line 3 @@\n- x');
    expect(shortDiff('x\nx', 'x\nx\nx')).toBe('@@ line 3 @@\n+ x');
    expect(shortDiff('a\nb\nb\nz', 'a\nb\nz')).toBe('@@ line 3 @@\n- b');
    expect(shortDiff('a\nz', 'b\nz')).toBe('@@ line 1 @@\n- a\n+ b');
    // Texts alike: an empty stretch just past the last line.
    expect(shortDiff('a\nb', 'a\nb')).toBe('@@ line 3 @@');
    const six = Array.from({ length: 6 }, (_, n) => `line ${n}`).join('\n');
    expect(shortDiff(`${six}\nline 6`, 'other').split('\n')).toEqual(['@@ line 1 @@', '- line 0', '- line 1', '- line 2', '- line 3', '- line 4', '- line 5', '- … 1 more line(s)', '+ other']);
    expect(shortDiff(six, 'other').split('\n')).toEqual(['@@ line 1 @@', '- line 0', '- line 1', '- line 2', '- line 3', '- line 4', '- line 5', '+ other']);
    // A line from the files is printed escaped.
    expect(shortDiff('a', 'b\u001b[2J')).toBe('@@ line 1 @@\n- a\n+ b\\x1b[2J');
    const many = Array.from({ length: 9 }, (_, n) => `line ${n}`).join('\n');
    expect(shortDiff('', many).split('\n')).toEqual(['@@ line 1 @@', '- ', '+ line 0', '+ line 1', '+ line 2', '+ line 3', '+ line 4', '+ line 5', '+ … 3 more line(s)']);
  });
});

describe('svc-webhooks types on a webhook that is no object', () => {
  it('writes the module without it, exit 0: openapi-typescript never meets it', async () => {
    const dir = await typesFolder();
    const contract = (await readFile(join(CONTRACTS, 'rich.yaml'), 'utf8')).replace('webhooks:\n', 'webhooks:\n  call.none: null\n');
    await writeFile(join(dir, 'openapi.yaml'), contract);
    const run = await inProcessCli()(['types', join(dir, 'openapi.yaml'), '-o', join(dir, 'webhook-types.ts'), '--schemas']);
    expect(run).toMatchObject({ code: 0, stderr: 'svc-webhooks types: warning: #/webhooks/call.none has no JSON request body: left out\n' });
    expect(await readFile(join(dir, 'webhook-types.ts'), 'utf8')).not.toContain('call.none');
  });
});

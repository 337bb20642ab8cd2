/** `svc-webhooks types` as a user runs it: what it writes and prints, --check, and each contract it cannot use. */
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ContractError } from '../../../src/cli/types/contract-error.js';
import { loadPeer } from '../../../src/cli/types/peers.js';
import { shortDiff } from '../../../src/cli/types/types.js';
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
    ['YAML that does not parse', 'not-yaml.yaml', /^svc-webhooks types: not-yaml\.yaml cannot be read: .*\n$/],
    ['a file that is not there', 'absent.yaml', /^svc-webhooks types: absent\.yaml cannot be read: .*\n$/],
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

  it('prints what comes from the contract escaped', async () => {
    const dir = await typesFolder();
    const contract = (await readFile(join(CONTRACTS, 'off-envelope.yaml'), 'utf8')).replace('conversation.closed:', '"conversation.closed\\e[2J\\r\\nattempt 2: 204":');
    await writeFile(join(dir, 'escape.yaml'), contract);
    const run = await cli(['types', join(dir, 'escape.yaml'), '-o', join(dir, 'webhook-types.ts')]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('#/webhooks/conversation.closed\\x1b[2J\\r\\nattempt 2: 204 has no JSON request body');
    expect(run.stderr).not.toMatch(/[\x1b\r]/);
  });

  it.each([
    ['a URL it would have to download', ['types', 'https://example.test/openapi.yaml'], '<contract> must be a local file or a file: URL'],
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
      new ContractError('this needs openapi-typescript, an optional peer: npm install --save-dev openapi-typescript @redocly/openapi-core'),
    );
    // Another failure, or one of another package the peer itself needs, is not told as a missing peer.
    const inner = Object.assign(new Error("Cannot find package 'change-case'"), { code: 'ERR_MODULE_NOT_FOUND' });
    await expect(loadPeer('openapi-typescript', () => Promise.reject(inner))).rejects.toBe(inner);
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
    expect(current.stdout).toContain('up to date: ');

    await writeFile(contract, (await readFile(contract, 'utf8')).replace("transcript: { type: [string, 'null'] }", "transcription: { type: [string, 'null'] }"));
    const stale = await cli([...args, '--check']);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/^svc-webhooks types: .*webhook-types\.ts differs from the contract:\n@@ line \d+ @@\n/);
    expect(stale.stderr).toContain('webhook-types.schemas.ts differs from the contract');
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
    const many = Array.from({ length: 9 }, (_, n) => `line ${n}`).join('\n');
    expect(shortDiff('', many).split('\n')).toEqual(['@@ line 1 @@', '- ', '+ line 0', '+ line 1', '+ line 2', '+ line 3', '+ line 4', '+ line 5', '+ … 3 more line(s)']);
  });
});

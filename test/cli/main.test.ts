/**
 * The bin itself, imported in-process: it runs the command line named by
 * process.argv on the process's own streams and sets process.exitCode.
 */
import { Buffer } from 'node:buffer';
import { createHmac } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import * as io from '../../src/cli/shared/io.js';
import * as run from '../../src/cli/run.js';

// The commands load once, here, outside any test, and each test's fresh bin gets these same modules. Loaded
// anew inside a test, a command's top-level values (its help, its tables) would count as reached by that
// test alone, and a mutant of them would be tried against it alone.
vi.doMock('../../src/cli/shared/io.js', () => io);
vi.doMock('../../src/cli/run.js', () => run);

const SECRET = `whsec_${Buffer.from('main-test-secret').toString('base64')}`;

const argv = process.argv;
let written: { stdout: string; stderr: string };

beforeEach(() => {
  written = { stdout: '', stderr: '' };
  for (const name of ['stdout', 'stderr'] as const) {
    vi.spyOn(process[name], 'write').mockImplementation((chunk: string | Uint8Array) => {
      written[name] += String(chunk);
      return true;
    });
  }
});

afterEach(() => {
  vi.restoreAllMocks();
  process.argv = argv;
  process.exitCode = undefined;
});

/** Imports a fresh copy of the bin with `args` on its command line; it finishes when the command has. */
async function runBin(...args: string[]): Promise<number | string | undefined> {
  process.argv = ['/usr/bin/node', '/usr/lib/node_modules/svc-webhooks/dist/esm/src/cli/main.js', ...args];
  vi.resetModules();
  await import('../../src/cli/main.js');
  return process.exitCode;
}

it('runs the command after node and the script, printing on standard output, and exits 0', async () => {
  expect(await runBin('--help')).toBe(0);
  expect(written.stdout).toMatch(/^Usage: svc-webhooks <command> \[options\]\n/);
  expect(written.stderr).toBe('');
});

it('reads a body piped to standard input', async () => {
  const stdin = new PassThrough();
  stdin.end('{"a":1}');
  vi.spyOn(process, 'stdin', 'get').mockReturnValue(stdin as unknown as typeof process.stdin);
  expect(await runBin('sign', '--secret', SECRET, '--id', 'msg_main', '--timestamp', '1795000000')).toBe(0);
  const mac = createHmac('sha256', 'main-test-secret').update('msg_main.1795000000.{"a":1}').digest('base64');
  expect(written.stdout).toBe(`webhook-id: msg_main\nwebhook-timestamp: 1795000000\nwebhook-signature: v1,${mac}\n`);
});

it('exits 2 on a usage mistake, saying so on standard error', async () => {
  expect(await runBin('sign', '--id', 'msg_main')).toBe(2);
  expect(written.stderr).toBe('svc-webhooks sign: --secret is required (or set WEBHOOK_SECRET)\nRun "svc-webhooks sign --help" for usage.\n');
  expect(written.stdout).toBe('');
});

it('exits 70 on an unexpected error, printing it', async () => {
  const broken = new Error('EPIPE: standard output closed');
  vi.mocked(process.stdout.write).mockImplementation(() => {
    throw broken;
  });
  const printed = vi.spyOn(console, 'error').mockImplementation(() => {});
  expect(await runBin('--help')).toBe(70);
  expect(printed).toHaveBeenCalledWith(broken);
});

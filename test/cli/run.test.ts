import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import type { CliIO } from '../../src/cli/shared/io.js';
import { runCli } from '../../src/cli/run.js';

const SECRET = 'whsec_c2VjcmV0LWZvci1ydW4tdGVzdHM=';

async function run(...args: string[]): Promise<{ status: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = { out: (line) => out.push(line), err: (line) => err.push(line), stdin: async () => Buffer.from('{}') };
  const status = await runCli(args, io);
  return { status, out: out.join('\n'), err: err.join('\n') };
}

describe('runCli', () => {
  it.each(['send', 'check', 'sign', 'verify'])('prints the help of %s for --help, -h and "help %s"', async (command) => {
    for (const args of [[command, '--help'], [command, '-h'], ['help', command]]) {
      const { status, out } = await run(...args);
      expect(status).toBe(0);
      expect(out).toMatch(new RegExp(`^Usage: svc-webhooks ${command} `));
      expect(out).toMatch(/Exit status: 0 /);
    }
  });

  it('lists the commands on --help, and on standard error with exit 2 when none is given', async () => {
    const help = await run('--help');
    expect([help.status, help.out]).toEqual([0, expect.stringMatching(/send +sign and deliver.*\n.*check +grade/)]);
    const none = await run();
    expect([none.status, none.out, none.err]).toEqual([2, '', expect.stringMatching(/^Usage: svc-webhooks <command>/)]);
  });

  it('lists the commands with their summaries, for --help, -h, help and help with an unknown command', async () => {
    for (const args of [['--help'], ['-h'], ['help'], ['help', 'deliver']]) {
      const { status, out } = await run(...args);
      expect(status).toBe(0);
      expect(out).toMatch(/\n\nCommands:\n {2}send {4}\S.*\n {2}check {3}\S.*\n/);
      expect(out).toContain(
        '\n  sign    print the three signature headers for a body' +
          '\n  verify  verify a received request, and say why it fails' +
          '\n  dev     relay deliveries to a receiver, and show, diagnose and replay each on a local page' +
          '\n  replay  send the deliveries a saved file holds again' +
          '\n  types   write the types of every event from the OpenAPI contract' +
          '\n\nRun "svc-webhooks <command> --help" for a command\'s options.',
      );
    }
  });

  it.each([new Error('EIO: standard input failed'), new TypeError('not one of ours')])('lets an unexpected error through: %s', async (error) => {
    const err: string[] = [];
    const io: CliIO = { out: () => {}, err: (line) => err.push(line), stdin: () => Promise.reject(error) };
    await expect(runCli(['sign', '--secret', SECRET, '--id', 'msg_1'], io)).rejects.toBe(error);
    expect(err).toEqual([]);
  });

  it.each([
    [['deliver'], /unknown command "deliver"/],
    [['send', '--secret', SECRET], /<url> is missing/],
    [['send', 'http://127.0.0.1:1/', 'extra', '--secret', SECRET], /1 unexpected argument after <url> \(not shown/],
    [['send', 'ftp://127.0.0.1/', '--secret', SECRET], /must be http or https/],
    [['send', 'http://127.0.0.1:1/'], /--secret is required/],
    [['send', 'http://127.0.0.1:1/', '--secret', SECRET, '--retries', 'many'], /--retries must be a whole number/],
    [['send', 'http://127.0.0.1:1/', '--secret', SECRET, '--data', '[1]'], /--data must be a JSON object/],
    [['send', 'http://127.0.0.1:1/', '--secret', SECRET, '--data', '@/nonexistent/data.json'], /cannot read \/nonexistent\/data.json \(ENOENT\)/],
    [['send', 'http://127.0.0.1:1/', '--secret', SECRET, '--colour'], /Unknown option '--colour'/],
    [['check', 'http://127.0.0.1:1/', '--secret', SECRET, '--secret', SECRET], /check takes one --secret/],
    [['sign', '--secret', 'whsec_!!', '--id', 'a'], /--secret: a secret starting with "whsec_"/],
    [['sign', '--secret', SECRET, '--id', ''], /id must be a non-empty string/],
    [['sign', '--secret', SECRET, '--id', 'a', '--timestamp', '1.5'], /--timestamp must be a whole number/],
    [['verify', '--secret', SECRET, '--body', '{}'], /give --headers and --body, or --request/],
    [['verify', '--secret', SECRET, '--request', '-', '--body', '{}'], /give either --request, or --headers and --body/],
    [['verify', '--secret', SECRET, '--headers', '-', '--body', '-'], /only one of --headers and --body/],
    [['verify', '--secret', SECRET, '--headers', 'webhook-id', '--body', '{}'], /not a "name: value" header line/],
  ])('refuses %j with exit 2 and a pointer to the help', async (args, message) => {
    const { status, err } = await run(...args);
    expect(err).toMatch(message);
    expect(status).toBe(2);
    if (args[0] !== 'deliver') expect(err).toContain(`Run "svc-webhooks ${args[0]} --help" for usage.`);
  });

  it('reads headers given as a JSON object', async () => {
    const headers = JSON.stringify({ 'Webhook-Id': 'msg_1', 'webhook-timestamp': '1', 'webhook-signature': ['v1,x'] });
    const { status, out } = await run('verify', '--secret', SECRET, '--headers', headers, '--body', '{}', '--now', '1');
    expect(out).toMatch(/^cause: webhook-signature holds no well-formed "v1,<base64>" entry/m);
    expect(status).toBe(1);
  });
});

/** `svc-webhooks dev` as a user starts it: the two lines it prints first, a line per delivery, its stop, and its mistakes. */
import { createServer } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { devCommand, startFailure } from '../../../src/cli/dev/dev.js';
import { UsageError } from '../../../src/cli/shared/args.js';
import type { CliIO } from '../../../src/cli/shared/io.js';
import { inProcessCli } from '../in-process-cli.js';
import { signedRequest, testEvent } from '../../../src/testing/index.js';
import { serveExpressHandlers } from '../../helpers/adapter-servers.js';
import { RELAY_SECRET } from '../../helpers/dev-relay.js';

// The ports the relay was asked to listen on. 8787 (also `wrangler dev`'s) is never bound here: the relay
// asked for it listens on a free port instead, so a test does not fail, nor fail another, on a machine that uses it.
const { askedPorts } = vi.hoisted(() => ({ askedPorts: [] as number[] }));
vi.mock('../../../src/cli/dev/relay.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/cli/dev/relay.js')>();
  return {
    ...real,
    startRelay: (options: Parameters<typeof real.startRelay>[0]) => {
      askedPorts.push(options.port);
      return real.startRelay(options.port === 8787 ? { ...options, port: 0 } : options);
    },
  };
});

/** Standard streams that keep each printed line, an error line marked as one. */
function recordingIO(): { lines: string[]; io: CliIO } {
  const lines: string[] = [];
  return { lines, io: { out: (line) => lines.push(line), err: (line) => lines.push(`err: ${line}`), stdin: async () => Buffer.alloc(0) } };
}

/** Runs `dev` with `args`, then `whileRunning` on the webhook address it printed, then stops it: its exit code and lines. */
async function runDev(args: readonly string[], whileRunning: (webhookUrl: string) => Promise<void> = async () => {}): Promise<{ code: number; lines: string[] }> {
  const { lines, io } = recordingIO();
  let stop!: () => void;
  const running = devCommand.run(['--forward', 'http://127.0.0.1:9/webhooks', '--secret', RELAY_SECRET, ...args], io, (resolve) => (stop = resolve));
  await expect.poll(() => lines.length).toBe(2);
  await whileRunning(/^Webhooks: (\S+)/.exec(lines[1]!)![1]!);
  stop();
  return { code: await running, lines };
}

describe('svc-webhooks dev', () => {
  it("prints the page's address with its token first, then the webhook address, and stops on the signal", async () => {
    const { lines, io } = recordingIO();
    let stop!: () => void;
    const running = devCommand.run(['--forward', 'http://127.0.0.1:9/webhooks', '--port', '0', '--secret', RELAY_SECRET], io, (resolve) => (stop = resolve));
    await expect.poll(() => lines.length).toBe(2);
    expect(lines[0]).toMatch(/^Inspector: http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{32}$/);
    const port = /:(\d+)\//.exec(lines[0]!)![1];
    expect(lines[1]).toBe(`Webhooks: http://127.0.0.1:${port}/webhooks -> http://127.0.0.1:9/webhooks`);
    const page = await fetch(lines[0]!.slice('Inspector: '.length));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await page.text()).toContain('<title>svc-webhooks dev</title>');
    stop();
    expect(await running).toBe(0);
    await expect(fetch(page.url)).rejects.toThrow();
    expect(lines.join('\n')).not.toContain(RELAY_SECRET.slice(6));
  });

  it.each(['SIGINT', 'SIGTERM'] as const)('stops on %s when no test gives its own signal, exit 0', async (signal) => {
    const { lines, io } = recordingIO();
    const before = process.listenerCount(signal);
    const running = devCommand.run(['--forward', 'http://127.0.0.1:9/webhooks', '--port', '0', '--secret', RELAY_SECRET], io);
    await expect.poll(() => process.listenerCount(signal)).toBe(before + 1);
    process.emit(signal, signal);
    expect(await running).toBe(0);
    expect(lines).toHaveLength(2);
  });

  it('prints one line per delivery once answered: time, number, type, id, verdict, status, outcome, ms', async () => {
    const receiver = await serveExpressHandlers({ secret: RELAY_SECRET, outcomeHeader: 'on', on: { 'call.missed': () => {} } });
    try {
      const event = testEvent('call.missed');
      const run = await runDev(['--port', '0', '--forward', `${receiver.url}/webhooks`], async (webhookUrl) => {
        for (const status of [204, 200]) expect((await fetch(signedRequest(event, { secret: RELAY_SECRET, url: webhookUrl }))).status).toBe(status);
      });
      const line = (n: number, answer: string): RegExp => new RegExp(String.raw`^\d\d:\d\d:\d\d  #${n}  call\.missed {7}${event.id}  relay: valid  receiver: ${answer}  \d+ ms$`);
      expect(run.lines.slice(2)).toEqual([expect.stringMatching(line(1, '204 processed')), expect.stringMatching(line(2, '200 duplicate'))]);
    } finally {
      await receiver.close();
    }
  });

  it('says which port is in use, exit 2', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
    const { port } = taken.address() as { port: number };
    try {
      const run = await inProcessCli()(['dev', '--forward', 'http://127.0.0.1:9/webhooks', '--port', String(port), '--secret', RELAY_SECRET]);
      expect(run).toMatchObject({ code: 2, stderr: expect.stringContaining(`svc-webhooks dev: port ${port} is in use: give another with --port`) });
    } finally {
      taken.close();
    }
  });

  it('says which port needs privileges, and passes any other start failure on as it is', () => {
    const refused = startFailure(Object.assign(new Error('listen EACCES'), { code: 'EACCES' }), 80);
    expect(refused).toBeInstanceOf(UsageError);
    expect((refused as Error).message).toBe('port 80 needs privileges this process does not have: give another with --port');
    const other = Object.assign(new Error('listen EMFILE'), { code: 'EMFILE' });
    expect(startFailure(other, 8787)).toBe(other);
    expect(startFailure('no object', 8787)).toBe('no object');
  });

  it.each([
    ['no --forward', ['--secret', RELAY_SECRET], '--forward is required'],
    ['no secret', ['--forward', 'http://127.0.0.1:9/'], '--secret is required'],
    ['a port past 65535', ['--forward', 'http://127.0.0.1:9/', '--secret', RELAY_SECRET, '--port', '70000'], '--port must be at most 65535'],
    ['a port that is no number', ['--forward', 'http://127.0.0.1:9/', '--secret', RELAY_SECRET, '--port', 'http'], '--port must be a whole number of at least 0'],
  ])('refuses %s as a usage error', async (_name, args, message) => {
    const run = await inProcessCli()(['dev', ...args]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
  });

  it('asks for 8787 without --port, and takes 65535, the last port', async () => {
    askedPorts.length = 0;
    expect((await runDev([])).code).toBe(0);
    expect((await runDev(['--port', '65535'])).lines[1]).toMatch(/^Webhooks: http:\/\/127\.0\.0\.1:65535\/webhooks /);
    expect(askedPorts).toEqual([8787, 65535]);
  });

  it('saves to the file of --save, and says on standard error, prefixed, when it cannot', async () => {
    const save = '/nonexistent/deliveries.jsonl';
    const run = await runDev(['--port', '0', '--save', save], async (webhookUrl) => {
      // The receiver is down: the delivery is recorded all the same, and saved.
      expect((await fetch(webhookUrl, { method: 'POST', body: '{}' })).status).toBe(502);
    });
    expect(run.code).toBe(0);
    expect(run.lines.slice(2)).toEqual([
      expect.stringMatching(/ {2}#1 {2}\(no envelope\) {5}- {2}relay: missing_header {2}receiver: connection failed \(ECONNREFUSED\) {2}\d+ ms$/),
      `err: svc-webhooks dev: could not append to ${save}: ENOENT: no such file or directory, open '${save}'`,
    ]);
  });
});

/** `svc-webhooks send --contract`: the event checked against the service's contract, warned about, and sent all the same. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SECRET, withRecordingReceiver } from '../delivery-scenarios.js';
import { inProcessCli, recordedTiming } from '../in-process-cli.js';
import { CONTRACTS } from '../../helpers/contract-types.js';

const RICH = join(CONTRACTS, 'rich.yaml');
const send = (url: string, ...args: string[]) => inProcessCli(recordedTiming())(['send', url, '--secret', SECRET, '--contract', RICH, ...args]);
const voicemail = { object: { id: 'vm_1', durationMs: 1200, call: { id: 'call_1', from: { number: '+15550100' }, to: { number: '+15550199' }, direction: 'inbound' } } };

describe('svc-webhooks send --contract', () => {
  it('says nothing more for an event of a type the contract adds that fits its schema', async () => {
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      const run = await send(url, '--type', 'voicemail.received', '--data', JSON.stringify(voicemail));
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(received).toHaveLength(1);
    });
  });

  it("warns with the failing paths, never the values, and still sends an event that does not fit", async () => {
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      const data = { object: { ...voicemail.object, durationMs: 'secret-looking value', call: undefined } };
      const run = await send(url, '--type', 'voicemail.received', '--data', JSON.stringify(data));
      expect(run.code).toBe(0);
      expect(run.stderr).toBe(
        "svc-webhooks send: warning: the event does not fit the contract's voicemail.received at data.object.call, data.object.durationMs: a receiver with its schemas answers 422\n",
      );
      expect(received).toHaveLength(1);
    });
  });

  it('names a path once when the value there fails several of its keywords', async () => {
    await withRecordingReceiver([{ status: 204 }], async ({ url }) => {
      // -1.5 is neither an integer nor at least 0.
      const data = { object: { ...voicemail.object, call: { ...voicemail.object.call, ringMs: -1.5 } } };
      const run = await send(url, '--type', 'voicemail.received', '--data', JSON.stringify(data));
      expect(run.stderr).toBe(
        "svc-webhooks send: warning: the event does not fit the contract's voicemail.received at data.object.call.ringMs: a receiver with its schemas answers 422\n",
      );
    });
  });

  it.each([
    ['a type the spec names that the contract leaves out', 'transcript.ready', 'the spec names it, but the contract does not describe it'],
    ['a type neither names', 'voicemail.recieved', 'neither the spec nor the contract names it'],
  ])('warns about %s, and still sends it', async (_name, type, why) => {
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      const run = await send(url, '--type', type);
      expect(run).toMatchObject({ code: 0, stderr: `svc-webhooks send: warning: --type ${type}: ${why}\n` });
      expect(received).toHaveLength(1);
    });
  });

  it('refuses a contract it cannot use as a usage error, before sending anything', async () => {
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      const run = await inProcessCli()(['send', url, '--secret', SECRET, '--contract', join(CONTRACTS, 'broken-ref.yaml')]);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/^svc-webhooks send: --contract: broken-ref\.yaml: Can't resolve \$ref at #\/webhooks\/call\.missed\//);
      expect(received).toHaveLength(0);
    });
  });
});

describe('svc-webhooks send --contract, on what the contract reader guards', () => {
  const message = (object: object) => JSON.stringify({ object: { id: 'msg_1', from: '+15550100', ...object } });
  const sendWith = (url: string, contract: string, ...args: string[]) => inProcessCli(recordedTiming())(['send', url, '--secret', SECRET, '--contract', contract, ...args]);

  it('checks an event against a contract that names formats, leaving format unchecked, and names a key holding "%" or "/" as written', async () => {
    await withRecordingReceiver([{ status: 204 }, { status: 204 }], async ({ url, received }) => {
      const formats = join(CONTRACTS, 'formats.yaml');
      const fits = await sendWith(url, formats, '--type', 'message.received', '--data', message({ replyTo: 'nobody', segments: 2 ** 40 }));
      expect(fits).toMatchObject({ code: 0, stderr: '' });
      const run = await sendWith(url, formats, '--type', 'message.received', '--data', message({ labels: { '50%': 1, 'a/b': 2 } }));
      expect(run.code).toBe(0);
      expect(run.stderr).toBe(
        "svc-webhooks send: warning: the event does not fit the contract's message.received at data.object.labels.50%, data.object.labels.a/b: a receiver with its schemas answers 422\n",
      );
      expect(received).toHaveLength(2);
    });
  });

  it('refuses a contract at a URL as a usage error, downloading nothing and sending nothing', async () => {
    let requests = 0;
    const server = createServer((_request, response) => {
      requests += 1;
      response.end();
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    try {
      await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
        const contract = `http://127.0.0.1:${(server.address() as AddressInfo).port}/openapi.yaml`;
        const run = await inProcessCli()(['send', url, '--secret', SECRET, '--contract', contract]);
        expect(run.code).toBe(2);
        expect(run.stderr.split('\n')[0]).toBe('svc-webhooks send: --contract must be a local file or a file: URL; download the contract first');
        expect(received).toHaveLength(0);
      });
      expect(requests).toBe(0);
    } finally {
      server.close();
    }
  });
});

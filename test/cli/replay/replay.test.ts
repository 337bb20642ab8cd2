/** `svc-webhooks replay` on a file `svc-webhooks dev --save` wrote, against a receiver built with svc-webhooks. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { testEvent } from '../../../src/testing/index.js';
import { typesFolder } from '../../helpers/contract-types.js';
import { RELAY_SECRET, startRelayRig, type RelayRig } from '../../helpers/dev-relay.js';
import { inProcessCli } from '../in-process-cli.js';

let rig: RelayRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** A saved file of two deliveries through a relay, the first signed `firstAgeMs` ago. */
async function savedFile(firstAgeMs = 0): Promise<string> {
  const save = join(await typesFolder(), 'deliveries.jsonl');
  rig = await startRelayRig({ save });
  await rig.deliver(testEvent('call.missed'), new Date(Date.now() - firstAgeMs));
  await rig.deliver(testEvent('message.received'));
  return save;
}

const replay = (...args: string[]) => inProcessCli()(['replay', ...args]);

describe('svc-webhooks replay', () => {
  it('sends the exact bytes again: a receiver that deduplicates answers each as a duplicate', async () => {
    const file = await savedFile();
    const run = await replay(file, '--to', `${rig!.receiver.url}/webhooks`);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^#1 evt_\w+ -> 200 \(\d+ ms\), receiver: duplicate; key-id=0\n#2 evt_\w+ -> 200 .*duplicate/);
    expect(rig!.handled).toHaveLength(2);
  });

  it('re-signs, or gives each a new id so that the handlers run again', async () => {
    const file = await savedFile();
    const to = `${rig!.receiver.url}/webhooks`;
    expect((await replay(file, '--to', to, '--mode', 'resign', '--secret', RELAY_SECRET)).stdout).toMatch(/receiver: duplicate.*\n.*receiver: duplicate/);
    const renamed = await replay(file, '--to', to, '--mode', 'new-id', '--secret', RELAY_SECRET);
    expect(renamed.code).toBe(0);
    expect(renamed.stdout).toMatch(/^#1 msg_\w+ -> 204 .*processed.*\n#2 msg_\w+ -> 204 .*processed/);
    expect(rig!.handled).toHaveLength(4);
  });

  it('does not send exact bytes past the 5 minutes a receiver allows, and says to re-sign them, exit 1', async () => {
    const file = await savedFile(6 * 60_000);
    const run = await replay(file, '--to', `${rig!.receiver.url}/webhooks`);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^#1: signed 3\d\d s ago, past the 300 s a receiver allows: replay it with --mode resign or --mode new-id\n$/);
    expect(run.stdout).toMatch(/^#2 /);
  });

  it.each([
    ['a line that is not JSON', 'not json\n', 'line 1 is not JSON'],
    ['a line without a request', '{"n":1}\n', 'line 1 holds no recorded request'],
  ])('refuses a file with %s, exit 2', async (_name, text, message) => {
    const file = join(await typesFolder(), 'bad.jsonl');
    await writeFile(file, text);
    const run = await replay(file, '--to', 'http://127.0.0.1:9/webhooks');
    expect(run).toMatchObject({ code: 2, stderr: expect.stringContaining(message) });
  });

  it('refuses a file it cannot read, and a mode it does not know', async () => {
    expect((await replay('/nonexistent/deliveries.jsonl', '--to', 'http://127.0.0.1:9/')).stderr).toContain('cannot read /nonexistent/deliveries.jsonl (ENOENT)');
    expect((await replay('x.jsonl', '--to', 'http://127.0.0.1:9/', '--mode', 'fresh')).stderr).toContain('--mode must be one of exact, resign, new-id');
  });
});

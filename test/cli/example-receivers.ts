/** The receivers of examples/, each started as its README says, on a port it picks itself. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { PACKAGE_ROOT } from '../package/pack.js';

export const EXAMPLES = ['express', 'hono', 'fastify'] as const;
const READY_WITHIN_MS = 30_000;

export interface RunningExample {
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * Starts `node --import tsx examples/<name>.ts` with PORT=0 and WEBHOOK_SECRET, and resolves with the address it
 * says it listens on. The example picks its own port: a port found free beforehand could be taken by another
 * suite's server before the example binds it, and a check would then grade that server instead.
 */
export async function startExample(name: (typeof EXAMPLES)[number], secret: string): Promise<RunningExample> {
  const child = spawn(process.execPath, ['--import', 'tsx', `examples/${name}.ts`], {
    cwd: PACKAGE_ROOT,
    env: { ...process.env, PORT: '0', WEBHOOK_SECRET: secret },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let listening: ((url: string) => void) | undefined;
  const url = new Promise<string>((resolve) => (listening = resolve));
  const read = (chunk: Buffer): void => {
    output += chunk.toString();
    const said = /listening on (http:\/\/127\.0\.0\.1:\d+\/webhooks)/.exec(output);
    if (said) listening?.(said[1]!);
  };
  child.stdout.on('data', read);
  child.stderr.on('data', read);
  const exited = once(child, 'exit');
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill();
    await exited;
  };

  const waiting = new AbortController();
  const timedOut = sleep(READY_WITHIN_MS, undefined, { signal: waiting.signal }).then(
    () => undefined,
    () => undefined,
  );
  const ready = await Promise.race([url, exited.then(() => undefined), timedOut]);
  waiting.abort();
  if (ready === undefined) {
    await stop();
    throw new Error(`examples/${name}.ts did not say where it listens:\n${output}`);
  }
  return { url: ready, stop };
}

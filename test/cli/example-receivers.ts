/** The receivers of examples/, each started as its README says, on a free port. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { PACKAGE_ROOT } from '../package/pack.js';

export const EXAMPLES = ['express', 'hono', 'fastify'] as const;
const READY_WITHIN_MS = 30_000;

export interface RunningExample {
  readonly url: string;
  stop(): Promise<void>;
}

/** Starts `npx tsx examples/<name>.ts` with PORT and WEBHOOK_SECRET; resolves once it accepts connections. */
export async function startExample(name: (typeof EXAMPLES)[number], secret: string): Promise<RunningExample> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', `examples/${name}.ts`], {
    cwd: PACKAGE_ROOT,
    env: { ...process.env, PORT: String(port), WEBHOOK_SECRET: secret },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit');
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill();
    await exited;
  };

  const deadline = Date.now() + READY_WITHIN_MS;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`examples/${name}.ts did not start listening on ${port}:\n${output}`);
    }
    await sleep(100);
  }
  return { url: `http://127.0.0.1:${port}/webhooks`, stop };
}

async function freePort(): Promise<number> {
  const server: Server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * The servers of the command-line runtimes, each listening on 127.0.0.1:
 * Node's HTTP server (through @hono/node-server's Fetch bridge), Bun.serve
 * and Deno.serve.
 */
import type { FetchHandler, ServeFetch } from '../serve.js';

interface Listening {
  readonly port: number;
  close(): Promise<void>;
}

type Listen = (handler: FetchHandler) => Listening | Promise<Listening>;

function listenOnBun(handler: FetchHandler): Listening {
  const { Bun } = globalThis as unknown as {
    Bun: { serve(options: { port: number; hostname: string; fetch: FetchHandler }): { port: number; stop(force: boolean): Promise<void> } };
  };
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: handler });
  return { port: server.port, close: () => server.stop(true) };
}

function listenOnDeno(handler: FetchHandler): Listening {
  const { Deno } = globalThis as unknown as {
    Deno: {
      serve(
        options: { port: number; hostname: string; onListen(): void },
        handler: FetchHandler,
      ): { addr: { port: number }; shutdown(): Promise<void> };
    };
  };
  const server = Deno.serve({ port: 0, hostname: '127.0.0.1', onListen: () => undefined }, handler);
  return { port: server.addr.port, close: () => server.shutdown() };
}

async function listenOnNode(handler: FetchHandler): Promise<Listening> {
  // Loaded only on Node: the other runtimes serve without it.
  const { createAdaptorServer } = await import('@hono/node-server');
  const server = createAdaptorServer({ fetch: handler });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        (server as unknown as { closeAllConnections(): void }).closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const listeners: Record<string, Listen> = { bun: listenOnBun, deno: listenOnDeno, node: listenOnNode };

/** The server of `runtime`, reached with the runtime's own fetch. */
export function cliServer(runtime: string): ServeFetch {
  const listen = listeners[runtime];
  if (listen === undefined) throw new Error(`no server for ${runtime}`);
  return async (handler) => {
    const { port, close } = await listen(handler);
    return { fetch: (path, init) => fetch(`http://127.0.0.1:${port}${path}`, init), close };
  };
}

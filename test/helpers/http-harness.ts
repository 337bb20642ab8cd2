/** A real listening server on 127.0.0.1, driven with fetch. */
import { once } from 'node:events';
import type { Server } from 'node:http';
import { expect } from 'vitest';
import type { AddressInfo } from 'node:net';
import type { AdapterHarness } from './adapter-contract.js';

/** Starts `server` on a free port; answers its base URL. */
export async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A harness POSTing to `${baseUrl}/webhooks`, closed by `close`. */
export function fetchHarness(baseUrl: string, close: () => Promise<unknown>): AdapterHarness {
  return {
    post: ({ body, headers }, signal) => fetch(`${baseUrl}/webhooks`, { method: 'POST', body, headers, signal }),
    close: async () => {
      await close();
    },
  };
}

/** Closes a Node server, ending idle keep-alive connections. */
export async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  server.close();
  await once(server, 'close');
}

/** A server the tests send to. */
export interface ServedApp {
  /** The server's base URL; the webhook route is `${url}/webhooks`. */
  readonly url: string;
  close(): Promise<void>;
}

/** Serves `server` on 127.0.0.1, on a port of its own. */
export async function serveNode(server: Server): Promise<ServedApp> {
  return { url: await listen(server), close: () => closeServer(server) };
}

/**
 * POSTs a signed, chunked 256 MiB body without Content-Length to a route
 * limited to far less, and checks the server answered 413 before the client
 * had sent a quarter of it: it stopped reading at its limit.
 */
export async function expect413WhileSending(url: string, headers: Record<string, string>): Promise<void> {
  const totalBytes = 256 * 1024 * 1024;
  const chunk = new Uint8Array(16 * 1024).fill(0x20);
  let bytesSent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (bytesSent >= totalBytes) return controller.close();
      bytesSent += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  const response = await fetch(url, { method: 'POST', body, headers, duplex: 'half' } as RequestInit);
  await response.arrayBuffer();
  expect(response.status).toBe(413);
  expect(bytesSent).toBeLessThan(totalBytes / 4);
}

/** A real listening server on 127.0.0.1, driven with fetch. */
import { once } from 'node:events';
import type { Server } from 'node:http';
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
    post: ({ body, headers }) => fetch(`${baseUrl}/webhooks`, { method: 'POST', body, headers }),
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

/**
 * POSTs a chunked body of `totalBytes` without Content-Length, counting what
 * the server pulled before it answered: a server that stops reading at its
 * limit answers long before the body is all sent.
 */
export async function postStreamed(
  url: string,
  headers: Record<string, string>,
  totalBytes: number,
): Promise<{ status: number; bytesSent: number }> {
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
  return { status: response.status, bytesSent };
}

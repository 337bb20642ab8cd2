/** A TCP server that accepts every connection and never says a word: a database that hangs after the handshake of TCP. */
import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';

export interface SilentServer {
  readonly port: number;
  /** How many connections it accepted. */
  accepted(): number;
  /** Ends every connection it holds, so that the clients waiting on them fail, then stops listening. */
  close(): Promise<void>;
}

export async function silentServer(): Promise<SilentServer> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    accepted: () => accepted,
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

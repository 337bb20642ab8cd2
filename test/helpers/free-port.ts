import { createServer } from 'node:net';

/** A port nothing listens on at the moment. */
export async function freePort(): Promise<number> {
  const port = await tryListening(0);
  if (port === undefined) throw new Error('no free port');
  return port;
}

/** Whether nothing listens on 127.0.0.1:`port` at the moment. */
export async function isFree(port: number): Promise<boolean> {
  return (await tryListening(port)) !== undefined;
}

/** Listens on 127.0.0.1:`port` (0: any) and closes again; answers the port, or undefined if it was taken. */
function tryListening(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : undefined));
    });
  });
}

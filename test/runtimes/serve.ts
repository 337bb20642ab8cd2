/**
 * Serving a Fetch handler the way the runtime does, for cases that reach an
 * adapter over the runtime's own transport. Each shell installs its runtime's
 * server before the cases run: shells/cli-servers.ts for Node, Bun and Deno,
 * shells/worker.ts for workerd.
 */

export type FetchHandler = (request: Request, ...platform: unknown[]) => Promise<Response>;

export interface Served {
  /** Sends a request to `path` on the served handler. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export type ServeFetch = (handler: FetchHandler) => Promise<Served>;

let installed: ServeFetch | undefined;

/** Called by a shell with its runtime's server. */
export function installServer(serve: ServeFetch): void {
  installed = serve;
}

export function serveFetch(handler: FetchHandler): Promise<Served> {
  if (installed === undefined) throw new Error('the shell installed no server for this runtime');
  return installed(handler);
}

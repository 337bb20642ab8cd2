/**
 * The conformance entry for the Vercel Edge runtime (the edge-runtime
 * package): a script, as Edge functions are, that answers its `fetch` events
 * for the handlers the cases serve, and sets `runConformance(base)`, which
 * the runner calls with the address its edge-runtime server listens on, so
 * the cases reach those handlers over the runtime's own transport.
 */
import { runCases, type CaseFile } from '../harness.js';
import { runtimeName } from '../runtime-name.js';
import { installServer, type FetchHandler } from '../serve.js';

interface FetchEvent {
  readonly request: Request;
  respondWith(response: Response | Promise<Response>): void;
}

declare function addEventListener(type: 'fetch', listener: (event: FetchEvent) => void): void;

const SERVED = /^\/served\/(\d+)(\/.*)?$/;

export function edgeConformance(files: readonly CaseFile[]): void {
  const handlers = new Map<string, FetchHandler>();
  let served = 0;
  addEventListener('fetch', (event) => {
    const match = SERVED.exec(new URL(event.request.url).pathname);
    const handler = match === null ? undefined : handlers.get(match[1]!);
    event.respondWith(handler ? handler(event.request) : new Response('no such handler', { status: 404 }));
  });
  (globalThis as { runConformance?: (base: string) => Promise<string> }).runConformance = async (base) => {
    installServer(async (handler) => {
      const id = String(++served);
      handlers.set(id, handler);
      return {
        fetch: (path, init) => fetch(`${base}/served/${id}${path}`, init),
        close: async () => void handlers.delete(id),
      };
    });
    const lines = await runCases(runtimeName().name, files);
    return `${lines.join('\n')}\n`;
  };
}

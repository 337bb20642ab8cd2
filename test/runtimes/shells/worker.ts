/**
 * The conformance entry for workerd: a Worker that answers any request with
 * the report, except the requests its cases send to the handlers they serve.
 * Those go through the SELF binding, so workerd itself dispatches them and
 * passes (request, env, ctx) as it does for any request.
 */
import { runCases, type CaseFile } from '../harness.js';
import { runtimeName } from '../runtime-name.js';
import { installServer, type FetchHandler } from '../serve.js';

interface Env {
  readonly SELF: { fetch(request: Request): Promise<Response> };
}

const SERVED = /^\/served\/(\d+)(\/.*)?$/;
const handlers = new Map<string, FetchHandler>();
let served = 0;

function installWorkerServer(self: Env['SELF']): void {
  installServer(async (handler) => {
    const id = String(++served);
    handlers.set(id, handler);
    return {
      fetch: (path, init) => self.fetch(new Request(`http://conformance.test/served/${id}${path}`, init)),
      close: async () => void handlers.delete(id),
    };
  });
}

export function conformanceWorker(files: readonly CaseFile[]): { fetch(request: Request, env: Env, ctx: unknown): Promise<Response> } {
  return {
    async fetch(request, env, ctx) {
      const match = SERVED.exec(new URL(request.url).pathname);
      if (match !== null) {
        const handler = handlers.get(match[1]!);
        return handler ? handler(request, env, ctx) : new Response('no such handler', { status: 404 });
      }
      installWorkerServer(env.SELF);
      const lines = await runCases(runtimeName().name, files);
      return new Response(`${lines.join('\n')}\n`);
    },
  };
}

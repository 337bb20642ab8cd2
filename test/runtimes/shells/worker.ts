/** The conformance entry for workerd: a Worker that answers any request with the report. */
import { runCases, type CaseFile } from '../harness.js';
import { runtimeName } from '../runtime-name.js';

export function conformanceWorker(files: readonly CaseFile[]): { fetch(): Promise<Response> } {
  return {
    async fetch() {
      const lines = await runCases(runtimeName().name, files);
      return new Response(`${lines.join('\n')}\n`);
    },
  };
}

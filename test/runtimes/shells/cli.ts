/** The conformance entry for runtimes with a command line: Node, Bun and Deno. */
import { runCases, type CaseFile } from '../harness.js';
import { runtimeName } from '../runtime-name.js';
import { installServer } from '../serve.js';
import { cliServer } from './cli-servers.js';

export async function main(files: readonly CaseFile[]): Promise<void> {
  const { name, version } = runtimeName();
  // Node by major version: the matrix runs several.
  const label = name === 'node' ? `node${version.split('.')[0]}` : name;
  console.log(`${label} ${version}`);
  installServer(cliServer(name));
  const lines = await runCases(label, files);
  for (const line of lines) console.log(line);
}

/**
 * `svc-webhooks types` run in this process on a fixture contract, into a
 * folder of its own under .cache/contract-types (git-ignored), and the
 * TypeScript compiler run over what it wrote beside a consumer module, as
 * a user's project compiles them.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { inProcessCli } from '../cli/in-process-cli.js';

const ROOT = resolve(import.meta.dirname, '../..');
export const CONTRACTS = join(ROOT, 'fixtures/contracts');

/** What a run of the command printed and wrote. */
export interface TypesRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The folder it wrote into. */
  readonly dir: string;
}

/** A new empty folder for one run. */
export async function typesFolder(): Promise<string> {
  const parent = join(ROOT, '.cache/contract-types');
  await mkdir(parent, { recursive: true });
  return mkdtemp(join(parent, 'run-'));
}

/** `svc-webhooks types <fixture> -o <dir>/webhook-types.ts …extra` in this process. */
export async function runTypes(fixture: string, extra: readonly string[] = [], dir?: string): Promise<TypesRun> {
  const into = dir ?? (await typesFolder());
  const run = await inProcessCli()(['types', join(CONTRACTS, fixture), '-o', join(into, 'webhook-types.ts'), ...extra]);
  return { ...run, dir: into };
}

/**
 * Compiles `consumer` (a module beside the generated files) under strict
 * options, svc-webhooks typed from source; answers each error in `dir` as
 * `file:line: message`. Errors in svc-webhooks' own source are not a
 * user's: a project reads its declarations, which hold no code to check.
 */
export async function compileConsumer(dir: string, consumer: string, options: ts.CompilerOptions = {}): Promise<string[]> {
  const file = join(dir, 'consumer.ts');
  await writeFile(file, consumer);
  const program = ts.createProgram([file], {
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules/@types')],
    baseUrl: ROOT,
    paths: {
      'svc-webhooks': ['./src/index.ts'],
      'svc-webhooks/testing': ['./src/testing/index.ts'],
      'svc-webhooks/*': ['./adapters/*.ts'],
    },
    ...options,
  });
  return ts.getPreEmitDiagnostics(program).flatMap((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (diagnostic.file === undefined || diagnostic.start === undefined) return [message];
    if (!diagnostic.file.fileName.startsWith(`${dir}/`)) return [];
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return [`${diagnostic.file.fileName.slice(dir.length + 1)}:${line + 1}: ${message}`];
  });
}

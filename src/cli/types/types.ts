/** `svc-webhooks types`: TypeScript types, and optionally validators, from the service's OpenAPI contract. */
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { onePositional, parseCommandArgs, UsageError } from '../shared/args.js';
import { EXIT, type Command } from '../shared/command.js';
import type { CliIO } from '../shared/io.js';
import { printable } from '../../base/printable.js';
import { contractPath, nameOf, readContract } from '../shared/contract.js';
import { ContractError } from '../shared/contract-error.js';
import { GENERATOR_INSTALL, SCHEMA_INSTALL } from '../shared/peers.js';
import { checkGeneratorVersions } from './generator-versions.js';
import { schemaModule } from './schema-module.js';
import { typeModule } from './type-module.js';

const options = {
  out: { type: 'string', short: 'o' },
  schemas: { type: 'boolean' },
  check: { type: 'boolean' },
} as const;

const DEFAULT_OUT = 'webhook-types.ts';
// Lines of each side a --check diff shows at most.
const DIFF_LINES = 6;
// The most characters of one printed line that comes from the contract or a file.
const LINE_CHARS = 400;

export const typesCommand = {
  name: 'types',
  summary: 'write the types of every event from the OpenAPI contract',
  help: `Usage: svc-webhooks types <contract.yaml|contract.json|file: URL> [-o ${DEFAULT_OUT}] [--schemas] [--check]

Reads the webhooks section of the service's OpenAPI 3.1 contract and writes a
TypeScript module that gives svc-webhooks the full payload of each event type
it describes: on handlers, dispatch, testEvent, the queue workers and
WebhookEvent narrow to it, and the types it adds become known types. Import it
once (import './${DEFAULT_OUT.replace(/\.ts$/, '.js')}') or include it in your tsconfig; it is types only.

Options:
  -o, --out FILE  the module to write (default: ${DEFAULT_OUT})
  --schemas       also write FILE's .schemas.ts beside it: a Standard Schema
                  validator per event type, to pass as schemas
  --check         write nothing; exit 1 with a short diff when the files
                  differ from what the contract gives (for CI)

Needs openapi-typescript 7 on TypeScript 5 and @redocly/openapi-core 1 (and
@exodus/schemasafe for --schemas) as development dependencies; another major
is named and refused before it runs:
  npm install --save-dev ${[...GENERATOR_INSTALL, ...SCHEMA_INSTALL].join(' ')}

Exit status: 0 written or current, 1 --check found a difference, 2 bad
arguments, a contract it cannot use or generators of another major.`,

  /** `generatorsFrom`: the folder the generators' versions are looked up from, svc-webhooks' own unless a test gives another. */
  async run(args: readonly string[], io: CliIO, generatorsFrom?: string): Promise<number> {
    const { values, positionals } = parseCommandArgs(args, options);
    const location = contractPath(onePositional(positionals, '<contract>'));
    const out = values.out ?? DEFAULT_OUT;
    if (!out.endsWith('.ts') || out.endsWith('.d.ts')) throw new UsageError('--out must name a .ts module (not .d.ts): it augments svc-webhooks');
    try {
      // Before anything of them runs: the wrong major fails deep inside, as a TypeError.
      await checkGeneratorVersions(generatorsFrom);
      const contract = await readContract(location);
      // What comes from the contract is printed escaped: it is text from outside.
      for (const warning of contract.warnings) io.err(`svc-webhooks types: warning: ${printable(warning, LINE_CHARS)}`);
      const source = nameOf(location);
      const files: Array<[string, string]> = [[out, await typeModule(contract, source)]];
      if (values.schemas === true) {
        const schemasOut = out.replace(/\.ts$/, '.schemas.ts');
        files.push([schemasOut, await schemaModule(contract, source, `./${basename(out).replace(/\.ts$/, '.js')}`)]);
      }
      const types = printable(contract.events.map((event) => event.type).join(', '), LINE_CHARS);
      if (values.check === true) return await check(files, io, types);
      await writeAll(files);
      for (const [path] of files) io.out(`wrote ${path}`);
      io.out(`${contract.events.length} event type(s): ${types}`);
      return EXIT.ok;
    } catch (error) {
      if (!(error instanceof ContractError)) throw error;
      io.err(`svc-webhooks types: ${printable(error.message, LINE_CHARS)}`);
      return EXIT.usage;
    }
  },
} satisfies Command;

/**
 * Writes each file to a temporary name beside it, then renames them all: a
 * file that cannot be written leaves the others as they were. Throws
 * `ContractError` naming the file and the system's reason.
 */
async function writeAll(files: ReadonlyArray<[string, string]>): Promise<void> {
  const temporary = files.map(([path]) => `${path}.${process.pid}.tmp`);
  // The file in hand: set before anything can fail.
  let path: string | undefined;
  const written: string[] = [];
  try {
    for (const [n, [target, text]] of files.entries()) {
      path = target;
      await makeFolder(dirname(target));
      // A folder in the way would fail only the rename, after another file was replaced.
      if ((await stat(target).catch(() => undefined))?.isDirectory() === true) throw new Error('it is a folder');
      await writeFile(temporary[n]!, text);
    }
    for (const [n, [target]] of files.entries()) {
      path = target;
      await rename(temporary[n]!, target);
      written.push(target);
    }
  } catch (error) {
    // A temporary file that was never made, or under no folder, is no failure of its own.
    await Promise.all(temporary.map((temp) => rm(temp).catch(() => undefined)));
    const stale = written.length === 0 ? '' : ` (${written.join(', ')} written; the rest is stale)`;
    // "EISDIR: illegal operation on a directory": the system's reason, without the path it repeats.
    throw new ContractError(`cannot write ${path}: ${String((error as Error).message).split(', ')[0]}${stale}`);
  }
}

/** Makes `folder` and those above it, one level at a time: Node 20's recursive mkdir never returns for a folder under /proc. */
async function makeFolder(folder: string): Promise<void> {
  try {
    await mkdir(folder);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // One that is there, or a file in its place: writing the module says which.
    if (code === 'EEXIST') return;
    // Equivalent on Linux: mkdir of a root ("/", or "." in a removed folder) answers EEXIST, never ENOENT (a missing Windows drive does), and another code met again one level up is the same failure.
    // Stryker disable next-line ConditionalExpression,LogicalOperator
    if (code !== 'ENOENT' || dirname(folder) === folder) throw error;
    await makeFolder(dirname(folder));
    await mkdir(folder);
  }
}

/** Compares each file with what it should hold; a difference is printed as a short diff, exit 1. */
async function check(files: ReadonlyArray<[string, string]>, io: CliIO, types: string): Promise<number> {
  let stale = false;
  for (const [path, wanted] of files) {
    const present = await readFile(path, 'utf8').catch(() => undefined);
    if (present === wanted) continue;
    stale = true;
    if (present === undefined) io.err(`svc-webhooks types: ${path} is missing`);
    else io.err(`svc-webhooks types: ${path} differs from the contract:\n${shortDiff(present, wanted)}`);
  }
  if (stale) {
    io.err('svc-webhooks types: run the command without --check to write what the contract gives');
    return EXIT.failed;
  }
  io.out(`up to date: ${files.map(([path]) => path).join(', ')} (${types})`);
  return EXIT.ok;
}

/** The first changed stretch of `before` against `after`, as `-`/`+` lines under its line number. */
export function shortDiff(before: string, after: string): string {
  const old = before.split('\n');
  const now = after.split('\n');
  let start = 0;
  // No bound on `now`: a line past its end is undefined, which no line of `old` equals.
  while (start < old.length && old[start] === now[start]) start += 1;
  let oldEnd = old.length;
  let nowEnd = now.length;
  while (oldEnd > start && nowEnd > start && old[oldEnd - 1] === now[nowEnd - 1]) {
    oldEnd -= 1;
    nowEnd -= 1;
  }
  const side = (lines: string[], sign: string): string[] => {
    const shown = lines.slice(0, DIFF_LINES).map((line) => `${sign} ${printable(line, LINE_CHARS)}`);
    return lines.length > DIFF_LINES ? [...shown, `${sign} … ${lines.length - DIFF_LINES} more line(s)`] : shown;
  };
  return [`@@ line ${start + 1} @@`, ...side(old.slice(start, oldEnd), '-'), ...side(now.slice(start, nowEnd), '+')].join('\n');
}

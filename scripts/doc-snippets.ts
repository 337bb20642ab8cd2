/**
 * The TypeScript snippets of the Markdown docs, and their type check: each
 * ```ts or ```typescript block is compiled as a module of its own against the
 * package's sources (tsconfig.json's paths map `svc-webhooks` and its
 * subpaths), with the placeholders of docs/snippets.d.ts (`app`, `queue`,
 * `db`, …) in scope. A diagnostic is reported at its line in the Markdown file.
 * A block whose info string says more than the language (```ts after
 * generating webhook-types.ts) is left alone: it needs a file the reader
 * generates; the specs of that command compile what it writes instead.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

export interface Snippet {
  /** The Markdown file, relative to the root. */
  readonly file: string;
  /** The 1-based line in `file` of the snippet's first line of code. */
  readonly line: number;
  readonly code: string;
}

export interface SnippetError {
  /** `README.md:42:7`: where in the Markdown the error is. */
  readonly at: string;
  readonly message: string;
}

const OPENING = /^(\s*)(`{3,}|~{3,})\s*(ts|typescript)\s*$/;

/** The ```ts and ```typescript blocks of one Markdown text; other languages and indented code are left alone. */
export function extractSnippets(file: string, markdown: string): Snippet[] {
  const lines = markdown.split(/\r?\n/);
  const snippets: Snippet[] = [];
  let open: { fence: string; indent: number; start: number; body: string[] } | undefined;
  let otherFence: string | undefined;
  lines.forEach((text, index) => {
    if (open !== undefined) {
      if (text.trim().startsWith(open.fence) && text.trim().replaceAll(open.fence[0]!, '') === '') {
        snippets.push({ file, line: open.start, code: open.body.join('\n') });
        open = undefined;
      } else open.body.push(text.slice(Math.min(open.indent, text.length - text.trimStart().length)));
      return;
    }
    if (otherFence !== undefined) {
      if (text.trim().startsWith(otherFence) && text.trim().replaceAll(otherFence[0]!, '') === '') otherFence = undefined;
      return;
    }
    const opening = OPENING.exec(text);
    if (opening !== null) open = { fence: opening[2]!, indent: opening[1]!.length, start: index + 2, body: [] };
    else otherFence = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
  });
  if (open !== undefined) throw new Error(`${file}:${open.start - 1}: a code block is never closed`);
  return snippets;
}

/** README.md and every .md under docs/, but the generated reference (docs/reference/, checked by docs:check). */
export function markdownFiles(root: string): string[] {
  const files = ['README.md'];
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(root, dir)).sort()) {
      const path = join(dir, name);
      if (path === join('docs', 'reference')) continue;
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else if (name.endsWith('.md')) files.push(path);
    }
  };
  if (statSync(join(root, 'docs'), { throwIfNoEntry: false })?.isDirectory()) walk('docs');
  return files;
}

/**
 * Type-checks `snippets` as modules under `root` (so that its tsconfig.json
 * and node_modules resolve their imports) with the `declarations` files in
 * the program. Deno's `npm:` specifiers resolve as the bare package names.
 */
export function checkSnippets(root: string, snippets: readonly Snippet[], declarations: readonly string[]): SnippetError[] {
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (diagnostic) => { throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')); } });
  if (config === undefined) throw new Error('tsconfig.json could not be read');
  const paths: ts.MapLike<string[]> = { ...config.options.paths };
  for (const [pattern, targets] of Object.entries(config.options.paths ?? {})) paths[`npm:${pattern}`] = targets;
  const options: ts.CompilerOptions = {
    ...config.options,
    paths,
    pathsBasePath: config.options.pathsBasePath ?? root,
    noEmit: true,
    // A snippet shows part of a program: a name it declares for the reader need not be used.
    noUnusedLocals: false,
    noUnusedParameters: false,
  };
  // Each snippet is a module (`export {}` appended), so their top-level names never collide.
  const virtual = new Map<string, Snippet>();
  snippets.forEach((snippet, index) => virtual.set(join(root, '.cache', 'doc-snippets', `${index}-${snippet.file.replaceAll('/', '-')}-${snippet.line}.ts`), snippet));
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (name) => virtual.has(name) || fileExists.call(host, name);
  host.readFile = (name) => (virtual.has(name) ? `${virtual.get(name)!.code}\nexport {};\n` : readFile.call(host, name));
  host.getSourceFile = (name, languageVersion, onError, shouldCreate) => {
    const snippet = virtual.get(name);
    if (snippet === undefined) return getSourceFile.call(host, name, languageVersion, onError, shouldCreate);
    return ts.createSourceFile(name, `${snippet.code}\nexport {};\n`, languageVersion, true);
  };
  const program = ts.createProgram({ rootNames: [...virtual.keys(), ...declarations], options, host });
  const diagnostics = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics(), ...program.getSyntacticDiagnostics(), ...program.getSemanticDiagnostics()];
  return diagnostics.map((diagnostic) => ({ at: where(root, diagnostic, virtual), message: ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n') })).sort((a, b) => a.at.localeCompare(b.at, 'en', { numeric: true }));
}

function where(root: string, diagnostic: ts.Diagnostic, virtual: ReadonlyMap<string, Snippet>): string {
  if (diagnostic.file === undefined || diagnostic.start === undefined) return 'tsconfig';
  const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
  const snippet = virtual.get(diagnostic.file.fileName);
  if (snippet === undefined) return `${relative(root, diagnostic.file.fileName)}:${line + 1}:${character + 1}`;
  return `${snippet.file}:${snippet.line + line}:${character + 1}`;
}

/**
 * The relative links of the Markdown docs, and their check: every link and
 * image that names no scheme must point at a file or folder of the
 * repository (tracked, or new and not ignored: a git-ignored build such as
 * docs/api/ does not count, since it is not there for a reader of the
 * repository), and a `#anchor` in a Markdown file at one of its headings, by
 * GitHub's rules for anchors (ATX headings, `# Title`, and `<a id>`; the
 * docs use no underlined headings). Links inside code are text, not links.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, posix } from 'node:path';

export interface Link {
  /** The Markdown file, relative to the root. */
  readonly file: string;
  /** The 1-based line where the link's target is written. */
  readonly line: number;
  /** The target as written, `docs/hosts.md#hono` or `#install`. */
  readonly target: string;
}

export interface LinkError {
  /** `README.md:42`: where in the Markdown the link is. */
  readonly at: string;
  readonly message: string;
}

/** `[text](target)`, `![alt](target "title")` and `[label]: target`; an inline target may be wrapped in `<>`. */
const INLINE_TARGET = /\]\(\s*(<[^>\n]*>|[^)\s]+)(?:\s+(?:"[^"\n]*"|'[^'\n]*'))?\s*\)/g;
const REFERENCE_TARGET = /^ {0,3}\[[^\]\n]+\]:\s*(<[^>\n]*>|\S+)/gm;
const HTML_TARGET = /<(?:a|img|source)\b[^>]*?\s(?:href|src|srcset)\s*=\s*"([^"]*)"/gi;
const HTML_ANCHOR = /<a\b[^>]*?\s(?:id|name)\s*=\s*"([^"]*)"/gi;
const SCHEME = /^[a-z][a-z0-9+.-]*:|^\/\//i;

/**
 * The text of `markdown` that is read as Markdown: fenced code blocks and
 * code spans replaced by spaces, every line kept where it was, so that an
 * offset in it is an offset in the file.
 */
export function prose(markdown: string): string {
  // A code span runs from a run of backticks to the next run of the same length.
  return outsideFences(markdown).replace(/(?<!`)(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, blank);
}

/** `markdown` with its fenced code blocks replaced by spaces. */
function outsideFences(markdown: string): string {
  let fence: { readonly char: string; readonly length: number } | undefined;
  const kept = markdown.split('\n').map((line) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined) {
      if (marker === undefined) return line;
      fence = { char: marker[0]!, length: marker.length };
      return blank(line);
    }
    const closing = marker !== undefined && marker[0] === fence.char && marker.length >= fence.length && line.trim() === marker;
    if (closing) fence = undefined;
    return blank(line);
  });
  return kept.join('\n');
}

function blank(text: string): string {
  return text.replace(/[^\n]/g, ' ');
}

/** Every link and image of one Markdown text, with the line its target is on. */
export function extractLinks(file: string, markdown: string): Link[] {
  const text = prose(markdown);
  const lineAt = (offset: number): number => text.slice(0, offset).split('\n').length;
  const links: Link[] = [];
  for (const pattern of [INLINE_TARGET, REFERENCE_TARGET, HTML_TARGET]) {
    for (const match of text.matchAll(pattern)) {
      const target = match[1]!.replace(/^<(.*)>$/, '$1');
      links.push({ file, line: lineAt(match.index + match[0].indexOf(match[1]!)), target });
    }
  }
  return links.sort((a, b) => a.line - b.line);
}

/**
 * The anchor GitHub gives a heading: its text as rendered (code, links and
 * emphasis markers gone) in lower case, without punctuation or symbols but
 * `-` and `_`, each space a `-`.
 */
export function githubSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`+/g, '');
  return rendered
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown text: each ATX heading's (`-1`, `-2` … after a repeat, as GitHub counts) and each `<a id>` or `<a name>`. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  // A heading's code spans are part of its text.
  for (const line of outsideFences(markdown).split('\n')) {
    const heading = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (heading === null) continue;
    const slug = githubSlug(heading[1] ?? '');
    let anchor = slug;
    for (let repeat = 1; anchors.has(anchor); repeat++) anchor = `${slug}-${repeat}`;
    anchors.add(anchor);
  }
  for (const match of prose(markdown).matchAll(HTML_ANCHOR)) anchors.add(match[1]!);
  return anchors;
}

/**
 * The files of the repository at `root`, relative to it: those git tracks
 * and still exist, and those it does not track and does not ignore.
 */
export function repositoryFiles(root: string): Set<string> {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' });
  return new Set(listed.split('\0').filter((file) => file !== '' && existsSync(join(root, file))));
}

/**
 * Checks every link of the Markdown `files` (paths relative to the root,
 * read with `read`) against `repository`, the root's files: a target that
 * names no scheme must be one of them, or a folder holding some, and its
 * `#anchor` an anchor of that file when it is Markdown.
 */
export function checkLinks(files: readonly string[], repository: ReadonlySet<string>, read: (file: string) => string): LinkError[] {
  const folders = new Set<string>();
  for (const file of repository) for (let dir = posix.dirname(file); dir !== '.'; dir = posix.dirname(dir)) folders.add(dir);
  const anchors = new Map<string, Set<string>>();
  const anchorsOfFile = (file: string): Set<string> => {
    if (!anchors.has(file)) anchors.set(file, anchorsOf(read(file)));
    return anchors.get(file)!;
  };
  const errors: LinkError[] = [];
  for (const file of files) {
    for (const { line, target } of extractLinks(file, read(file))) {
      const problem = problemOf(file, target, repository, folders, anchorsOfFile);
      if (problem !== undefined) errors.push({ at: `${file}:${line}`, message: `${target}: ${problem}` });
    }
  }
  return errors;
}

function problemOf(file: string, target: string, repository: ReadonlySet<string>, folders: ReadonlySet<string>, anchorsOfFile: (file: string) => Set<string>): string | undefined {
  if (SCHEME.test(target)) return undefined;
  const hash = target.indexOf('#');
  const pathPart = (hash === -1 ? target : target.slice(0, hash)).replace(/\?.*$/, '');
  const anchor = hash === -1 ? undefined : target.slice(hash + 1);
  const path = decoded(pathPart);
  if (path === undefined) return 'the path is not valid percent-encoding';
  const resolved = path === '' ? file : posix.normalize(path.startsWith('/') ? path.slice(1) : posix.join(posix.dirname(file), path)).replace(/\/$/, '');
  if (resolved === '..' || resolved.startsWith('../')) return 'points outside the repository';
  const isFile = repository.has(resolved);
  if (!isFile && !folders.has(resolved) && resolved !== '.') return 'no such file or folder in the repository';
  if (anchor === undefined || !isFile || !resolved.endsWith('.md')) return undefined;
  if (anchorsOfFile(resolved).has(decoded(anchor) ?? anchor)) return undefined;
  return `${resolved} has no heading with the anchor #${anchor}`;
}

function decoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/**
 * Where the README's links point: the package's own files as the registry's
 * CDN serves them, by major version. The npm page shows the README with no
 * repository to resolve a relative link against, so each link there is
 * absolute, and each file it names ships in the package (`check:package`).
 */
export const PACKAGE_FILES_URL = 'https://unpkg.com/svc-webhooks@1/';

/** The files of the package that `markdown` (the README) links to by `PACKAGE_FILES_URL`, each once, with any `#anchor`. */
export function packageLinks(markdown: string): Array<{ readonly path: string; readonly anchor?: string; readonly line: number }> {
  return extractLinks('README.md', markdown).flatMap(({ target, line }) => {
    const link = packageLink(target);
    return link === undefined ? [] : [{ ...link, line }];
  });
}

/** The package file and `#anchor` a target names by `PACKAGE_FILES_URL`, or `undefined` for any other target. */
function packageLink(target: string): { readonly path: string; readonly anchor?: string } | undefined {
  if (!target.startsWith(PACKAGE_FILES_URL)) return undefined;
  const rest = target.slice(PACKAGE_FILES_URL.length);
  const hash = rest.indexOf('#');
  return hash === -1 ? { path: rest } : { path: rest.slice(0, hash), anchor: rest.slice(hash + 1) };
}

/**
 * Checks the README as the npm page shows it: a link is an `#anchor` of one
 * of its headings, a URL of the package's files (a file of the repository,
 * its anchor a heading there), or another absolute URL; a relative link is
 * dead there.
 */
export function checkReadmeLinks(markdown: string, repository: ReadonlySet<string>, read: (file: string) => string): LinkError[] {
  // Each linked Markdown file's anchors, read once however many links name it.
  const anchors = new Map<string, Set<string>>([['README.md', anchorsOf(markdown)]]);
  const hasAnchor = (file: string, anchor: string): boolean => {
    if (!anchors.has(file)) anchors.set(file, anchorsOf(read(file)));
    return anchors.get(file)!.has(decoded(anchor) ?? anchor);
  };
  const errors: LinkError[] = [];
  for (const { line, target } of extractLinks('README.md', markdown)) {
    const at = `README.md:${line}`;
    const link = packageLink(target);
    if (target.startsWith('#')) {
      if (!hasAnchor('README.md', target.slice(1))) errors.push({ at, message: `${target}: README.md has no heading with this anchor` });
    } else if (link !== undefined) {
      const { path, anchor } = link;
      if (!repository.has(path)) errors.push({ at, message: `${PACKAGE_FILES_URL}${path}: no such file in the repository` });
      else if (anchor !== undefined && path.endsWith('.md') && !hasAnchor(path, anchor)) {
        errors.push({ at, message: `${PACKAGE_FILES_URL}${path}#${anchor}: ${path} has no heading with this anchor` });
      }
    } else if (!SCHEME.test(target)) {
      errors.push({ at, message: `${target}: dead on the npm page, which has no repository to resolve it against: link ${PACKAGE_FILES_URL}${target.replace(/^\.?\//, '')}` });
    }
  }
  return errors;
}

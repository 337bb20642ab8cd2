/**
 * `npm run check:docs`: type-checks every ```ts snippet of README.md and
 * docs/**\/*.md against the package's sources, and checks that every
 * relative link of the docs reaches a file of the repository and every
 * `#anchor` a heading in it, that every link of README.md works on the npm
 * page (absolute, to the package's files, or an anchor of its own), and
 * that README.md's table of error codes is the one `ERROR_CODES` gives, so
 * that the docs cannot rot. Names a snippet
 * uses but leaves to the reader (`app`, `queue`, `db`, …) are declared once
 * in docs/snippets.d.ts. The generated reference (docs/reference/) is
 * checked by `npm run docs:check` instead.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkLinks, checkReadmeLinks, repositoryFiles } from './doc-links.js';
import { checkSnippets, extractSnippets, markdownFiles } from './doc-snippets.js';
import { withErrorTable } from './error-table.js';
import { ROOT } from './public-entries.js';

const files = markdownFiles(ROOT);
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');
const snippets = files.flatMap((file) => extractSnippets(file, read(file)));
const errors = checkSnippets(ROOT, snippets, [join(ROOT, 'docs/snippets.d.ts')]);
for (const { at, message } of errors) console.error(`${at}: ${message}`);
const repository = repositoryFiles(ROOT);
const readme = read('README.md');
const brokenLinks = [...checkReadmeLinks(readme, repository, read), ...checkLinks(files.filter((file) => file !== 'README.md'), repository, read)];
for (const { at, message } of brokenLinks) console.error(`${at}: broken link ${message}`);
const staleTable = withErrorTable(readme) !== readme;
if (staleTable) console.error('README.md: the table of error codes differs from ERROR_CODES in src/core/errors.ts: run npm run docs');
console.log(
  `check:docs: ${snippets.length} snippets in ${files.length} files, ${errors.length} type errors, ${brokenLinks.length} broken links, ` +
    `the error table ${staleTable ? 'stale' : 'current'}`,
);
if (errors.length > 0 || brokenLinks.length > 0 || staleTable) process.exitCode = 1;

/**
 * `npm run check:docs`: type-checks every ```ts snippet of README.md and
 * docs/**\/*.md against the package's sources, and checks that every
 * relative link of those files reaches a file of the repository and every
 * `#anchor` a heading in it, so that the docs cannot rot. Names a snippet
 * uses but leaves to the reader (`app`, `queue`, `db`, …) are declared once
 * in docs/snippets.d.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkLinks, repositoryFiles } from './doc-links.js';
import { checkSnippets, extractSnippets, markdownFiles } from './doc-snippets.js';
import { ROOT } from './public-entries.js';

const files = markdownFiles(ROOT);
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');
const snippets = files.flatMap((file) => extractSnippets(file, read(file)));
const errors = checkSnippets(ROOT, snippets, [join(ROOT, 'docs/snippets.d.ts')]);
for (const { at, message } of errors) console.error(`${at}: ${message}`);
const brokenLinks = checkLinks(files, repositoryFiles(ROOT), read);
for (const { at, message } of brokenLinks) console.error(`${at}: broken link ${message}`);
console.log(`check:docs: ${snippets.length} snippets in ${files.length} files, ${errors.length} type errors, ${brokenLinks.length} broken links`);
if (errors.length > 0 || brokenLinks.length > 0) process.exitCode = 1;

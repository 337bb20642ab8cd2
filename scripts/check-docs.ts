/**
 * `npm run check:docs`: type-checks every ```ts snippet of README.md and
 * docs/**\/*.md against the package's sources, so that the docs cannot rot.
 * Names a snippet uses but leaves to the reader (`app`, `queue`, `db`, …) are
 * declared once in docs/snippets.d.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkSnippets, extractSnippets, markdownFiles } from './doc-snippets.js';
import { ROOT } from './public-entries.js';

const files = markdownFiles(ROOT);
const snippets = files.flatMap((file) => extractSnippets(file, readFileSync(join(ROOT, file), 'utf8')));
const errors = checkSnippets(ROOT, snippets, [join(ROOT, 'docs/snippets.d.ts')]);
for (const { at, message } of errors) console.error(`${at}: ${message}`);
console.log(`check:docs: ${snippets.length} snippets in ${files.length} files, ${errors.length} type errors`);
if (errors.length > 0) process.exitCode = 1;

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { checkSnippets, extractSnippets, markdownFiles } from '../../scripts/doc-snippets.js';
import { ROOT } from '../../scripts/public-entries.js';

const FENCE = '```';

describe('extractSnippets', () => {
  test('takes ts and typescript blocks with the line of their first line of code, and nothing else', () => {
    const markdown = [
      '# Title', // 1
      `${FENCE}ts`, // 2
      'const a = 1;', // 3
      FENCE, // 4
      `${FENCE}sh`, // 5
      'npm test', // 6
      FENCE, // 7
      `${FENCE}typescript`, // 8
      'const b = 2;', // 9
      'const c = 3;', // 10
      FENCE, // 11
      `${FENCE}js`, // 12
      'const d = 4;', // 13
      FENCE, // 14
    ].join('\n');
    expect(extractSnippets('guide.md', markdown)).toEqual([
      { file: 'guide.md', line: 3, code: 'const a = 1;' },
      { file: 'guide.md', line: 9, code: 'const b = 2;\nconst c = 3;' },
    ]);
  });

  test('a ts block shown inside a longer fence of another language is text, not a snippet', () => {
    const markdown = ['````md', `${FENCE}ts`, 'not checked', FENCE, '````', `${FENCE}ts`, 'checked', FENCE].join('\n');
    expect(extractSnippets('guide.md', markdown).map((snippet) => snippet.code)).toEqual(['checked']);
  });

  test('a snippet indented in a list loses the fence\'s indent only', () => {
    const markdown = ['- step', `  ${FENCE}ts`, '  if (a) {', '    b();', '  }', `  ${FENCE}`].join('\n');
    expect(extractSnippets('guide.md', markdown)).toEqual([{ file: 'guide.md', line: 3, code: 'if (a) {\n  b();\n}' }]);
  });

  test('a block never closed is an error, not a silent skip', () => {
    expect(() => extractSnippets('guide.md', `text\n${FENCE}ts\nconst a = 1;\n`)).toThrow('guide.md:2');
  });
});

describe('markdownFiles', () => {
  const root = mkdtempSync(join(tmpdir(), 'doc-snippets-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test('README.md and every .md under docs/, but the generated reference', () => {
    mkdirSync(join(root, 'docs/guides'), { recursive: true });
    mkdirSync(join(root, 'docs/reference'), { recursive: true });
    for (const file of ['README.md', 'CHANGELOG.md', 'docs/hosts.md', 'docs/guides/postgres.md', 'docs/reference/README.md', 'docs/bench.svg']) writeFileSync(join(root, file), '');
    expect(markdownFiles(root)).toEqual(['README.md', 'docs/guides/postgres.md', 'docs/hosts.md']);
  });
});

describe('checkSnippets', () => {
  // One program for all cases: a program over the package's sources takes seconds to check.
  const snippets = [
    { file: 'docs/ok.md', line: 10, code: "import { verifyWebhook } from 'svc-webhooks/express';\napp.post('/webhooks', verifyWebhook({ secret }), handler);" },
    { file: 'docs/wrong.md', line: 20, code: "import { sign } from 'svc-webhooks';\n\nconst headers: number = sign('{}', { id: 'msg_1', timestamp: new Date(), secret });" },
    { file: 'docs/unknown.md', line: 30, code: 'await notDeclaredAnywhere();' },
    { file: 'docs/deno.md', line: 40, code: "import { verifyWebhook } from 'npm:svc-webhooks/fetch';\nconst handler: (request: Request) => Promise<Response> = verifyWebhook({ secret }, handle);" },
    // Each snippet is a module: the same name in two snippets is no redeclaration.
    { file: 'docs/twice.md', line: 50, code: 'const dedupId = 1;' },
    { file: 'docs/twice.md', line: 60, code: 'const dedupId = 2;' },
  ];
  const errors = checkSnippets(ROOT, snippets, [join(ROOT, 'docs/snippets.d.ts')]);

  test('a type error is reported at its line and column in the Markdown file', () => {
    expect(errors.filter((error) => error.at.startsWith('docs/wrong.md'))).toEqual([{ at: 'docs/wrong.md:22:7', message: expect.stringContaining("not assignable to type 'number'") }]);
  });

  test('a name neither imported nor a placeholder is an error', () => {
    expect(errors.filter((error) => error.at.startsWith('docs/unknown.md'))).toEqual([{ at: 'docs/unknown.md:30:7', message: "Cannot find name 'notDeclaredAnywhere'." }]);
  });

  test('imports of the package and its subpaths, Deno\'s npm: ones too, and the placeholders type-check', () => {
    expect(errors.map((error) => error.at.split(':')[0])).toEqual(['docs/unknown.md', 'docs/wrong.md']);
  });
});

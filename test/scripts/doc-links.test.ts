import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { anchorsOf, checkLinks, checkReadmeLinks, extractLinks, githubSlug, packageLinks, repositoryFiles } from '../../scripts/doc-links.js';

const FENCE = '```';

describe('githubSlug', () => {
  test.each([
    ['Install', 'install'],
    ['One handler per event type', 'one-handler-per-event-type'],
    ['MemoryDedupStore: `npm run bench:memory-store`', 'memorydedupstore-npm-run-benchmemory-store'],
    ['Exactly once in your transaction (`svc-webhooks/postgres`)', 'exactly-once-in-your-transaction-svc-webhookspostgres'],
    ['Express 4 and 5', 'express-4-and-5'],
    ['Why does a signature fail? `verify`', 'why-does-a-signature-fail-verify'],
    ['Keep `snake_case` and hyphens - twice', 'keep-snake_case-and-hyphens---twice'],
    ['A [linked](other.md) **bold** word', 'a-linked-bold-word'],
    ['Ratios: 1.00× — café', 'ratios-100--café'],
  ])('%s', (heading, slug) => {
    expect(githubSlug(heading)).toBe(slug);
  });
});

describe('anchorsOf', () => {
  test('each heading once, a repeated one numbered, closing hashes and headings in code left out, HTML anchors in', () => {
    const markdown = ['# Title', '## Usage ##', '## Usage', `${FENCE}sh`, '# not a heading', FENCE, '#hashtag is text', '<a id="custom"></a>', '## Usage'].join('\n');
    expect([...anchorsOf(markdown)]).toEqual(['title', 'usage', 'usage-1', 'usage-2', 'custom']);
  });
});

describe('extractLinks', () => {
  test('inline links and images, reference definitions and HTML, each at the line of its target; none inside code', () => {
    const markdown = [
      '# Guide', // 1
      'See [hosts](docs/hosts.md#hono) and ![chart](docs/bench.svg "the chart").', // 2
      'A link whose text runs [over', // 3
      'two lines](#guide).', // 4
      '`[not a link](nowhere.md)` and', // 5
      `${FENCE}md`, // 6
      '[in a block](nowhere.md)', // 7
      FENCE, // 8
      '[ref]: <CONTRIBUTING.md>', // 9
      '<img src="docs/logo.svg"> [web](https://example.com)', // 10
    ].join('\n');
    const links = extractLinks('README.md', markdown);
    expect(new Set(links.map((link) => link.file))).toEqual(new Set(['README.md']));
    expect(links.map(({ line, target }) => `${line} ${target}`)).toEqual([
      '2 docs/hosts.md#hono',
      '2 docs/bench.svg',
      '4 #guide',
      '9 CONTRIBUTING.md',
      '10 https://example.com',
      '10 docs/logo.svg',
    ]);
  });
});

describe('checkLinks', () => {
  const docs: Record<string, string> = {
    'README.md': [
      '# Title',
      '## Quick start',
      '[ok](#quick-start) [guide](docs/hosts.md#hono) [folder](examples/) [file](examples/demo.ts) [root](/CONTRIBUTING.md)',
      '[web](https://example.com/missing.md) [mail](mailto:a@example.com) [chart](docs/bench.svg)',
      '[no anchor](#missing) [no file](docs/tenants.md) [no heading](docs/hosts.md#fastify) [ignored](docs/api/index.html)',
      '[outside](../elsewhere.md) [encoded](docs/hosts.md#hono%20) [code anchor](examples/demo.ts#L10)',
    ].join('\n'),
    'docs/hosts.md': ['# Hosts', '## Hono', '[back](../README.md#title) [wrong](../README.md#nope) [self](hosts.md)'].join('\n'),
  };
  const repository = new Set(['README.md', 'CONTRIBUTING.md', 'docs/hosts.md', 'docs/bench.svg', 'examples/demo.ts']);
  const errors = checkLinks(['README.md', 'docs/hosts.md'], repository, (file) => docs[file]!);

  test('every broken link is reported at its line, and nothing else', () => {
    expect(errors).toEqual([
      { at: 'README.md:5', message: '#missing: README.md has no heading with the anchor #missing' },
      { at: 'README.md:5', message: 'docs/tenants.md: no such file or folder in the repository' },
      { at: 'README.md:5', message: 'docs/hosts.md#fastify: docs/hosts.md has no heading with the anchor #fastify' },
      { at: 'README.md:5', message: 'docs/api/index.html: no such file or folder in the repository' },
      { at: 'README.md:6', message: '../elsewhere.md: points outside the repository' },
      { at: 'README.md:6', message: 'docs/hosts.md#hono%20: docs/hosts.md has no heading with the anchor #hono%20' },
      { at: 'docs/hosts.md:3', message: '../README.md#nope: README.md has no heading with the anchor #nope' },
    ]);
  });
});

describe('checkReadmeLinks: the README as the npm page shows it', () => {
  const pkg = 'https://unpkg.com/svc-webhooks@1/';
  const readme = [
    '# Title',
    '## Quick start',
    `[ok](#quick-start) [guide](${pkg}docs/hosts.md#hono) [chart](${pkg}docs/bench.svg) [web](https://example.com/x.md)`,
    `[relative](docs/hosts.md) [rooted](/SECURITY.md) [no anchor](#missing) [no file](${pkg}docs/tenants.md) [no heading](${pkg}docs/hosts.md#fastify)`,
    `${FENCE}`,
    '[in code](docs/hosts.md)',
    `${FENCE}`,
  ].join('\n');
  const repository = new Set(['README.md', 'SECURITY.md', 'docs/hosts.md', 'docs/bench.svg']);
  const read = (file: string): string => (file === 'docs/hosts.md' ? '# Hosts\n## Hono' : readme);

  test('a relative link is dead there; a package link names a file and a heading of the repository', () => {
    expect(checkReadmeLinks(readme, repository, read)).toEqual([
      { at: 'README.md:4', message: `docs/hosts.md: dead on the npm page, which has no repository to resolve it against: link ${pkg}docs/hosts.md` },
      { at: 'README.md:4', message: `/SECURITY.md: dead on the npm page, which has no repository to resolve it against: link ${pkg}SECURITY.md` },
      { at: 'README.md:4', message: '#missing: README.md has no heading with this anchor' },
      { at: 'README.md:4', message: `${pkg}docs/tenants.md: no such file in the repository` },
      { at: 'README.md:4', message: `${pkg}docs/hosts.md#fastify: docs/hosts.md has no heading with this anchor` },
    ]);
  });

  test('lists the package files it links to, for the tarball check', () => {
    expect(packageLinks(readme).map(({ path, anchor }) => [path, anchor])).toEqual([
      ['docs/hosts.md', 'hono'],
      ['docs/bench.svg', undefined],
      ['docs/tenants.md', undefined],
      ['docs/hosts.md', 'fastify'],
    ]);
  });
});

describe('repositoryFiles', () => {
  const root = mkdtempSync(join(tmpdir(), 'doc-links-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test('tracked files and new ones, but not what git ignores or a tracked file deleted since', () => {
    execFileSync('git', ['init', '-q'], { cwd: root });
    mkdirSync(join(root, 'docs/api'), { recursive: true });
    for (const file of ['README.md', 'gone.md', 'docs/new.md', 'docs/api/index.html']) writeFileSync(join(root, file), '');
    writeFileSync(join(root, '.gitignore'), 'docs/api/\n');
    execFileSync('git', ['add', 'README.md', 'gone.md'], { cwd: root });
    rmSync(join(root, 'gone.md'));
    expect([...repositoryFiles(root)].sort()).toEqual(['.gitignore', 'README.md', 'docs/new.md']);
  });
});

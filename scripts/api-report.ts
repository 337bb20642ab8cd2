/**
 * The API reports: api-extractor's report of each entry point of
 * package.json "exports" (from its published declarations in dist/), one
 * `api/<name>.api.md` per subpath, kept in the repository so that a change
 * to the public API shows up in review as a diff.
 *
 *   npm run api:check   fails when a report differs from the build, or is missing or stale
 *   npm run api:update  rewrites the reports from the build
 *
 * Both build first. A type that an entry's signatures use without exporting
 * it (ae-forgotten-export) is fine when another entry exports it, as the root
 * exports the types every adapter's options are built from; one that no
 * entry exports fails the run. So does a declaration the report marks
 * "(undocumented)": every export and every member carries a doc comment,
 * and every entry's declarations their @packageDocumentation.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CompilerState, Extractor, ExtractorConfig, ExtractorLogLevel, type ExtractorMessage } from '@microsoft/api-extractor';
import { publicEntries, ROOT, type PublicEntry } from './public-entries.js';

const REPORTS = join(ROOT, 'api');
const TEMP = join(ROOT, '.cache/api-report');
const update = process.argv.includes('--update');

// Release tags (@public, @beta) are not used: everything an entry exports is public.
const SILENT = { logLevel: ExtractorLogLevel.None, addToApiReportFile: false } as const;

interface Forgotten {
  readonly entry: string;
  readonly symbol: string;
}

function configFor(entry: PublicEntry): ExtractorConfig {
  return ExtractorConfig.prepare({
    configObject: {
      projectFolder: ROOT,
      mainEntryPointFilePath: join(ROOT, entry.types),
      compiler: {
        // The published declarations as a user's compiler sees them. Peers' own declarations are not checked, as
        // with most users' skipLibCheck: h3 2's do not compile without the DOM's types and its optional peers.
        // Ours were checked when tsc emitted them from the checked source.
        overrideTsconfig: {
          compilerOptions: {
            target: 'ES2022',
            lib: ['ES2022'],
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            skipLibCheck: true,
            types: ['node'],
          },
          files: publicEntries().map((each) => join(ROOT, each.types)),
        },
      },
      apiReport: { enabled: true, reportFileName: entry.name, reportFolder: REPORTS, reportTempFolder: TEMP },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      newlineKind: 'lf',
      messages: {
        compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Error } },
        extractorMessageReporting: {
          default: { logLevel: ExtractorLogLevel.Error },
          'ae-missing-release-tag': SILENT,
          // The report marks such a declaration "(undocumented)", which fails the run below, naming it.
          'ae-undocumented': SILENT,
          // Checked across all entries below.
          'ae-forgotten-export': SILENT,
        },
        // The doc comments are checked by TypeDoc (npm run docs), which reads TypeDoc's tags.
        tsdocMessageReporting: { default: SILENT },
      },
    },
    configObjectFullPath: undefined,
    packageJsonFullPath: join(ROOT, 'package.json'),
  });
}

function extract(entry: PublicEntry, compilerState: CompilerState, forgotten: Forgotten[]): boolean {
  const result = Extractor.invoke(configFor(entry), {
    localBuild: update,
    compilerState,
    messageCallback(message: ExtractorMessage) {
      if (message.messageId === 'ae-forgotten-export') {
        const symbol = /The symbol "([^"]+)"/.exec(message.text)?.[1] ?? message.text;
        forgotten.push({ entry: entry.specifier, symbol });
      }
      // api-extractor's own chatter about versions and files written.
      if (message.logLevel === ExtractorLogLevel.Info || message.logLevel === ExtractorLogLevel.Verbose) message.handled = true;
    },
  });
  if (result.apiReportChanged && !update) console.error(`api/${entry.name}.api.md differs from the build of ${entry.specifier}: run npm run api:update and commit the diff`);
  // Its only warnings are its notices that a report changed, an error without --update.
  return result.succeeded && result.errorCount === 0;
}

/** The names an entry's report declares as exported. */
function exportedNames(report: string): Set<string> {
  const names = new Set<string>();
  for (const match of report.matchAll(/^export (?:declare )?(?:abstract )?(?:interface|type|class|function|const|let|var|enum|namespace) (\w+)/gm)) names.add(match[1]!);
  for (const match of report.matchAll(/^export \{ ([^}]+) \}/gm)) for (const name of match[1]!.split(',')) names.add(name.trim().split(/\s+as\s+/).at(-1)!);
  return names;
}

/** The declarations a report marks "(undocumented)": the line after each mark, trimmed. */
function undocumented(report: string): string[] {
  const lines = report.split('\n');
  return lines.flatMap((line, i) => (/^\/\/ (@\w+ )?\(undocumented\)$/.test(line.trim()) ? [lines[i + 1]?.trim() ?? ''] : []));
}

mkdirSync(REPORTS, { recursive: true });
const entries = publicEntries();
const forgotten: Forgotten[] = [];
// One compiler run for all entries: every entry's declarations are in its program.
const compilerState = CompilerState.create(configFor(entries[0]!));
let ok = true;
for (const entry of entries) ok = extract(entry, compilerState, forgotten) && ok;

// A report left behind by a subpath that is gone.
const expected = new Set(entries.map((entry) => `${entry.name}.api.md`));
for (const file of readdirSync(REPORTS).filter((name) => name.endsWith('.api.md') && !expected.has(name))) {
  if (update) rmSync(join(REPORTS, file));
  else {
    console.error(`api/${file} reports no entry of package.json "exports": run npm run api:update`);
    ok = false;
  }
}

const exported = new Set<string>();
for (const entry of entries) {
  const report = join(TEMP, `${entry.name}.api.md`);
  if (!existsSync(report)) continue;
  const text = readFileSync(report, 'utf8');
  for (const name of exportedNames(text)) exported.add(name);
  for (const declaration of undocumented(text)) {
    console.error(`${entry.specifier}: ${declaration} has no doc comment`);
    ok = false;
  }
  // The file's comment reaches the declarations only with a first statement that is kept there.
  if (text.includes('(No @packageDocumentation comment for this package)')) {
    console.error(`${entry.specifier}: its declarations have no @packageDocumentation: start its file with a type import or an export`);
    ok = false;
  }
}
for (const { entry, symbol } of forgotten) {
  if (exported.has(symbol)) continue;
  console.error(`${entry}: its public signatures use ${symbol}, which no entry point exports`);
  ok = false;
}

console.log(`API reports: ${entries.length} entry points ${ok ? (update ? 'written' : 'match api/') : 'FAILED'}`);
if (!ok) process.exitCode = 1;

/**
 * The whole mutation run (`npm run test:mutation`), area by area: each area's
 * files are mutated against the suites that hold them, one Stryker run an
 * area, and the areas' reports are merged into reports/mutation/mutation.json.
 *
 * One Stryker run over everything would run a mutant of the pipeline against
 * every suite that passes through it, the adapters' over HTTP and the queues'
 * included; on two cores that was estimated at 20 hours. An area's suites are
 * the ones written for its files, so a mutant only another area's suite
 * notices counts as survived: the score is a floor.
 *
 * Arguments name the areas to run (all by default); the merge takes the
 * others' latest reports. Each area keeps its own incremental file, so a
 * later run tests again only what changed. Fails when the merged score is
 * under 95%, or a file's under 85%.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { scoreOf, statusesIn, tally, totalOf, type Report } from './report.js';

/** What one area mutates and against which suites. */
interface Area {
  readonly name: string;
  /** Stryker's `--mutate` globs. */
  readonly mutate: readonly string[];
  /** Stryker's `--testFiles` globs, within vitest.mutation.config.ts's suites. */
  readonly testFiles: readonly string[];
  /** A view of files another area mutates, against fewer suites: run only by name, reported alone, never merged. */
  readonly view?: true;
}

/**
 * The suites of what a user meets of the pipeline: the entries over HTTP (hostile senders' sockets, a host's
 * waitUntil, many tenants and OpenTelemetry's view included), and `dispatch`. Listed one by one:
 * Stryker splits its globs at commas.
 */
const USER_LEVEL_SUITES = [
  'test/adapters/handlers-over-http.test.ts',
  'test/adapters/handoff-over-http.test.ts',
  ...['express', 'hono', 'fetch', 'lambda', 'azure', 'h3', 'adapter-edges', 'user-callbacks', 'too-large', 'hostile-senders', 'hono-settle', 'tenants'].map(
    (name) => `test/adapters/${name}.test.ts`,
  ),
  'test/receive/dispatch.test.ts',
  // What svc-webhooks/otel makes of each entry's deliveries over HTTP: the channels, as a user's instrumentation reads them.
  'test/otel/instrument-webhooks.test.ts',
];

/** The core keeps its own configuration (static mutants too), which CI runs. */
const CORE = 'core';

const AREAS: readonly Area[] = [
  { name: CORE, mutate: ['src/core/**/*.ts'], testFiles: [] },
  // The layers under the pipeline with it, against their specs and the pipeline's own, in process, the delivery
  // channel's as OpenTelemetry reads it, and what a user meets: the entries' contracts over HTTP.
  {
    name: 'receive',
    mutate: ['src/base/**/*.ts', 'src/process/**/*.ts', 'src/receive/**/*.ts'],
    testFiles: ['test/base/**/*.test.ts', 'test/process/**/*.test.ts', 'test/receive/**/*.test.ts', ...USER_LEVEL_SUITES],
  },
  // How much of the pipeline what a user meets holds alone, without the tests of its internals.
  { name: 'receive-user-level', mutate: ['src/receive/**/*.ts'], testFiles: USER_LEVEL_SUITES, view: true },
  { name: 'adapters', mutate: ['adapters/**/*.ts'], testFiles: ['test/adapters/**/*.test.ts', 'test/otel/instrument-webhooks.test.ts', 'test/otel/queue-traces.test.ts'] },
  { name: 'stores', mutate: ['src/stores/**/*.ts'], testFiles: ['test/stores/**/*.test.ts'] },
  { name: 'queues', mutate: ['src/queues/**/*.ts'], testFiles: ['test/queues/**/*.test.ts', 'test/otel/queue-traces.test.ts'] },
  { name: 'testing', mutate: ['src/testing/**/*.ts'], testFiles: ['test/testing/**/*.test.ts'] },
  // The dev relay apart: its suites start servers and pages, and the rest keeps its report when a run of it is cut short.
  { name: 'cli', mutate: ['src/cli/**/*.ts', '!src/cli/dev/**'], testFiles: ['test/cli/*.test.ts', 'test/cli/!(dev)/**/*.test.ts'] },
  { name: 'cli-dev', mutate: ['src/cli/dev/**/*.ts'], testFiles: ['test/cli/dev/**/*.test.ts'] },
];

const WHOLE_FLOOR = 95;
const FILE_FLOOR = 85;
const AREA_REPORTS = 'reports/mutation/areas';

function strykerArgs(area: Area): string[] {
  if (area.name === CORE) return ['stryker.core.config.mjs'];
  return [
    'stryker.config.mjs',
    '--mutate',
    area.mutate.join(','),
    '--testFiles',
    area.testFiles.join(','),
    '--incrementalFile',
    `reports/stryker-incremental-${area.name}.json`,
    '--tempDirName',
    `.stryker-tmp-${area.name}`,
    '--reporters',
    'clear-text,progress,json',
  ];
}

/** Runs one area, and keeps its report under reports/mutation/areas/. */
function runArea(area: Area): void {
  const written = area.name === CORE ? 'reports/mutation-core/mutation.json' : 'reports/mutation/mutation.json';
  rmSync(written, { force: true });
  const started = Date.now();
  // The exit code is not the verdict: Stryker's own floor would stop an area below 95% before the merge.
  spawnSync('npx', ['stryker', 'run', ...strykerArgs(area)], { stdio: 'inherit' });
  if (!existsSync(written)) throw new Error(`area ${area.name}: Stryker wrote no report (see its output above)`);
  writeFileSync(`${AREA_REPORTS}/${area.name}.json`, readFileSync(written));
  console.log(`area ${area.name}: ${Math.round((Date.now() - started) / 1000)} s`);
}

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !AREAS.some((area) => area.name === name));
if (unknown.length > 0) {
  console.error(`unknown area: ${unknown.join(', ')} (areas: ${AREAS.map((area) => area.name).join(', ')})`);
  process.exit(2);
}
mkdirSync(AREA_REPORTS, { recursive: true });
for (const area of AREAS) if (wanted.includes(area.name) || (wanted.length === 0 && area.view === undefined)) runArea(area);
for (const view of AREAS.filter((area) => area.view && wanted.includes(area.name))) {
  const report = JSON.parse(readFileSync(`${AREA_REPORTS}/${view.name}.json`, 'utf8')) as Report;
  const statuses = tally(Object.keys(report.files).flatMap((path) => statusesIn(report, path)));
  console.log(`view ${view.name}: ${(scoreOf(statuses) ?? 100).toFixed(2)}% of ${totalOf(statuses)} mutants, not merged`);
}
// Every area's latest report, those of areas not run this time included, so that one area's rerun still gives the whole score.
const stored = AREAS.filter((area) => area.view === undefined && existsSync(`${AREA_REPORTS}/${area.name}.json`));
const missing = AREAS.filter((area) => area.view === undefined && !stored.includes(area)).map((area) => area.name);
const notRunNow = stored.filter((area) => wanted.length > 0 && !wanted.includes(area.name)).map((area) => area.name);
if (notRunNow.length > 0) console.log(`from earlier runs: ${notRunNow.join(', ')}`);
if (missing.length > 0) console.log(`never run, so left out: ${missing.join(', ')}`);
const reports = stored.map((area) => JSON.parse(readFileSync(`${AREA_REPORTS}/${area.name}.json`, 'utf8')) as Report);
const files: Report['files'] = Object.assign({}, ...reports.map((report) => report.files));
writeFileSync('reports/mutation/mutation.json', JSON.stringify({ ...reports[0], files }));

const merged: Report = { files };
const all = tally(Object.keys(files).flatMap((path) => statusesIn(merged, path)));
const whole = scoreOf(all) ?? 100;
const low = Object.keys(files).filter((path) => (scoreOf(tally(statusesIn(merged, path))) ?? 100) < FILE_FLOOR);
console.log(`merged: ${whole.toFixed(2)}% of ${totalOf(all)} mutants (npm run mutation:table for each file)`);
for (const path of low) console.log(`under ${FILE_FLOOR}%: ${path} ${scoreOf(tally(statusesIn(merged, path)))?.toFixed(2)}%`);
if (whole < WHOLE_FLOOR || low.length > 0) process.exit(1);

/**
 * The pg-boss majors this Node cannot load (11 and 12 need Node 22): the
 * specs of test/queues/pg-boss run again for them, by a vitest of their own
 * under Node 22 (test/helpers/node-versions.ts) with `PG_BOSS_MAJORS`
 * naming them; this spec fails when that run fails or covers a major not at
 * all. Under a Node that loads every major there is nothing to run again: the
 * specs cover them all in this process.
 *
 * The run takes the enqueue and work specs, the traces across the queue,
 * the NestJS module's worker, and the load and crash tests at their CI size
 * (`LOAD_SIZE` passes on to them).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { nodeBinary } from '../../helpers/node-versions.js';
import { ALL_PG_BOSS_MAJORS, PG_BOSS_MAJORS, PG_BOSS_MAJORS_ELSEWHERE } from '../../helpers/pg-boss-majors.js';
import { PACKAGE_ROOT } from '../../package/pack.js';

/** The specs run again on the other Node, this one excluded. */
const SPECS = [
  ...['enqueue.test.ts', 'work.test.ts', 'exactly-once-load.test.ts', 'exactly-once-crash.test.ts'].map((file) => `test/queues/pg-boss/${file}`),
  // The traces across the queue, in this process and in another: their BullMQ cases run there too, seconds.
  'test/otel/queue-traces.test.ts',
  'test/otel/queue-traces-across-processes.test.ts',
  // The NestJS module's worker on pg-boss: its BullMQ cases run there too, seconds.
  'test/adapters/nestjs-worker.test.ts',
];
const OTHER_NODE = '22';

interface VitestReport {
  numPassedTests: number;
  numFailedTests: number;
  testResults: Array<{ name: string; assertionResults: Array<{ fullName: string; status: string }> }>;
}

/** Runs vitest on `specs` with `node`, for `majors`; resolves to its exit code, its output and its JSON report. */
async function runVitest(node: string, specs: readonly string[], majors: readonly string[]): Promise<{ code: number | null; output: string; report?: VitestReport }> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-pg-boss-'));
  const reportFile = join(dir, 'report.json');
  try {
    const child = spawn(
      node,
      ['node_modules/vitest/vitest.mjs', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${reportFile}`, ...specs],
      { cwd: PACKAGE_ROOT, env: { ...process.env, PG_BOSS_MAJORS: majors.join(','), REDIS_URL: inject('redisUrl'), NO_COLOR: '1' } },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    let report: VitestReport | undefined;
    try {
      report = JSON.parse(readFileSync(reportFile, 'utf8')) as VitestReport;
    } catch {
      report = undefined;
    }
    return { code, output, report };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('pg-boss majors', () => {
  it("covers every major of the peer range: this run's, and the other Node's", () => {
    const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> };
    const peerMajors = manifest.peerDependencies['pg-boss']!.split('||').map((range) => /^\s*\^(\d+)\.0\.0\s*$/.exec(range)![1]);
    expect(peerMajors).toEqual(ALL_PG_BOSS_MAJORS);
    if (process.env.PG_BOSS_MAJORS === undefined) {
      expect([...PG_BOSS_MAJORS.map(({ major }) => major), ...PG_BOSS_MAJORS_ELSEWHERE].sort()).toEqual(peerMajors);
    }
  });

  it.each(PG_BOSS_MAJORS_ELSEWHERE.length > 0 ? [PG_BOSS_MAJORS_ELSEWHERE.join(', ')] : [])(
    `runs the pg-boss specs for pg-boss %s under Node ${OTHER_NODE}`,
    async () => {
      const node = await nodeBinary(OTHER_NODE);
      const { code, output, report } = await runVitest(node, SPECS, PG_BOSS_MAJORS_ELSEWHERE);
      const tests = report?.testResults.flatMap(({ assertionResults }) => assertionResults) ?? [];
      const summary = PG_BOSS_MAJORS_ELSEWHERE.map((major) => {
        const own = tests.filter(({ fullName }) => fullName.includes(`pg-boss ${major}`));
        return `pg-boss ${major}: ${own.filter(({ status }) => status === 'passed').length} of ${own.length} passed`;
      });
      // The load and crash tests' own report lines, as the specs print them in this process.
      const reports = output.split('\n').filter((line) => /^pg-boss \d+ (load|crash): /.test(line));
      console.info([`Node ${OTHER_NODE} (${node}): ${summary.join('; ')}`, ...reports].join('\n'));
      // Enough of the child's output to see what failed there.
      expect(code, output.slice(-20_000)).toBe(0);
      expect(report?.numFailedTests).toBe(0);
      for (const major of PG_BOSS_MAJORS_ELSEWHERE) {
        for (const spec of SPECS) {
          const file = report!.testResults.find((result) => result.name.endsWith(spec));
          const ran = file?.assertionResults.filter(({ fullName, status }) => fullName.includes(`pg-boss ${major}`) && status === 'passed') ?? [];
          expect(ran.length, `${spec} on pg-boss ${major}`).toBeGreaterThan(0);
        }
      }
    },
    900_000,
  );
});

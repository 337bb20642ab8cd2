/**
 * A runtime-neutral test harness: no test framework, no Node-only globals, so
 * the same cases run on Node, Bun, Deno and workerd. A case throws to fail.
 */

export interface ConformanceCase {
  readonly name: string;
  run(): void | Promise<void>;
}

/** What every file under test/runtimes/cases/ exports. */
export interface CaseFile {
  readonly cases: readonly ConformanceCase[];
}

/** Runs every case in order; answers the report lines, the last the `runtime: N passed, N failed` summary. */
export async function runCases(runtime: string, files: readonly CaseFile[]): Promise<string[]> {
  const lines: string[] = [];
  let passed = 0;
  let failed = 0;
  for (const { name, run } of files.flatMap((file) => file.cases)) {
    try {
      await run();
      passed++;
      lines.push(`ok   ${name}`);
    } catch (error) {
      failed++;
      lines.push(`FAIL ${name}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    }
  }
  lines.push(`${runtime}: ${passed} passed, ${failed} failed`);
  return lines;
}

export function assert(condition: unknown, what: string): asserts condition {
  if (!condition) throw new Error(what);
}

/** Equality of JSON-shaped values. */
export function assertEqual(actual: unknown, expected: unknown, what: string): void {
  const [a, e] = [JSON.stringify(actual), JSON.stringify(expected)];
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

/** Runs `fn` and returns what it threw; fails if it returned. */
export function thrown(fn: () => unknown, what: string): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error(`${what}: expected a throw`);
}

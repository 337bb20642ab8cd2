/**
 * Prints the README's per-file mutation table from a Stryker JSON report
 * (`npm run mutation:table`, default reports/mutation/mutation.json). The
 * score is Stryker's: killed and timed-out mutants over all that ran or had
 * no test reaching them; compile and runtime errors do not count.
 */
import { readFileSync } from 'node:fs';

type Status = 'Killed' | 'Timeout' | 'Survived' | 'NoCoverage' | 'CompileError' | 'RuntimeError' | 'Ignored';

interface Report {
  readonly files: Record<string, { readonly mutants: readonly { readonly status: Status }[] }>;
}

interface Tally {
  killed: number;
  timeout: number;
  survived: number;
  noCoverage: number;
}

const COUNTED: Partial<Record<Status, keyof Tally>> = { Killed: 'killed', Timeout: 'timeout', Survived: 'survived', NoCoverage: 'noCoverage' };

function tally(statuses: readonly Status[]): Tally {
  const counts: Tally = { killed: 0, timeout: 0, survived: 0, noCoverage: 0 };
  for (const status of statuses) {
    const key = COUNTED[status];
    if (key !== undefined) counts[key] += 1;
  }
  return counts;
}

function score({ killed, timeout, survived, noCoverage }: Tally): string {
  const total = killed + timeout + survived + noCoverage;
  return total === 0 ? 'n/a' : `${((100 * (killed + timeout)) / total).toFixed(1)}%`;
}

const row = (name: string, counts: Tally): string =>
  `| ${name} | ${score(counts)} | ${counts.killed} | ${counts.timeout} | ${counts.survived} | ${counts.noCoverage} |`;

const report = JSON.parse(readFileSync(process.argv[2] ?? 'reports/mutation/mutation.json', 'utf8')) as Report;
const files = Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b));
console.log('| file | score | killed | timed out | survived | no coverage |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const [path, { mutants }] of files) console.log(row(`\`${path}\``, tally(mutants.map((mutant) => mutant.status))));
console.log(row('**all**', tally(files.flatMap(([, { mutants }]) => mutants.map((mutant) => mutant.status)))));

/**
 * Prints the README's per-file mutation table from a Stryker JSON report
 * (`npm run mutation:table`, default reports/mutation/mutation.json). The
 * score is Stryker's: killed and timed-out mutants over all that ran or had
 * no test reaching them; compile and runtime errors do not count.
 */
import { readFileSync } from 'node:fs';
import { scoreOf, statusesIn, tally, type Report, type Tally } from './report.js';

function score(counts: Tally): string {
  const percent = scoreOf(counts);
  return percent === undefined ? 'n/a' : `${percent.toFixed(1)}%`;
}

const row = (name: string, counts: Tally): string =>
  `| ${name} | ${score(counts)} | ${counts.killed} | ${counts.timeout} | ${counts.survived} | ${counts.noCoverage} |`;

const report = JSON.parse(readFileSync(process.argv[2] ?? 'reports/mutation/mutation.json', 'utf8')) as Report;
const files = Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b));
console.log('| file | score | killed | timed out | survived | no coverage |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const [path] of files) console.log(row(`\`${path}\``, tally(statusesIn(report, path))));
console.log(row('**all**', tally(files.flatMap(([path]) => statusesIn(report, path)))));

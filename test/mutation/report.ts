/** A Stryker JSON report as the mutation scripts read it, and Stryker's score of its mutants. */

/** What became of a mutant. */
export type Status = 'Killed' | 'Timeout' | 'Survived' | 'NoCoverage' | 'CompileError' | 'RuntimeError' | 'Ignored';

/** The part of a report the scores need: each mutated file's mutants. */
export interface Report {
  readonly files: Record<string, { readonly mutants: readonly { readonly status: Status }[] }>;
}

/** The mutants that count toward the score, by what became of them. */
export interface Tally {
  killed: number;
  timeout: number;
  survived: number;
  noCoverage: number;
}

const COUNTED: Partial<Record<Status, keyof Tally>> = { Killed: 'killed', Timeout: 'timeout', Survived: 'survived', NoCoverage: 'noCoverage' };

/** Counts `statuses`; compile and runtime errors and ignored mutants do not count. */
export function tally(statuses: readonly Status[]): Tally {
  const counts: Tally = { killed: 0, timeout: 0, survived: 0, noCoverage: 0 };
  for (const status of statuses) {
    const key = COUNTED[status];
    if (key !== undefined) counts[key] += 1;
  }
  return counts;
}

/** The mutants counted. */
export const totalOf = ({ killed, timeout, survived, noCoverage }: Tally): number => killed + timeout + survived + noCoverage;

/** Stryker's score in percent: killed and timed-out mutants over all counted; undefined when none counts. */
export function scoreOf(counts: Tally): number | undefined {
  const total = totalOf(counts);
  return total === 0 ? undefined : (100 * (counts.killed + counts.timeout)) / total;
}

/** The statuses of `report`'s mutants in `path`. */
export const statusesIn = (report: Report, path: string): Status[] => (report.files[path]?.mutants ?? []).map((mutant) => mutant.status);

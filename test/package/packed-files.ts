/** What a tarball must hold, read off package.json and the README's links, and what it must not. */

/** The fields of package.json that name files. */
export interface Manifest {
  readonly main?: string;
  readonly types?: string;
  readonly module?: string;
  readonly bin?: string | Readonly<Record<string, string>>;
  readonly exports?: unknown;
}

/** Every file package.json names, without a leading `./`, each once. */
export function namedFiles(manifest: Manifest): string[] {
  const files = new Set<string>();
  const add = (value: unknown): void => {
    if (typeof value === 'string') files.add(value.replace(/^\.\//, ''));
    else if (value !== null && typeof value === 'object') for (const nested of Object.values(value)) add(nested);
  };
  add(manifest.exports);
  add(manifest.main);
  add(manifest.types);
  add(manifest.module);
  add(manifest.bin);
  return [...files].sort();
}

/** Paths of a package that only the repository needs: the tests and the TypeScript sources. */
const REPOSITORY_ONLY = /^(test|src|adapters|bench|scripts|examples|fixtures)\/|\.ts$(?<!\.d\.ts$)/;

/**
 * Each problem of a tarball listing `packed` against `manifest` and the
 * files the README links to (`linked`): a named or linked file missing, a
 * repository file shipped, no code.
 */
export function missingFromPackage(manifest: Manifest, packed: readonly string[], linked: readonly string[] = []): string[] {
  const present = new Set(packed);
  const problems = namedFiles(manifest)
    .filter((file) => !present.has(file))
    .map((file) => `${file} is named by package.json but not packed`);
  for (const file of new Set(linked)) if (!present.has(file)) problems.push(`${file} is linked from the README, which the npm page shows, but not packed`);
  for (const file of packed) if (REPOSITORY_ONLY.test(file)) problems.push(`${file} is packed but belongs to the repository only`);
  if (!packed.some((file) => file.endsWith('.js'))) problems.push('no JavaScript is packed');
  return problems;
}

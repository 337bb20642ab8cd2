/**
 * The public entry points of the package, read from package.json "exports",
 * so that the API reference, the API reports and the snippet check pick up a
 * new subpath without being told.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The repository root, where package.json is. */
export const ROOT = new URL('..', import.meta.url).pathname;

export interface PublicEntry {
  /** As in "exports": `.`, `./express`, … */
  readonly subpath: string;
  /** As a user imports it: `svc-webhooks`, `svc-webhooks/express`, … */
  readonly specifier: string;
  /** A file-name-safe name: `index` for the root, else the subpath's own (`express`). */
  readonly name: string;
  /** The TypeScript source it is built from, relative to the root. */
  readonly source: string;
  /** The ES module declaration file it publishes, relative to the root. */
  readonly types: string;
}

interface ConditionalExport {
  readonly import?: { readonly types?: string };
}

interface PackageJson {
  readonly name: string;
  readonly exports: Record<string, string | ConditionalExport>;
}

const BUILT = /^\.\/dist\/esm\/(.+)\.d\.ts$/;

export function publicEntries(root = ROOT): PublicEntry[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as PackageJson;
  return Object.entries(pkg.exports).flatMap(([subpath, target]) => {
    // ./package.json and any other plain file is no module.
    if (typeof target === 'string') return [];
    const types = target.import?.types;
    const built = types === undefined ? null : BUILT.exec(types);
    if (types === undefined || built === null) throw new Error(`package.json "exports" ${subpath}: no ES module types under ./dist/esm/`);
    return [
      {
        subpath,
        specifier: subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`,
        name: subpath === '.' ? 'index' : subpath.slice(2).replaceAll('/', '-'),
        source: `${built[1]}.ts`,
        types: types.slice(2),
      },
    ];
  });
}

/**
 * The contract's parser and generators, loaded only by the commands that
 * read the contract (`types`, `send --contract`): optional peers, so that
 * installing svc-webhooks brings none of them into production. Missing,
 * each is named with the command that installs it, pinned to the majors
 * it runs on.
 */
import { ContractError } from './contract-error.js';

/** A package the generators need, and the versions they run on. */
export interface GeneratorPeer {
  readonly name: string;
  /** Caret ranges as package.json writes them: `^7.0.0`, or several joined by ` || `. */
  readonly range: string;
  /** The peer whose import loads this one, when svc-webhooks does not import it itself. */
  readonly of?: string;
}

/**
 * What `svc-webhooks types` runs on: svc-webhooks' peer ranges (package.json) for the two it imports, and
 * for TypeScript openapi-typescript 7's own, whose compiler API it builds with (TypeScript 7 has none).
 */
export const GENERATOR_RANGES: readonly GeneratorPeer[] = [
  { name: 'openapi-typescript', range: '^7.0.0' },
  { name: 'typescript', range: '^5.0.0', of: 'openapi-typescript' },
  { name: '@redocly/openapi-core', range: '^1.34.0' },
];

/** The packages the commands import: what `svc-webhooks types` needs, and `--schemas` besides. */
export const GENERATOR_PEERS = ['openapi-typescript', '@redocly/openapi-core'] as const;
export const SCHEMA_PEERS = ['@exodus/schemasafe'] as const;

/** What to install for `svc-webhooks types`, each at the first major of its range; for `--schemas`, `SCHEMA_INSTALL` besides. */
export const GENERATOR_INSTALL: readonly string[] = GENERATOR_RANGES.map(({ name, range }) => `${name}@${/^\^(\d+)/.exec(range)![1]}`);
export const SCHEMA_INSTALL = ['@exodus/schemasafe@1'] as const;

/** `load()`'s module, or a `ContractError` naming the install when `name` is not installed. */
export async function loadPeer<T>(name: string, load: () => Promise<T>, needed: readonly string[] = GENERATOR_INSTALL): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && String((error as Error).message).includes(name)) {
      throw new ContractError(`this needs ${name}, an optional peer: npm install --save-dev ${needed.join(' ')}`);
    }
    throw error;
  }
}

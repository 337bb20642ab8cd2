/**
 * The contract's parser and generators, loaded only by the commands that
 * read the contract (`types`, `send --contract`): optional peers, so that
 * installing svc-webhooks brings none of them into production. Missing,
 * each is named with the command that installs it.
 */
import { ContractError } from './contract-error.js';

/** What `svc-webhooks types` needs, and `--schemas` besides. */
export const GENERATOR_PEERS = ['openapi-typescript', '@redocly/openapi-core'] as const;
export const SCHEMA_PEERS = ['@exodus/schemasafe'] as const;

/** `load()`'s module, or a `ContractError` naming the install when `name` is not installed. */
export async function loadPeer<T>(name: string, load: () => Promise<T>, needed: readonly string[] = GENERATOR_PEERS): Promise<T> {
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

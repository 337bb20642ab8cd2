/**
 * The TypeScript module `svc-webhooks types` writes: the contract's types
 * as openapi-typescript renders them (read-only), then an augmentation of
 * svc-webhooks' `ContractEventMap` with each webhook's payload. Types only:
 * nothing of it runs.
 */
import type { Contract, ContractEvent } from '../shared/contract.js';
import { ContractError } from '../shared/contract-error.js';
import { loadPeer } from '../shared/peers.js';

type OpenapiTypescript = typeof import('openapi-typescript');

/** The package the generated modules augment and import types from, as the user's project resolves it. */
export const PACKAGE = JSON.stringify('svc-webhooks');

/** The module's text for `contract`, read from the file named `source` (named in its header, never its path). */
export async function typeModule(contract: Contract, source: string): Promise<string> {
  const { default: openapiTS, astToString } = await loadPeer<OpenapiTypescript>('openapi-typescript', () => import('openapi-typescript'));
  // The bundle is already checked; openapi-typescript's own log would repeat what the command says.
  let ast: Awaited<ReturnType<typeof openapiTS>>;
  try {
    ast = await openapiTS(contract.document as never, { immutable: true, silent: true });
  } catch (error) {
    throw new ContractError(`openapi-typescript cannot render the contract: ${String((error as Error).message).split('\n')[0]}`);
  }
  return [
    header(source),
    // Brings svc-webhooks into the program to augment, for a project that imports only an entry such as svc-webhooks/fetch.
    `import type {} from ${PACKAGE};`,
    '',
    astToString(ast).trimEnd(),
    '',
    '/** The envelope every event carries (spec section 2), whatever the contract says of it. */',
    'type Envelope<T extends string> = {',
    '  readonly id: string;',
    '  readonly type: T;',
    '  readonly data: { readonly object: { readonly id: string } };',
    '};',
    '',
    `declare module ${PACKAGE} {`,
    '  interface ContractEventMap {',
    ...contract.events.flatMap((event) => [`    /** ${commentSafe(event.pointer)} */`, `    ${JSON.stringify(event.type)}: Envelope<${JSON.stringify(event.type)}> & ${payloadType(event)};`]),
    '  }',
    '}',
    '',
  ].join('\n');
}

/** The payload's type, read from openapi-typescript's `webhooks` interface. */
function payloadType(event: ContractEvent): string {
  const operation = `webhooks[${JSON.stringify(event.name)}][${JSON.stringify(event.method)}]`;
  return `NonNullable<${operation}['requestBody']>['content'][${JSON.stringify(event.mediaType)}]`;
}

/** The comment every generated module opens with: what made it, and that it is not to be edited. */
export function header(source: string, what = 'Event types and payloads'): string {
  return [
    '/**',
    ` * ${what} of the service's contract, written by \`svc-webhooks types\` from`,
    ` * ${commentSafe(source)}. Do not edit: run the command again when the contract changes,`,
    ' * and `svc-webhooks types --check` in CI.',
    ' */',
  ].join('\n');
}

/** `text` as it may stand inside a block comment: a name from the contract could close it. */
export function commentSafe(text: string): string {
  return text.replaceAll('*/', '*\\/').replace(/[\r\n]/g, ' ');
}

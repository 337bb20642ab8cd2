/**
 * One event type's payload schema compiled by @exodus/schemasafe: for the
 * validators `--schemas` writes, and for `send --contract`, which checks an
 * event before it sends it.
 */
import type { Contract, ContractEvent } from './contract.js';
import { ContractError } from './contract-error.js';
import { loadPeer, SCHEMA_PEERS } from './peers.js';

type Schemasafe = typeof import('@exodus/schemasafe');

/** A compiled check: `errors` names where and which keyword failed, never the value. */
export type CompiledCheck = ReturnType<Schemasafe['validator']>;

// The base the contract gets as a schema, for the $refs into it.
const CONTRACT_ID = 'urn:svc-webhooks:contract';

/** Compiles the payload schema of each of `events` (every event of the contract by default). Throws `ContractError`. */
export async function compileChecks(contract: Contract, events: readonly ContractEvent[] = contract.events): Promise<CompiledCheck[]> {
  const { validator } = await loadPeer<Schemasafe>('@exodus/schemasafe', () => import('@exodus/schemasafe'), SCHEMA_PEERS);
  const document = { ...withNullable(contract.document), $id: CONTRACT_ID };
  return events.map((event) => {
    try {
      return validator(
        { $ref: `${CONTRACT_ID}${event.pointer}` },
        {
          schemas: { [CONTRACT_ID]: document as never },
          includeErrors: true,
          allErrors: true,
          // An OpenAPI schema carries keywords JSON Schema does not know (discriminator, example, xml).
          allowUnusedKeywords: true,
          // OpenAPI 3.1's dialect; "format" annotates there, and a contract may name formats of its own.
          $schemaDefault: 'https://json-schema.org/draft/2020-12/schema',
          formatAssertion: false,
        },
      );
    } catch (error) {
      throw new ContractError(`${event.pointer}: its schema cannot be compiled: ${(error as Error).message.split('\n')[0]}`);
    }
  });
}

/** Where a value failed `check`, as dotted paths from the root (`data.object.durationMs`). */
export function failedPaths(check: CompiledCheck): string[] {
  return (check.errors ?? []).map((error) => pathOf(error.instanceLocation).join('.') || '(the root)');
}

/** The parts of a JSON pointer written as a URI fragment (`#/data/object`). */
export function pathOf(instanceLocation: string): string[] {
  return instanceLocation
    .replace(/^#\/?/, '')
    .split('/')
    .filter((part) => part !== '')
    .map((part) => decodeURIComponent(part).replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** A copy of `document` where OpenAPI 3.0's `nullable: true` reads as JSON Schema's `type: [x, "null"]`. */
function withNullable(document: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(document), (_key, value: unknown) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
    const schema = value as Record<string, unknown>;
    if (schema.nullable !== true || typeof schema.type !== 'string') return value;
    const { nullable: _nullable, ...rest } = schema;
    return Array.isArray(schema.enum) ? { ...rest, type: [schema.type, 'null'], enum: [...schema.enum, null] } : { ...rest, type: [schema.type, 'null'] };
  }) as Record<string, unknown>;
}

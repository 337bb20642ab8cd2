/**
 * One event type's payload schema compiled by @exodus/schemasafe: for the
 * validators `--schemas` writes, and for `send --contract`, which checks an
 * event before it sends it.
 */
import { isRecord } from '../../base/record.js';
import { isUnboundedPattern, PATTERN_BOUND_CHARS, type Contract, type ContractEvent } from './contract.js';
import { ContractError } from './contract-error.js';
import { loadPeer, SCHEMA_INSTALL } from './peers.js';

type Schemasafe = typeof import('@exodus/schemasafe');

/** A compiled check: `errors` names where and which keyword failed, never the value. */
export type CompiledCheck = ReturnType<Schemasafe['validator']>;

// The base the contract gets as a schema, for the $refs into it.
const CONTRACT_ID = 'urn:svc-webhooks:contract';

/** Compiles the payload schema of each of `events` (every event of the contract by default). Throws `ContractError`. */
export async function compileChecks(contract: Contract, events: readonly ContractEvent[] = contract.events): Promise<CompiledCheck[]> {
  const { validator } = await loadPeer<Schemasafe>('@exodus/schemasafe', () => import('@exodus/schemasafe'), SCHEMA_INSTALL);
  const document = { ...forSchemasafe(contract.document), $id: CONTRACT_ID };
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
          // Equivalent: forSchemasafe has taken out every format, and one that is no string is refused either way.
          // Stryker disable next-line BooleanLiteral
          formatAssertion: false,
        },
      );
    } catch (error) {
      throw new ContractError(`${event.pointer}: its schema cannot be compiled: ${(error as Error).message.split('\n')[0]}`);
    }
  });
}

/** Where `value` failed `check`, as dotted paths from the root (`data.object.durationMs`). */
export function failedPaths(check: CompiledCheck, value: unknown): string[] {
  const slashes = new WeakMap<object, number>();
  return (check.errors ?? []).map((error) => pathOf(error.instanceLocation, value, slashes).join('.') || '(the root)');
}

/**
 * The keys of schemasafe's `instanceLocation` (`#/data/object`) in `value`.
 * schemasafe neither percent-encodes a key nor escapes its "/" (unless the
 * key also holds "~/"), so the location alone is ambiguous: the value's own
 * keys decide, the longest first. `slashes` remembers the most "/" a key of
 * each object holds. The generated module holds the same code.
 */
export function pathOf(instanceLocation: string, value: unknown, slashes = new WeakMap<object, number>()): string[] {
  // The parts after "#": none for the root.
  const parts = instanceLocation.split('/').slice(1);
  const path: string[] = [];
  let node = value;
  for (let start = 0; start < parts.length; ) {
    let end = Math.min(parts.length, start + 1 + mostSlashes(node, slashes));
    while (end > start + 1 && keyIn(node, parts.slice(start, end).join('/')) === undefined) end -= 1;
    const raw = parts.slice(start, end).join('/');
    const key = keyIn(node, raw) ?? unescaped(raw);
    path.push(key);
    node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined;
    start = end;
  }
  return path;
}

function mostSlashes(node: unknown, slashes: WeakMap<object, number>): number {
  if (!isRecord(node)) return 0;
  let most = slashes.get(node);
  if (most === undefined) {
    most = 0;
    for (const key of Object.keys(node)) most = Math.max(most, key.split('/').length - 1);
    slashes.set(node, most);
  }
  return most;
}

/** The key of `node` that the location's `raw` run of parts names, as written or unescaped. */
function keyIn(node: unknown, raw: string): string | undefined {
  if (typeof node !== 'object' || node === null) return undefined;
  if (Object.hasOwn(node, raw)) return raw;
  const key = unescaped(raw);
  return Object.hasOwn(node, key) ? key : undefined;
}

function unescaped(part: string): string {
  return part.replaceAll('~1', '/').replaceAll('~0', '~');
}

/**
 * A copy of `document` where OpenAPI 3.0's `nullable: true` reads as JSON
 * Schema's `type: [x, "null"]`, without `format`: an annotation in
 * 2020-12 that schemasafe 1.3 cannot leave unchecked (it refuses OpenAPI's
 * own int32 or password, and writes broken code for date-time), and with
 * `maxLength: PATTERN_BOUND_CHARS` beside a pattern that has none and may
 * cost more than its input: schemasafe checks the length first, and runs
 * no pattern on a string past it.
 */
function forSchemasafe(document: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(document), (_key, value: unknown) => {
    if (!isRecord(value)) return value;
    const { format, ...rest } = value;
    const formatless = typeof format === 'string' ? rest : value;
    const schema = isUnboundedPattern(formatless) ? { ...formatless, maxLength: PATTERN_BOUND_CHARS } : formatless;
    if (schema.nullable !== true || typeof schema.type !== 'string') return schema;
    const { nullable: _nullable, ...plain } = schema;
    return Array.isArray(schema.enum) ? { ...plain, type: [schema.type, 'null'], enum: [...schema.enum, null] } : { ...plain, type: [schema.type, 'null'] };
  }) as Record<string, unknown>;
}

/**
 * The validators `svc-webhooks types --schemas` writes: one Standard Schema
 * per event type, compiled from the contract's JSON Schemas by
 * @exodus/schemasafe into plain code. The module needs nothing at run time,
 * not even schemasafe.
 */
import type { Contract } from './contract.js';
import { ContractError } from './contract-error.js';
import { loadPeer, SCHEMA_PEERS } from './peers.js';
import { commentSafe, header, PACKAGE } from './type-module.js';

type Schemasafe = typeof import('@exodus/schemasafe');

// The base the contract gets as a schema, for the $refs into it.
const CONTRACT_ID = 'urn:svc-webhooks:contract';

/** The module's text; `typesModule` is the types module's specifier relative to it (`./webhook-types.js`). */
export async function schemaModule(contract: Contract, source: string, typesModule: string): Promise<string> {
  const { validator } = await loadPeer<Schemasafe>('@exodus/schemasafe', () => import('@exodus/schemasafe'), SCHEMA_PEERS);
  const document = { ...withNullable(contract.document), $id: CONTRACT_ID };
  const entries = contract.events.map((event) => {
    let check: ReturnType<typeof validator>;
    try {
      check = validator(
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
    return [`  /** ${commentSafe(event.pointer)} */`, `  ${JSON.stringify(event.type)}: standard(${check.toModule().trim().replace(/;$/, '')}),`].join('\n');
  });
  const types = contract.events.map((event) => JSON.stringify(event.type)).join(' | ');
  return `// @ts-nocheck: the validators are generated code; the exports are typed.
${header(source, 'Standard Schema validators for the event types')}
import type { KnownEventMap, StandardSchema, StandardSchemaIssue } from ${PACKAGE};
import type {} from ${JSON.stringify(typesModule)};

/** The event types the contract describes. */
export type ContractEventType = ${types};

/** A Standard Schema per event type of the contract: pass those of the types you handle as \`schemas\`, through \`schemasFor(on)\`. */
export type ContractSchemas = { readonly [T in ContractEventType]: StandardSchema<unknown, KnownEventMap[T]> };

type Check = ((value: unknown) => boolean) & { errors?: readonly { readonly keywordLocation: string; readonly instanceLocation: string }[] | null };

function standard(check: Check): StandardSchema<unknown, never> {
  return {
    '~standard': {
      version: 1,
      vendor: 'svc-webhooks',
      validate(value: unknown) {
        if (check(value)) return { value };
        return { issues: (check.errors ?? []).map(issueOf) };
      },
    },
  };
}

// Where and which keyword, never the value: the paths reach logs and answers.
function issueOf(error: { readonly keywordLocation: string; readonly instanceLocation: string }): StandardSchemaIssue {
  const keyword = error.keywordLocation.slice(error.keywordLocation.lastIndexOf('/') + 1);
  const path = error.instanceLocation
    .replace(/^#\\/?/, '')
    .split('/')
    .filter((part) => part !== '')
    .map((part) => decodeURIComponent(part).replaceAll('~1', '/').replaceAll('~0', '~'));
  return { message: \`fails "\${keyword}"\`, path };
}

/** Every event type's schema. */
export const schemas: ContractSchemas = {
${entries.join('\n')}
};

/** The schemas of the types \`on\` has a handler for, as \`schemas\` takes them: \`{ on, schemas: schemasFor(on) }\`. */
export function schemasFor<O extends object>(on: O): Pick<ContractSchemas, keyof O & ContractEventType> {
  const picked = {};
  for (const type of Object.keys(on)) if (Object.hasOwn(schemas, type)) picked[type] = schemas[type];
  return picked;
}
`;
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

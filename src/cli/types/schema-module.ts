/**
 * The validators `svc-webhooks types --schemas` writes: one Standard Schema
 * per event type, compiled from the contract's JSON Schemas by
 * @exodus/schemasafe into plain code. The module needs nothing at run time,
 * not even schemasafe.
 */
import type { Contract } from '../shared/contract.js';
import { commentSafe, header, PACKAGE } from './type-module.js';
import { compileChecks } from '../shared/validator.js';

/** The module's text; `typesModule` is the types module's specifier relative to it (`./webhook-types.js`). */
export async function schemaModule(contract: Contract, source: string, typesModule: string): Promise<string> {
  const checks = await compileChecks(contract);
  const entries = contract.events.map((event, n) =>
    [`  /** ${commentSafe(event.pointer)} */`, `  ${JSON.stringify(event.type)}: standard(${checks[n]!.toModule().trim().replace(/;$/, '')}),`].join('\n'),
  );
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

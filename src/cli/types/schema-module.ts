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
        const slashes = new WeakMap();
        return { issues: (check.errors ?? []).map((error) => issueOf(error, value, slashes)) };
      },
    },
  };
}

// Where and which keyword, never the value: the paths reach logs and answers.
function issueOf(error: { readonly keywordLocation: string; readonly instanceLocation: string }, value: unknown, slashes: WeakMap<object, number>): StandardSchemaIssue {
  const keyword = error.keywordLocation.slice(error.keywordLocation.lastIndexOf('/') + 1);
  return { message: \`fails "\${keyword}"\`, path: pathOf(error.instanceLocation, value, slashes) };
}

// The keys of the location in the value: the location neither percent-encodes a key nor escapes its "/", so the value's keys decide, the longest first.
function pathOf(location: string, value: unknown, slashes: WeakMap<object, number>): string[] {
  const parts = location.split('/').slice(1);
  const path = [];
  let node = value;
  for (let start = 0; start < parts.length; ) {
    let end = Math.min(parts.length, start + 1 + mostSlashes(node, slashes));
    while (end > start + 1 && keyIn(node, parts.slice(start, end).join('/')) === undefined) end -= 1;
    const raw = parts.slice(start, end).join('/');
    const key = keyIn(node, raw) ?? unescaped(raw);
    path.push(key);
    node = typeof node === 'object' && node !== null ? node[key] : undefined;
    start = end;
  }
  return path;
}

function mostSlashes(node: unknown, slashes: WeakMap<object, number>): number {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return 0;
  let most = slashes.get(node);
  if (most === undefined) {
    most = 0;
    for (const key of Object.keys(node)) most = Math.max(most, key.split('/').length - 1);
    slashes.set(node, most);
  }
  return most;
}

function keyIn(node: unknown, raw: string): string | undefined {
  if (typeof node !== 'object' || node === null) return undefined;
  if (Object.hasOwn(node, raw)) return raw;
  const key = unescaped(raw);
  return Object.hasOwn(node, key) ? key : undefined;
}

function unescaped(part: string): string {
  return part.replaceAll('~1', '/').replaceAll('~0', '~');
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

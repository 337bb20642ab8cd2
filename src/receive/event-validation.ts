/** Runs an event's schema and names where it failed, never what it found there. */
import type { StandardSchema, StandardSchemaIssue } from './standard-schema.js';

/** The most paths one answer names: enough to fix a schema, bounded whatever the event holds. */
export const MAX_REPORTED_PATHS = 20;

export type ValidationOutcome = { readonly valid: true; readonly value: unknown } | { readonly valid: false; readonly paths: readonly string[] };

/** Validates `event` with `schema`. A schema that throws, rejects or answers nonsense rejects. */
export async function validateEvent(schema: StandardSchema, event: unknown): Promise<ValidationOutcome> {
  const result = await schema['~standard'].validate(event);
  if (result.issues === undefined) return { valid: true, value: result.value };
  // The libraries' messages may quote the value (valibot: 'Invalid type: Expected string but received 42'): keep paths only.
  const paths = [...new Set(result.issues.map(issuePath))];
  return { valid: false, paths: paths.slice(0, MAX_REPORTED_PATHS) };
}

/** A path in JSONPath notation from the event's root: `$.data.object.items[0]`, `$["odd key"]`. */
function issuePath(issue: StandardSchemaIssue): string {
  let path = '$';
  for (const segment of issue.path ?? []) {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment;
    if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) path += `.${key}`;
    else path += `[${typeof key === 'string' ? JSON.stringify(key) : String(key)}]`;
  }
  return path;
}

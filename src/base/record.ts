/** Telling an object with fields from the other things JSON and options hold: `null`, arrays, strings, numbers. */

/** Whether `value` is an object with fields: not `null`, and not an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

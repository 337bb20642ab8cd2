/**
 * Header lookup over the three shapes receivers hold: a Fetch `Headers`,
 * Node's `IncomingHttpHeaders` (lower-case keys, arrays for repeats) and a
 * plain record whose key case is whatever the platform chose.
 */

/** Headers read by name, as a Fetch `Headers` reads them. */
export interface HeaderGetter {
  /** The value of header `name` (asked in lower case), repeats joined; `null` when absent. */
  get(name: string): string | null;
}

/** Headers as a record: Node's `IncomingHttpHeaders` (arrays for repeats), or one whose key case is the platform's. */
export type HeaderRecord = Readonly<Record<string, string | readonly string[] | undefined>>;

/** Anything `verify()` accepts as request headers. */
export type WebhookHeaders = HeaderGetter | HeaderRecord;

/**
 * The value of header `name` (given in lower case), or `undefined` if it is
 * absent or empty. Repeated values are joined with `separator`.
 */
export function readHeader(headers: WebhookHeaders | null | undefined, name: string, separator: string): string | undefined {
  if (headers === null || typeof headers !== 'object') return undefined;
  let value: unknown;
  if (typeof (headers as HeaderGetter).get === 'function') {
    value = (headers as HeaderGetter).get(name);
  } else {
    const record = headers as HeaderRecord;
    value = record[name];
    if (value === undefined) value = record[findKey(record, name) ?? name];
  }
  if (Array.isArray(value)) value = value.join(separator);
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function findKey(record: HeaderRecord, name: string): string | undefined {
  for (const key of Object.keys(record)) {
    // The length check only spares a lowercase copy of keys that cannot match.
    // Stryker disable next-line ConditionalExpression
    if (key.length === name.length && key.toLowerCase() === name) return key;
  }
  return undefined;
}

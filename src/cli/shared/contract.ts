/**
 * The service's OpenAPI contract as the command line reads it (`types`,
 * `send --contract`): parsed and bundled by Redocly's openapi-core (every
 * `$ref` followed, a broken one refused), then each webhook's JSON payload
 * and the event type it carries.
 */
import { isEventTypeName } from '../../core/event.js';
import { ContractError } from './contract-error.js';
import { loadPeer } from './peers.js';

type RedoclyCore = typeof import('@redocly/openapi-core');

/** One webhook of the contract whose payload is JSON. */
export interface ContractEvent {
  /** The event type: the payload's `type` when the schema fixes it (`const`, or one `enum` value), else the webhook's name. */
  readonly type: string;
  /** The webhook's name in the `webhooks` section. */
  readonly name: string;
  /** The operation that carries it: `post` unless the contract says otherwise. */
  readonly method: string;
  /** The payload's media type: `application/json`, or another JSON one. */
  readonly mediaType: string;
  /** Where the payload's schema is in the bundled document, as a JSON pointer. */
  readonly pointer: string;
}

/** The contract, bundled, with its webhooks. */
export interface Contract {
  /** The bundled document: one object, every `$ref` internal. */
  readonly document: Record<string, unknown>;
  readonly events: readonly ContractEvent[];
  /** What the user should hear, each naming where in the contract. */
  readonly warnings: readonly string[];
}

const METHODS = ['post', 'put', 'patch'] as const;

/** Reads and bundles the contract at `location` (a path or a `file:` URL). Throws `ContractError`. */
export async function readContract(location: string | URL): Promise<Contract> {
  const redocly = await loadPeer<RedoclyCore>('@redocly/openapi-core', () => import('@redocly/openapi-core'));
  const config = await redocly.createConfig({}, {});
  let bundled: Awaited<ReturnType<RedoclyCore['bundle']>>;
  try {
    bundled = await redocly.bundle({ ref: String(location), config, dereference: false });
  } catch (error) {
    // The file's name, never the rest of its path.
    throw new ContractError(`${nameOf(location)} cannot be read: ${firstLine(error).replaceAll(String(location), nameOf(location))}`);
  }
  const broken = bundled.problems.find((problem) => problem.severity === 'error');
  if (broken !== undefined) {
    const where = broken.location[0]?.pointer;
    throw new ContractError(`${nameOf(location)}: ${broken.message}${where === undefined ? '' : ` at ${where}`}`);
  }
  const document = bundled.bundle.parsed;
  if (!isRecord(document)) throw new ContractError(`${nameOf(location)} is not an OpenAPI document`);
  const { webhooks } = document;
  if (!isRecord(webhooks) || Object.keys(webhooks).length === 0) {
    throw new ContractError(`${nameOf(location)} has no webhooks section: it describes no event (OpenAPI 3.1 "webhooks")`);
  }
  const found = eventsOf(document, webhooks);
  // What is left out is left out of the generators too: openapi-typescript fails on a webhook that is no object.
  const kept = Object.fromEntries(found.events.map((event) => [event.name, webhooks[event.name]]));
  return { document: { ...document, webhooks: kept }, ...found };
}

function eventsOf(document: Record<string, unknown>, webhooks: Record<string, unknown>): Pick<Contract, 'events' | 'warnings'> {
  const events: ContractEvent[] = [];
  const warnings: string[] = [];
  const byType = new Map<string, string>();
  for (const [name, item] of Object.entries(webhooks)) {
    const found = payloadOf(name, item);
    if (found === undefined) {
      warnings.push(`${webhookPointer(name)} has no JSON request body: left out`);
      continue;
    }
    const schema = resolved(document, found.schema);
    const type = fixedType(document, schema) ?? name;
    const event: ContractEvent = { type, name, method: found.method, mediaType: found.mediaType, pointer: found.pointer };
    const other = byType.get(type);
    if (other !== undefined) throw new ContractError(`webhooks "${other}" and "${name}" both describe the event type ${JSON.stringify(type)}`);
    byType.set(type, name);
    if (!isEventTypeName(type)) {
      warnings.push(`${event.pointer}: the event type ${JSON.stringify(type)} is not written as one (lower-case words joined by dots): a handler for it is refused at run time`);
    }
    const missing = envelopeGaps(document, schema);
    if (missing.length > 0) warnings.push(`${event.pointer} does not require the envelope's ${missing.join(', ')}: generated with the envelope added`);
    events.push(event);
  }
  return { events, warnings };
}

function payloadOf(name: string, item: unknown): { method: string; mediaType: string; schema: unknown; pointer: string } | undefined {
  if (!isRecord(item)) return undefined;
  for (const method of METHODS) {
    const content = record(record(item[method])?.requestBody)?.content;
    if (!isRecord(content)) continue;
    // The first JSON media type that has a schema.
    const mediaType = Object.keys(content).find((key) => /^application\/(?:[\w.+-]+\+)?json\b/i.test(key) && record(content[key])?.schema !== undefined);
    const schema = mediaType === undefined ? undefined : record(content[mediaType])!.schema;
    if (mediaType !== undefined) {
      return { method, mediaType, schema, pointer: `${webhookPointer(name)}/${method}/requestBody/content/${escapePointer(mediaType)}/schema` };
    }
  }
  return undefined;
}

/** The type a payload schema fixes: its `type` property's `const`, or its only `enum` value. */
function fixedType(document: Record<string, unknown>, schema: Record<string, unknown> | undefined): string | undefined {
  const type = resolved(document, record(schema?.properties)?.type);
  if (typeof type?.const === 'string') return type.const;
  const values = type?.enum;
  return Array.isArray(values) && values.length === 1 && typeof values[0] === 'string' ? values[0] : undefined;
}

/** The envelope's fields (spec section 2) the schema does not require as strings. */
function envelopeGaps(document: Record<string, unknown>, schema: Record<string, unknown> | undefined): string[] {
  const gaps: string[] = [];
  if (!requiresString(document, schema, 'id')) gaps.push('"id"');
  if (!requiresString(document, schema, 'type')) gaps.push('"type"');
  const data = requiredObject(document, schema, 'data');
  if (!requiresString(document, requiredObject(document, data, 'object'), 'id')) gaps.push('"data.object.id"');
  return gaps;
}

function requiredObject(document: Record<string, unknown>, schema: Record<string, unknown> | undefined, field: string): Record<string, unknown> | undefined {
  const required = Array.isArray(schema?.required) && schema.required.includes(field);
  return required ? resolved(document, record(schema?.properties)?.[field]) : undefined;
}

function requiresString(document: Record<string, unknown>, schema: Record<string, unknown> | undefined, field: string): boolean {
  const property = requiredObject(document, schema, field);
  if (property === undefined) return false;
  const { type } = property;
  return type === 'string' || typeof property.const === 'string' || (type === undefined && Array.isArray(property.enum) && property.enum.every((one) => typeof one === 'string'));
}

/** A schema with its `$ref` followed (internal ones: the bundle has no other), or `undefined`. */
function resolved(document: Record<string, unknown>, schema: unknown, depth = 0): Record<string, unknown> | undefined {
  const object = record(schema);
  const ref = object?.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/') || depth > 32) return object;
  let target: unknown = document;
  for (const part of ref.slice(2).split('/')) target = record(target)?.[part.replaceAll('~1', '/').replaceAll('~0', '~')];
  return resolved(document, target, depth + 1);
}

/** A JSON pointer to the webhook `name`. */
function webhookPointer(name: string): string {
  return `#/webhooks/${escapePointer(name)}`;
}

function escapePointer(part: string): string {
  return part.replaceAll('~', '~0').replaceAll('/', '~1');
}

function record(value: unknown): Record<string, unknown> | undefined {
  return isRecord(value) ? value : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The contract's file name, for a message: never the rest of a path, which may be long. */
export function nameOf(location: string | URL): string {
  const text = String(location);
  return text.slice(text.lastIndexOf('/') + 1) || text;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.trim();
}

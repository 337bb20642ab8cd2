/**
 * The service's OpenAPI contract as the command line reads it (`types`,
 * `send --contract`): parsed and bundled by Redocly's openapi-core (every
 * `$ref` followed, a broken one refused, none fetched from the network, none
 * read outside the contract's folder), then each webhook's JSON payload and
 * the event type it carries.
 */
import { Buffer } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isRecord } from '../../base/record.js';
import { isEventTypeName } from '../../core/event.js';
import { UsageError } from './args.js';
import { ContractError } from './contract-error.js';
import { loadPeer } from './peers.js';

type RedoclyCore = typeof import('@redocly/openapi-core');
type Resolver = InstanceType<RedoclyCore['BaseResolver']>;

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

/** The largest file of the contract read (the contract or one its `$ref`s name): far above any real contract. */
export const MAX_CONTRACT_BYTES = 10 * 1024 * 1024;
/**
 * The longest string the validators run a pattern on that has no `maxLength` and whose cost can grow faster than
 * its input: a longer one fails as past `maxLength`, before the pattern runs. A signed event carries end users'
 * text (an SMS), and such a pattern can take seconds on a string of 30 characters, minutes on a longer one.
 */
export const PATTERN_BOUND_CHARS = 4096;
/** The most values one file of the contract may hold once its YAML aliases are expanded: a 10 MiB file without aliases holds fewer. */
const MAX_CONTRACT_VALUES = 6_000_000;

/** The contract's path from a command's argument: a file path, or a `file:` URL. Another URL is a usage error: the commands read no network. */
export function contractPath(argument: string, what = '<contract>'): string {
  if (/^file:/i.test(argument)) {
    try {
      return fileURLToPath(argument);
    } catch (error) {
      // A host other than localhost, an encoded "/" or a bad escape: Node's message says which.
      throw new UsageError(`${what} is not a local file: URL: ${firstLine(error)}`);
    }
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(argument)) throw new UsageError(`${what} must be a local file or a file: URL; download the contract first`);
  return argument;
}

/** Reads and bundles the contract at `location` (a path or a `file:` URL). Throws `ContractError`. */
export async function readContract(location: string | URL): Promise<Contract> {
  const redocly = await loadPeer<RedoclyCore>('@redocly/openapi-core', () => import('@redocly/openapi-core'));
  const config = await redocly.createConfig({}, {});
  const resolver = localResolver(redocly, location instanceof URL ? fileURLToPath(location) : location);
  let bundled: Awaited<ReturnType<RedoclyCore['bundle']>>;
  try {
    bundled = await redocly.bundle({ ref: String(location), config, dereference: false, externalRefResolver: resolver });
  } catch (error) {
    if (resolver.refusal !== undefined) throw resolver.refusal;
    // The file's name, never the rest of its path.
    throw new ContractError(`${nameOf(location)} cannot be read: ${firstLine(error).replaceAll(String(location), nameOf(location))}`);
  }
  // Redocly tells a refused $ref as one it cannot resolve; the refusal says why.
  if (resolver.refusal !== undefined) throw resolver.refusal;
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
  found.warnings.push(...unboundedPatterns(document).map((pointer) => `${pointer}: a pattern without maxLength: the validators refuse a string past ${PATTERN_BOUND_CHARS.toLocaleString('en')} characters before they run it; give the field a maxLength (and the pattern no nested quantifier: one may take seconds on 30 characters)`));
  if (found.events.length === 0) {
    // The warnings would go unheard: they say why.
    throw new ContractError(`${nameOf(location)} describes no event it can use: ${found.warnings.join('; ')}`);
  }
  // What is left out is left out of the generators too: openapi-typescript fails on a webhook that is no object.
  // A path item behind a $ref is put in its place: openapi-typescript renders a webhook's $ref as an empty path item.
  const kept = Object.fromEntries(found.events.map((event) => [event.name, followed(document, webhooks[event.name]).node]));
  return { document: { ...document, webhooks: kept }, ...found };
}

/**
 * Redocly's resolver, held to the local files of the contract: a `$ref` is read only inside the contract's own
 * folder once links are resolved (a contract is outside input: a `$ref` to `../.env` or `/proc/self/environ`
 * would copy a secret into the generated module), only from a regular file, and each file bounded in bytes as
 * it is read and in its expanded YAML aliases; no URL fetched.
 */
function localResolver(redocly: RedoclyCore, root: string): Resolver & { refusal?: ContractError } {
  const rootFile = resolve(root);
  const rootFolder = dirname(rootFile);
  let folder: Promise<string> | undefined;
  class LocalResolver extends redocly.BaseResolver {
    /** The first file refused, told after the bundle whatever Redocly made of it. */
    refusal?: ContractError;

    private refuse(message: string): never {
      this.refusal ??= new ContractError(message);
      throw this.refusal;
    }

    override async loadExternalRef(absoluteRef: string): ReturnType<Resolver['loadExternalRef']> {
      if (/^https?:/i.test(absoluteRef)) this.refuse(`the $ref ${absoluteRef} is a URL: the command reads no network; download it and refer to the file`);
      // Missing: Redocly's own message names it.
      const real = await realpath(absoluteRef).catch(() => undefined);
      if (real === undefined) return super.loadExternalRef(absoluteRef);
      const inside = relative(await (folder ??= realpath(rootFolder)), real);
      if (absoluteRef !== rootFile && (inside.startsWith('..') || isAbsolute(inside))) {
        this.refuse(`the $ref to ${shownFrom(rootFolder, absoluteRef)} leaves the contract's folder: only the files in it and its subfolders are read`);
      }
      const stats = await stat(real);
      // A folder: Redocly's own message names it.
      if (stats.isDirectory()) return super.loadExternalRef(absoluteRef);
      if (!stats.isFile()) this.refuse(`${nameOf(absoluteRef)} is not a file`);
      if (stats.size > MAX_CONTRACT_BYTES) this.refuse(tooLarge(absoluteRef));
      // Counted as it is read: a file may say it is smaller than it is (those of /proc say 0).
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of createReadStream(real) as AsyncIterable<Buffer>) {
        size += chunk.byteLength;
        if (size > MAX_CONTRACT_BYTES) this.refuse(tooLarge(absoluteRef));
        chunks.push(chunk);
      }
      // As Redocly reads a file: a Windows line end is one line end.
      return new redocly.Source(absoluteRef, Buffer.concat(chunks, size).toString('utf8').replace(/\r\n/g, '\n'));
    }

    override parseDocument(...args: Parameters<Resolver['parseDocument']>): ReturnType<Resolver['parseDocument']> {
      const parsed = super.parseDocument(...args);
      // The parser shares an aliased node; what walks the document after it (the bundle, the generators) expands it.
      if (expandedSize(parsed.parsed, new Map()) > MAX_CONTRACT_VALUES) {
        this.refuse(`${nameOf(args[0].absoluteRef)} expands to more than ${MAX_CONTRACT_VALUES.toLocaleString('en')} values through its YAML aliases: that is no contract`);
      }
      return parsed;
    }
  }
  return new LocalResolver();
}

function tooLarge(file: string): string {
  return `${nameOf(file)} is larger than ${MAX_CONTRACT_BYTES / 1024 / 1024} MiB: that is no contract`;
}

/** `file` as the contract's folder sees it: relative to it, or absolute where that is shorter (`/etc/passwd`). */
function shownFrom(folder: string, file: string): string {
  const relativePath = relative(folder, file);
  return relativePath.length <= file.length ? relativePath : file;
}

/** How many values `value` holds with each shared node counted wherever it appears; `sizes` remembers each node once. */
function expandedSize(value: unknown, sizes: Map<object, number>): number {
  if (typeof value !== 'object' || value === null) return 1;
  const known = sizes.get(value);
  if (known !== undefined) return known;
  // A node inside itself is infinite.
  sizes.set(value, Infinity);
  let size = 1;
  for (const child of Object.values(value)) size += expandedSize(child, sizes);
  sizes.set(value, size);
  return size;
}

/**
 * Whether `schema` has a pattern without `maxLength` whose cost can grow faster than its input: two quantifiers,
 * a quantified group, or an unanchored start (the test of @exodus/schemasafe's complexity checks), read with
 * each character class and escaped character as one literal, so that `^\+[0-9]{1,14}$` is not one.
 */
export function isUnboundedPattern(schema: Record<string, unknown>): boolean {
  const { pattern } = schema;
  if (typeof pattern !== 'string' || schema.maxLength !== undefined) return false;
  const shape = pattern.replace(/\[(?:[^\]\\]|\\.)*\]/g, 'x').replace(/\\./g, 'x');
  return /([{+*].*[{+*]|\)[{+*]|^[^^].*[{+*].)/.test(shape);
}

/** The pointers of the schemas of `document` with an unbounded pattern, examples left out, at most 64 levels deep. */
function unboundedPatterns(document: Record<string, unknown>): string[] {
  const found: string[] = [];
  const visit = (node: unknown, pointer: string, depth: number): void => {
    if (!isRecord(node) || depth > 64) return;
    if (isUnboundedPattern(node)) found.push(pointer);
    for (const [key, value] of Object.entries(node)) {
      if (key !== 'example' && key !== 'examples') visit(value, `${pointer}/${escapePointer(key)}`, depth + 1);
    }
  };
  visit(document, '#', 0);
  return found;
}

function eventsOf(document: Record<string, unknown>, webhooks: Record<string, unknown>): { events: ContractEvent[]; warnings: string[] } {
  const events: ContractEvent[] = [];
  const warnings: string[] = [];
  const byType = new Map<string, string>();
  for (const [name, item] of Object.entries(webhooks)) {
    const found = payloadOf(document, name, item);
    if (found === undefined) {
      warnings.push(`${webhookPointer(name)} has no JSON request body: left out`);
      continue;
    }
    const schema = parts(document, found.schema);
    const type = fixedType(document, schema) ?? name;
    const event: ContractEvent = { type, name, method: found.method, mediaType: found.mediaType, pointer: found.pointer };
    const other = byType.get(type);
    if (other !== undefined) throw new ContractError(`webhooks "${other}" and "${name}" both describe the event type ${JSON.stringify(type)}`);
    byType.set(type, name);
    // Such a key of ContractEventMap would name a type no handler can take.
    if (!isEventTypeName(type)) {
      warnings.push(`${event.pointer}: the event type ${JSON.stringify(type)} is not written as one (lower-case words joined by dots): left out, since a handler for it is refused at run time`);
      continue;
    }
    const missing = envelopeGaps(document, schema);
    if (missing.length > 0) warnings.push(`${event.pointer} does not require the envelope's ${missing.join(', ')}: generated with the envelope added`);
    events.push(event);
  }
  return { events, warnings };
}

/** The webhook's payload: the path item, the operation and the request body each may be a `$ref`, and the pointer is where the schema is. */
function payloadOf(document: Record<string, unknown>, name: string, item: unknown): { method: string; mediaType: string; schema: unknown; pointer: string } | undefined {
  const path = followed(document, item, webhookPointer(name));
  for (const method of METHODS) {
    const operation = followed(document, path.node?.[method], `${path.pointer}/${method}`);
    const body = followed(document, operation.node?.requestBody, `${operation.pointer}/requestBody`);
    const content = body.node?.content;
    if (!isRecord(content)) continue;
    // The first JSON media type that has a schema.
    const mediaType = Object.keys(content).find((key) => /^application\/(?:[\w.+-]+\+)?json\b/i.test(key) && record(content[key])?.schema !== undefined);
    if (mediaType !== undefined) {
      return { method, mediaType, schema: record(content[mediaType])!.schema, pointer: `${body.pointer}/content/${escapePointer(mediaType)}/schema` };
    }
  }
  return undefined;
}

/** The type a payload schema fixes: its `type` property's `const`, or its only `enum` value, in any of its `allOf` parts. */
function fixedType(document: Record<string, unknown>, schema: readonly Record<string, unknown>[]): string | undefined {
  for (const type of propertyParts(document, schema, 'type')) {
    if (typeof type.const === 'string') return type.const;
    const values = type.enum;
    if (Array.isArray(values) && values.length === 1 && typeof values[0] === 'string') return values[0];
  }
  return undefined;
}

/** The envelope's fields (spec section 2) the schema does not require as strings. */
function envelopeGaps(document: Record<string, unknown>, schema: readonly Record<string, unknown>[]): string[] {
  const gaps: string[] = [];
  if (!requiresString(document, schema, 'id')) gaps.push('"id"');
  if (!requiresString(document, schema, 'type')) gaps.push('"type"');
  const data = requiredObject(document, schema, 'data');
  if (!requiresString(document, requiredObject(document, data, 'object'), 'id')) gaps.push('"data.object.id"');
  return gaps;
}

/** The parts of `field`'s schema when one part of `schema` requires it, else none: `allOf` lets one part require what another describes. */
function requiredObject(document: Record<string, unknown>, schema: readonly Record<string, unknown>[], field: string): Record<string, unknown>[] {
  const required = schema.some((part) => Array.isArray(part.required) && part.required.includes(field));
  return required ? propertyParts(document, schema, field) : [];
}

function requiresString(document: Record<string, unknown>, schema: readonly Record<string, unknown>[], field: string): boolean {
  return requiredObject(document, schema, field).some(({ type, const: fixed, enum: values }) => {
    return type === 'string' || typeof fixed === 'string' || (type === undefined && Array.isArray(values) && values.every((one) => typeof one === 'string'));
  });
}

/** The parts of the schema of `field` in each part of `schema`. */
function propertyParts(document: Record<string, unknown>, schema: readonly Record<string, unknown>[], field: string): Record<string, unknown>[] {
  return schema.flatMap((part) => parts(document, record(part.properties)?.[field]));
}

/** A schema and every schema its `allOf` holds, nested ones too, each with its `$ref` followed: what a value must fit all of. */
function parts(document: Record<string, unknown>, schema: unknown, depth = 0): Record<string, unknown>[] {
  const object = followed(document, schema).node;
  if (object === undefined || depth > 32) return [];
  const all = Array.isArray(object.allOf) ? object.allOf : [];
  return [object, ...all.flatMap((one) => parts(document, one, depth + 1))];
}

/** A node with its `$ref` followed (internal ones: the bundle has no other), and the pointer to where it is. */
function followed(document: Record<string, unknown>, value: unknown, pointer = '', depth = 0): { node: Record<string, unknown> | undefined; pointer: string } {
  const object = record(value);
  const ref = object?.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/') || depth > 32) return { node: object, pointer };
  let target: unknown = document;
  for (const part of ref.slice(2).split('/')) target = record(target)?.[part.replaceAll('~1', '/').replaceAll('~0', '~')];
  return followed(document, target, ref, depth + 1);
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

/** The contract's file name, for a message: never the rest of a path, which may be long. */
export function nameOf(location: string | URL): string {
  const text = String(location);
  return text.slice(text.lastIndexOf('/') + 1) || text;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.trim();
}

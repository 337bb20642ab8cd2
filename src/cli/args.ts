import { parseArgs, type ParseArgsConfig } from 'node:util';
import { decodeSecret } from '../core/secret.js';

/** A mistake on the command line: the command prints it with a pointer to its help and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;
type Parsed<T extends OptionsConfig> = ReturnType<typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>>;

/** Parses a command's arguments strictly: an unknown option or a missing value is a `UsageError`. */
export function parseCommandArgs<const T extends OptionsConfig>(args: readonly string[], options: T): Parsed<T> {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    if ((error as { code?: unknown }).code?.toString().startsWith('ERR_PARSE_ARGS')) throw new UsageError((error as Error).message);
    throw error;
  }
}

/** The one positional a command takes, by its name in the usage line. */
export function onePositional(positionals: readonly string[], name: string): string {
  if (positionals.length !== 1) {
    throw new UsageError(positionals.length === 0 ? `${name} is missing` : `unexpected arguments: ${positionals.slice(1).join(' ')}`);
  }
  return positionals[0]!;
}

/** Refuses positionals where a command takes none. */
export function noPositionals(positionals: readonly string[]): void {
  if (positionals.length > 0) throw new UsageError(`unexpected arguments: ${positionals.join(' ')}`);
}

/** A required option's value. */
export function required<V>(value: V | undefined, option: string): V {
  if (value === undefined) throw new UsageError(`--${option} is required`);
  return value;
}

/** A whole number of at least `min`, from an option's text. */
export function wholeNumber(text: string, option: string, min = 0): number {
  const value = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= min)) throw new UsageError(`--${option} must be a whole number of at least ${min}, not "${text}"`);
  return value;
}

/** An http(s) URL to deliver to. */
export function receiverUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`not a URL: ${text}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`the URL must be http or https: ${text}`);
  return url.href;
}

/** Secrets given with --secret, each checked as the core will read it. */
export function secrets(values: readonly string[] | undefined): string[] {
  const list = required(values, 'secret');
  for (const secret of list) {
    try {
      decodeSecret(secret);
    } catch (error) {
      throw new UsageError((error as Error).message.replace(/^svc-webhooks: /, '--secret: '));
    }
  }
  return [...list];
}

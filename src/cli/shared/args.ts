/**
 * The command line's arguments: parsing, the usage error, and the checks every command shares (secrets, a
 * receiver's URL, whole numbers).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { decodeSecret } from '../../core/secret.js';

/**
 * A mistake on the command line: the command prints it with a pointer to its
 * help and exits 2. Its message never quotes what may be a secret: a
 * `whsec_` secret anywhere in it is masked, and the messages below name
 * arguments by place rather than echo them.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';

  constructor(message: string) {
    super(message.replace(/whsec_[A-Za-z0-9+/=]+/g, 'whsec_…'));
  }
}

/** The environment variable a secret is read from when no --secret is given: out of shell history and `ps`. */
export const SECRET_VARIABLE = 'WEBHOOK_SECRET';

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
    throw new UsageError(positionals.length === 0 ? `${name} is missing` : unexpected(positionals.length - 1, `after ${name}`));
  }
  return positionals[0]!;
}

/** Refuses positionals where a command takes none. */
export function noPositionals(positionals: readonly string[]): void {
  if (positionals.length > 0) throw new UsageError(unexpected(positionals.length, 'where this command takes none'));
}

/** Stray arguments, counted, never shown: one of them may be a secret given without --secret. */
function unexpected(count: number, where: string): string {
  return `${count} unexpected argument${count === 1 ? '' : 's'} ${where} (not shown, in case one is a secret: give a secret with --secret or ${SECRET_VARIABLE})`;
}

/** A required option's value. */
export function required<V>(value: V | undefined, option: string): V {
  if (value === undefined) throw new UsageError(`--${option} is required`);
  return value;
}

/** A whole number of at least `min`, and at most `max` when given, from an option's text. */
export function wholeNumber(text: string, option: string, min = 0, max?: number): number {
  const value = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (max !== undefined && !(value >= min && value <= max)) throw new UsageError(`--${option} must be a whole number from ${min} to ${max}`);
  if (!(value >= min)) throw new UsageError(`--${option} must be a whole number of at least ${min}`);
  return value;
}

/**
 * An http(s) URL to deliver to, with no credentials in it. Errors never echo
 * the text: a secret given in place of the URL would be printed otherwise.
 */
export function receiverUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError("the first argument is not a URL: give the receiver's http(s) URL there");
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('the URL must be http or https');
  if (url.username !== '' || url.password !== '') {
    throw new UsageError('the URL carries a user name or password: give the receiver\'s URL without credentials');
  }
  return url.href;
}

/** Secrets given with --secret, else the one in `WEBHOOK_SECRET`; each checked as the core will read it. */
export function secrets(values: readonly string[] | undefined, env: NodeJS.ProcessEnv = process.env): string[] {
  const fromEnv = env[SECRET_VARIABLE];
  const list = values ?? (fromEnv === undefined || fromEnv === '' ? undefined : [fromEnv]);
  if (list === undefined) throw new UsageError(`--secret is required (or set ${SECRET_VARIABLE})`);
  for (const secret of list) {
    try {
      decodeSecret(secret);
    } catch (error) {
      throw new UsageError((error as Error).message.replace(/^svc-webhooks: /, '--secret: '));
    }
  }
  return [...list];
}

/**
 * What an operator should know of a dedup store's failure, for one log line:
 * what failed, told without secrets, and what to do where the cause is known.
 * Reads the errors of pg, postgres.js, ioredis and node-redis by their codes,
 * reply prefixes and class names, without importing any of them.
 */
import { errorChain } from './error-chain.js';

/** The longest message kept in a log line; longer ones are cut. */
const MAX_MESSAGE_LENGTH = 200;

/** What to do, by the `code` a client gives: Postgres' SQLSTATE, or Node's for a socket. */
const BY_CODE: Readonly<Record<string, string>> = {
  '42P01':
    "The store's table does not exist: run migrateProcessedEvents() (markProcessed's table) or store.migrate() (PostgresDedupStore) once, " +
    'or apply sql/svc-webhooks-postgres.sql.',
  '3D000': 'The database named in the connection settings does not exist: create it, or correct the database name.',
  '28P01': 'Postgres refused the password: check the user and password the client connects with.',
  '28000':
    "Postgres refused the login (no such role, or no pg_hba.conf entry lets it in): check the user and the server's pg_hba.conf.",
  ECONNREFUSED: "Nothing accepts connections at the store's address: check that the server runs and that the host and port point to it.",
};

const REDIS_ACL_HINT =
  "The Redis user's ACL denies a command or key the store uses: allow EVALSHA, EVAL, GET, SET, DEL and PEXPIRE " +
  'on the keys under keyPrefix, e.g. ACL SETUSER <user> +evalsha +eval +get +set +del +pexpire ~svc-webhooks:dedup:*';

/** What to do, by the start of the message: Redis error replies, and ioredis' own words. */
const BY_MESSAGE: ReadonlyArray<readonly [RegExp, string]> = [
  [/^NOPERM /, REDIS_ACL_HINT],
  // A command the store's script runs, denied by the ACL.
  [/^ERR The user executing the script can't run this command/, REDIS_ACL_HINT],
  [/^WRONGPASS /, 'Redis refused the username or password: check the credentials the client connects with.'],
  [/^NOAUTH /, 'Redis requires a password and the client sent none: give the client its username and password.'],
  [
    /^Stream isn't writeable and enableOfflineQueue options is false/,
    'ioredis is not connected to Redis (enableOfflineQueue is false): check that Redis runs and that the client can reach it.',
  ],
];

/** What to do, by the class of a client's own error (node-redis gives them no other name). */
const BY_CLASS: Readonly<Record<string, string>> = {
  MaxRetriesPerRequestError:
    'ioredis gave up on the command while it could not reach Redis: check that Redis runs and that the host and port point to it.',
  ClientOfflineError: 'The node-redis client is offline, reconnecting to Redis: check that Redis runs and that the client can reach it.',
  ClientClosedError: 'The node-redis client is closed: await client.connect() before the store uses it, and do not quit() it while webhooks arrive.',
};

/**
 * One sentence on what to do about `error`, where its cause is known: the
 * error or one of its causes is a missing table or database, a refused login
 * or connection, a Redis ACL or password refusal, or a Redis client that gave
 * up or is not connected. Undefined otherwise.
 */
export function storeFailureHint(error: unknown): string | undefined {
  // The chain holds no null or undefined; a thrown string or number matches nothing below.
  for (const link of errorChain(error) as object[]) {
    const { code, message } = link as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && Object.hasOwn(BY_CODE, code)) return BY_CODE[code];
    const byMessage = typeof message === 'string' ? BY_MESSAGE.find(([start]) => start.test(message)) : undefined;
    if (byMessage !== undefined) return byMessage[1];
    const name = className(link);
    if (Object.hasOwn(BY_CLASS, name)) return BY_CLASS[name];
  }
  return undefined;
}

/**
 * `<class>[ <code>]: <message>` for a log line: the message on one line, cut
 * after 200 characters, with the credentials of any URL in it and values
 * given as `password=…` or `secret=…` left out.
 */
export function describeStoreError(error: unknown): string {
  const { errorClass, errorCode, errorMessage } = storeErrorFields(error);
  return `${errorClass}${errorCode === undefined ? '' : ` ${errorCode}`}: ${errorMessage}`;
}

/** What `describeStoreError` tells, as the fields of a log line: the class, the client's code where it is a plain word, and the message. */
export function storeErrorFields(error: unknown): { readonly errorClass: string; readonly errorCode?: string; readonly errorMessage: string } {
  if (typeof error !== 'object' || error === null) return { errorClass: typeof error, errorMessage: safeText(String(error)) };
  const { code, message } = error as { code?: unknown; message?: unknown };
  const errorMessage = safeText(typeof message === 'string' && message !== '' ? message : innerMessages(error));
  return typeof code === 'string' && /^[\w.-]{1,40}$/.test(code) ? { errorClass: className(error), errorCode: code, errorMessage } : { errorClass: className(error), errorMessage };
}

/** The name of the class that made `error`, else its `name`: pg's errors are named just 'error'. */
function className(error: object): string {
  const constructorName = (error.constructor as { name?: unknown } | undefined)?.name;
  if (typeof constructorName === 'string' && constructorName !== '' && constructorName !== 'Error' && constructorName !== 'Object') {
    return constructorName;
  }
  const { name } = error as { name?: unknown };
  return typeof name === 'string' && name !== '' ? name : 'Error';
}

/** The messages of an AggregateError's errors: Node's one for a refused connection has none of its own. */
function innerMessages(error: object): string {
  const { errors } = error as { errors?: unknown };
  if (!Array.isArray(errors)) return '';
  return errors.map((inner) => (inner as { message?: unknown } | null)?.message).filter((text) => typeof text === 'string').join('; ');
}

/** `text` as one line of at most MAX_MESSAGE_LENGTH characters, without credentials. */
function safeText(text: string): string {
  const safe = text
    // scheme://user:password@host: everything up to the last @ before the host.
    .replace(/\b([a-z][a-z\d+.-]*:\/\/)[^\s"'<>]*@/gi, '$1')
    .replace(/(password|passwd|pwd|secret)=[^\s&;,]*/gi, '$1=…')
    .replace(/\bwhsec_[\w+/=]+/g, 'whsec_…')
    .replace(/\s+/g, ' ')
    .trim();
  return safe.length > MAX_MESSAGE_LENGTH ? `${safe.slice(0, MAX_MESSAGE_LENGTH)}…` : safe;
}

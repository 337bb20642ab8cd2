/**
 * A `DedupStore` in Redis, shared by every process that receives the
 * webhooks, that also orders events (`OrderingDedupStore`). Each operation
 * is one Lua script, hence atomic: a plain one on one key, an ordered one on
 * three keys that share a hash tag, so that on a cluster each is one hash slot.
 */
import { createHash, randomUUID } from 'node:crypto';
import { DeadlineQueue, withinDeadline } from '../../base/deadlines.js';
import { checkDuration, checkOptionsObject, MAX_TIMER_MS } from '../../base/option-checks.js';
import { WebhookDedupError } from '../../core/errors.js';
import type { EventOrder } from '../../core/event-order.js';
import type { BeginResult, OrderedBeginResult, OrderingDedupStore } from '../dedup-store.js';
import { WebhookOptionsError } from '../../base/options-error.js';

/**
 * Sends one command, e.g. `['EVALSHA', sha, '1', key, token]`, and resolves
 * to its reply. `key` is a key the command touches, for a client that routes
 * commands to cluster nodes by key: every key of one command is in its slot.
 */
export type RedisSendCommand = (args: [command: string, ...args: string[]], key: string) => Promise<unknown>;

/** The part of an ioredis client (`Redis` or `Cluster`) the store uses. */
export interface IoredisClient {
  /** Sends one command and resolves to its reply. */
  call(command: string, ...args: string[]): Promise<unknown>;
}

/** The part of a node-redis client (`createClient()`, v4 and later) the store uses. */
export interface NodeRedisClient {
  /** Sends one command and resolves to its reply. */
  sendCommand(args: [command: string, ...args: string[]]): Promise<unknown>;
}

/**
 * The part of a node-redis cluster (`createCluster()`, v4 and later) the
 * store uses; `getSlotMaster` is how it tells a cluster from a client.
 */
export interface NodeRedisCluster {
  /** Sends one command to the node that holds `firstKey`, and resolves to its reply. */
  sendCommand(firstKey: string, isReadonly: boolean, args: [command: string, ...args: string[]]): Promise<unknown>;
  /** The master of a hash slot: only a cluster has it. */
  getSlotMaster(slot: number): unknown;
}

/** A connection: an ioredis client or cluster, a node-redis client or cluster, or a function sending a command. */
export type RedisConnection = RedisSendCommand | IoredisClient | NodeRedisClient | NodeRedisCluster;

/** Options of `new RedisDedupStore()`. */
export interface RedisDedupStoreOptions {
  /**
   * Put before each event id to form its key, keeping these keys apart from
   * the application's.
   * @default 'svc-webhooks:dedup:'
   */
  readonly keyPrefix?: string;
  /**
   * How long, in milliseconds, an operation waits for Redis before it rejects.
   * A client that queues commands while disconnected would otherwise hold
   * the request past the sender's 10 s answer window instead of letting the
   * receiver answer 503. A command that times out may still run later; every
   * outcome of that is safe (a stray lease expires; a late complete or
   * release is token-checked).
   * @default 2000
   */
  readonly commandTimeoutMs?: number;
}

// Tokens are UUIDs, so no lease can ever read as this marker.
const DONE = 'done';

const IN_PROGRESS = Object.freeze({ state: 'in_progress' } as const);
const DONE_ANSWER = Object.freeze({ state: 'done' } as const);

// KEYS[1] is the event's key, ARGV[1] the token (BEGIN's new one) and ARGV[2] the lease or the retention. An ordered
// event's script has its object's version key as KEYS[2], its object's lease key as KEYS[3] and its version as ARGV[3].

// Replies of BEGIN: 0 claimed, 1 leased by another delivery, 2 done.
const BEGIN = `local value = redis.call('GET', KEYS[1])
if not value then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 0
end
if value == '${DONE}' then return 2 end
return 1`;

// Replies of BEGIN_IN_ORDER: BEGIN's, 1 also while another event leases the object, and 3 claimed but stale: a
// higher version of the object is recorded. Versions are compared as numbers, doubles as in JavaScript.
const BEGIN_IN_ORDER = `local value = redis.call('GET', KEYS[1])
if value == '${DONE}' then return 2 end
if value or redis.call('EXISTS', KEYS[3]) == 1 then return 1 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[2])
local recorded = redis.call('GET', KEYS[2])
if recorded and tonumber(recorded) > tonumber(ARGV[3]) then return 3 end
return 0`;

// The first line of COMPLETE, RELEASE and RENEW: only the token of a live lease acts (the marker is no token).
const UNLESS_HELD = `if ARGV[1] == '${DONE}' or redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end`;

// The object's lease goes only with the token that holds it: it may be another event's by now.
const FREE_OBJECT = `if redis.call('GET', KEYS[3]) == ARGV[1] then redis.call('DEL', KEYS[3]) end`;

const COMPLETE = `${UNLESS_HELD}
redis.call('SET', KEYS[1], '${DONE}', 'PX', ARGV[2])
return 1`;

// A version is recorded only with the event done, and never replaces a higher one; an equal one gets a new expiry.
const COMPLETE_IN_ORDER = `${UNLESS_HELD}
redis.call('SET', KEYS[1], '${DONE}', 'PX', ARGV[2])
${FREE_OBJECT}
local recorded = redis.call('GET', KEYS[2])
if not recorded or tonumber(recorded) <= tonumber(ARGV[3]) then redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[2]) end
return 1`;

const RELEASE = `${UNLESS_HELD}
redis.call('DEL', KEYS[1])
return 1`;

// The object is freed even when the event's lease is no longer the token's, as the memory store does.
const RELEASE_IN_ORDER = `${FREE_OBJECT}
${RELEASE}`;

const RENEW = `${UNLESS_HELD}
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

const RENEW_IN_ORDER = `${UNLESS_HELD}
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if redis.call('GET', KEYS[3]) == ARGV[1] then redis.call('PEXPIRE', KEYS[3], ARGV[2]) end
return 1`;

/** What the scripts answer: BEGIN_IN_ORDER 0 to 3, BEGIN 0 to 2, the others 0 or 1. */
type ScriptReply = 0 | 1 | 2 | 3;

interface Script {
  readonly source: string;
  readonly sha: string;
  /** The highest reply the script gives: any other is unexpected. */
  readonly lastReply: ScriptReply;
}

function script(source: string, lastReply: ScriptReply = 1): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex'), lastReply };
}

const SCRIPTS = {
  begin: script(BEGIN, 2),
  complete: script(COMPLETE),
  release: script(RELEASE),
  renew: script(RENEW),
  beginInOrder: script(BEGIN_IN_ORDER, 3),
  completeInOrder: script(COMPLETE_IN_ORDER),
  releaseInOrder: script(RELEASE_IN_ORDER),
  renewInOrder: script(RENEW_IN_ORDER),
};

/**
 * Keys are `keyPrefix + id`; a key holds the lease's token while leased and
 * `done` once processed, each with a Redis expiry. An operation rejects with
 * the client's own error, or `dedup_unavailable` after `commandTimeoutMs`,
 * which the receiver answers with 503.
 *
 * An ordered event (the `ordering` option) has three keys, in one hash slot:
 * `keyPrefix + '{' + tag + '}'` followed by `e` and its id (its record, as
 * above), `v` and its object's key (the highest version processed, kept for
 * the retention), or `l` and its object's key (the token of the event that
 * runs), where the tag is a hash of the object's key. So turning `ordering`
 * on, or changing what `ordering.key` answers, starts those events' records
 * afresh: a retry of an event processed before runs once more. On a cluster,
 * a `keyPrefix` holding a hash tag of its own (`{…}`) puts every key in its
 * one slot, and one whose first `{` is followed at once by `}` parts the three
 * keys, which Redis refuses (`CROSSSLOT`).
 */
export class RedisDedupStore implements OrderingDedupStore {
  readonly #send: RedisSendCommand;
  readonly #keyPrefix: string;
  /** The deadlines of the store's commands: one timer for all of them. */
  readonly #deadlines: DeadlineQueue;

  /**
   * `connection` is an ioredis client or `Cluster`, a node-redis client or
   * `createCluster()`, or a function: `(args) => client.call(...args)`
   * (ioredis), `(args) => client.sendCommand(args)` (node-redis), or for a
   * cluster client that routes by key, e.g. `(args, key) => cluster.sendCommand(key, false, args)`.
   * Checks its arguments once; throws `WebhookOptionsError`.
   */
  constructor(connection: RedisConnection, options: RedisDedupStoreOptions = {}) {
    this.#send = toSendCommand(connection);
    checkOptionsObject('RedisDedupStore', options);
    const { keyPrefix = 'svc-webhooks:dedup:', commandTimeoutMs = 2000 } = options;
    if (typeof keyPrefix !== 'string') throw new WebhookOptionsError('svc-webhooks: keyPrefix must be a string');
    checkDuration('commandTimeoutMs', commandTimeoutMs, MAX_TIMER_MS);
    this.#keyPrefix = keyPrefix;
    this.#deadlines = new DeadlineQueue(commandTimeoutMs);
  }

  /** Claims `key` for `leaseMs`, unless another delivery holds it or it is done; see `DedupStore.begin`. */
  async begin(key: string, leaseMs: number): Promise<BeginResult> {
    checkDuration('leaseMs', leaseMs);
    const token = randomUUID();
    const reply = await this.#run(SCRIPTS.begin, [this.#keyPrefix + key], token, String(leaseMs));
    if (reply === 0) return { state: 'claimed', token };
    return reply === 1 ? IN_PROGRESS : DONE_ANSWER;
  }

  /** Marks `key` done for `retentionMs` if `token` still holds its lease; see `DedupStore.complete`. */
  async complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    checkDuration('retentionMs', retentionMs);
    return (await this.#run(SCRIPTS.complete, [this.#keyPrefix + key], token, String(retentionMs))) === 1;
  }

  /** Drops the lease on `key` if `token` still holds it; see `DedupStore.release`. */
  async release(key: string, token: string): Promise<boolean> {
    return (await this.#run(SCRIPTS.release, [this.#keyPrefix + key], token)) === 1;
  }

  /** Moves the end of the lease on `key` to `leaseMs` from now if `token` still holds it; see `DedupStore.renew`. */
  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    checkDuration('leaseMs', leaseMs);
    return (await this.#run(SCRIPTS.renew, [this.#keyPrefix + key], token, String(leaseMs))) === 1;
  }

  /** As `begin`, leasing the event's object too; see `OrderingDedupStore.beginInOrder`. */
  async beginInOrder(key: string, order: EventOrder, leaseMs: number): Promise<OrderedBeginResult> {
    checkDuration('leaseMs', leaseMs);
    const token = randomUUID();
    const reply = await this.#run(SCRIPTS.beginInOrder, this.#orderedKeys(key, order), token, String(leaseMs), String(order.version));
    if (reply === 0 || reply === 3) return { state: 'claimed', token, stale: reply === 3 };
    return reply === 1 ? IN_PROGRESS : DONE_ANSWER;
  }

  /** As `complete`, recording the object's version; see `OrderingDedupStore.completeInOrder`. */
  async completeInOrder(key: string, order: EventOrder, token: string, retentionMs: number): Promise<boolean> {
    checkDuration('retentionMs', retentionMs);
    return (await this.#run(SCRIPTS.completeInOrder, this.#orderedKeys(key, order), token, String(retentionMs), String(order.version))) === 1;
  }

  /** As `release`, dropping the object's lease; see `OrderingDedupStore.releaseInOrder`. */
  async releaseInOrder(key: string, order: EventOrder, token: string): Promise<boolean> {
    return (await this.#run(SCRIPTS.releaseInOrder, this.#orderedKeys(key, order), token)) === 1;
  }

  /** As `renew`, with the object's lease; see `OrderingDedupStore.renewInOrder`. */
  async renewInOrder(key: string, order: EventOrder, token: string, leaseMs: number): Promise<boolean> {
    checkDuration('leaseMs', leaseMs);
    return (await this.#run(SCRIPTS.renewInOrder, this.#orderedKeys(key, order), token, String(leaseMs))) === 1;
  }

  /**
   * The event's key, its object's version key and its object's lease key, under one hash tag. The tag is a
   * hash of the object's key, which is the sender's text and may hold braces; the base64url of a hash holds none.
   */
  #orderedKeys(dedupKey: string, order: EventOrder): [event: string, version: string, lease: string] {
    const tag = createHash('sha1').update(order.key).digest('base64url').slice(0, 12);
    const tagged = `${this.#keyPrefix}{${tag}}`;
    return [`${tagged}e${dedupKey}`, `${tagged}v${order.key}`, `${tagged}l${order.key}`];
  }

  /** Runs a script on `keys`, routed by the first: EVALSHA, and EVAL once if Redis lost its script cache. */
  async #run(code: Script, keys: readonly [string, ...string[]], ...args: string[]): Promise<ScriptReply> {
    const [key] = keys;
    const keysAndArgs = [String(keys.length), ...keys, ...args];
    let reply: unknown;
    try {
      reply = await this.#timed(['EVALSHA', code.sha, ...keysAndArgs], key);
    } catch (error) {
      if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw error;
      reply = await this.#timed(['EVAL', code.source, ...keysAndArgs], key);
    }
    // Some client settings answer integers as strings; anything else (a nil, say) must not read as 0, a claim.
    const number = typeof reply === 'string' && /^\d$/.test(reply) ? Number(reply) : reply;
    if (typeof number === 'number' && Number.isInteger(number) && number >= 0 && number <= code.lastReply) return number as ScriptReply;
    throw new WebhookDedupError('dedup_unavailable', 'Redis answered the dedup script unexpectedly');
  }

  #timed(args: [command: string, ...args: string[]], key: string): Promise<unknown> {
    return withinDeadline(this.#deadlines, this.#send(args, key), () => {
      throw new WebhookDedupError('dedup_unavailable', `Redis did not answer within ${this.#deadlines.ms} ms`);
    });
  }
}

function toSendCommand(connection: RedisConnection): RedisSendCommand {
  if (typeof connection === 'function') return connection;
  if (connection !== null && typeof connection === 'object') {
    // ioredis clients also have a sendCommand, taking a Command object: test for call first.
    if ('call' in connection && typeof connection.call === 'function') {
      const client = connection;
      return (args) => client.call(...args);
    }
    if ('sendCommand' in connection && typeof connection.sendCommand === 'function') {
      // A node-redis cluster's sendCommand takes the key it routes by first.
      if ('getSlotMaster' in connection) {
        const cluster = connection;
        return (args, key) => cluster.sendCommand(key, false, args);
      }
      const client = connection;
      return (args) => client.sendCommand(args);
    }
  }
  throw new WebhookOptionsError('svc-webhooks: RedisDedupStore needs an ioredis or node-redis client or cluster, or a sendCommand function');
}

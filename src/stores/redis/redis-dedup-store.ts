/**
 * A `DedupStore` in Redis, shared by every process that receives the
 * webhooks. Each operation is one Lua script on one key, hence atomic, and on
 * a cluster one hash slot.
 */
import { createHash, randomUUID } from 'node:crypto';
import { DeadlineQueue, withinDeadline } from '../../base/deadlines.js';
import { checkDuration, checkOptionsObject, MAX_TIMER_MS } from '../../base/option-checks.js';
import { WebhookDedupError } from '../../core/errors.js';
import type { BeginResult, DedupStore } from '../dedup-store.js';
import { WebhookOptionsError } from '../../base/options-error.js';

/**
 * Sends one command, e.g. `['EVALSHA', sha, '1', key, token]`, and resolves
 * to its reply. `key` is the one key the command touches, for a client that
 * routes commands to cluster nodes by key.
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

// Replies of BEGIN: 0 claimed, 1 leased by another delivery, 2 done.
const BEGIN = `local value = redis.call('GET', KEYS[1])
if not value then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 0
end
if value == '${DONE}' then return 2 end
return 1`;

// The first line of COMPLETE, RELEASE and RENEW: only the token of a live lease acts (the marker is no token).
const UNLESS_HELD = `if ARGV[1] == '${DONE}' or redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end`;

const COMPLETE = `${UNLESS_HELD}
redis.call('SET', KEYS[1], '${DONE}', 'PX', ARGV[2])
return 1`;

const RELEASE = `${UNLESS_HELD}
redis.call('DEL', KEYS[1])
return 1`;

const RENEW = `${UNLESS_HELD}
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/** What every script answers: BEGIN 0 to 2, COMPLETE, RELEASE and RENEW 0 or 1. */
type ScriptReply = 0 | 1 | 2;

interface Script {
  readonly source: string;
  readonly sha: string;
}

function script(source: string): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

const SCRIPTS = { begin: script(BEGIN), complete: script(COMPLETE), release: script(RELEASE), renew: script(RENEW) };

/**
 * Keys are `keyPrefix + id`; a key holds the lease's token while leased and
 * `done` once processed, each with a Redis expiry. An operation rejects with
 * the client's own error, or `dedup_unavailable` after `commandTimeoutMs`,
 * which the receiver answers with 503.
 */
export class RedisDedupStore implements DedupStore {
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
    const reply = await this.#run(SCRIPTS.begin, key, token, String(leaseMs));
    switch (reply) {
      case 0:
        return { state: 'claimed', token };
      case 1:
        return { state: 'in_progress' };
      case 2:
        return { state: 'done' };
    }
  }

  /** Marks `key` done for `retentionMs` if `token` still holds its lease; see `DedupStore.complete`. */
  async complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    checkDuration('retentionMs', retentionMs);
    return (await this.#run(SCRIPTS.complete, key, token, String(retentionMs))) === 1;
  }

  /** Drops the lease on `key` if `token` still holds it; see `DedupStore.release`. */
  async release(key: string, token: string): Promise<boolean> {
    return (await this.#run(SCRIPTS.release, key, token)) === 1;
  }

  /** Moves the end of the lease on `key` to `leaseMs` from now if `token` still holds it; see `DedupStore.renew`. */
  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    checkDuration('leaseMs', leaseMs);
    return (await this.#run(SCRIPTS.renew, key, token, String(leaseMs))) === 1;
  }

  /** Runs a script on the dedup key's Redis key: EVALSHA, and EVAL once if Redis lost its script cache. */
  async #run(code: Script, dedupKey: string, ...args: string[]): Promise<ScriptReply> {
    const key = this.#keyPrefix + dedupKey;
    let reply: unknown;
    try {
      reply = await this.#timed(['EVALSHA', code.sha, '1', key, ...args], key);
    } catch (error) {
      if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw error;
      reply = await this.#timed(['EVAL', code.source, '1', key, ...args], key);
    }
    // Some client settings answer integers as strings; anything else (a nil, say) must not read as 0, a claim.
    if (reply === 0 || reply === 1 || reply === 2) return reply;
    if (reply === '0' || reply === '1' || reply === '2') return Number(reply) as ScriptReply;
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

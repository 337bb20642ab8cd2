/**
 * storeFailureHint and describeStoreError on the errors the clients really
 * raise: provoked on the shared Postgres, on a private Postgres that asks for
 * passwords, on a private Redis with ACL users, and on ports nobody listens
 * on. The log line must say what to do, and never hold a secret.
 */
import { sql as drizzleSql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { Redis, type RedisOptions } from 'ioredis';
import pg from 'pg';
import postgres from 'postgres';
import { createClient } from 'redis';
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookDedupError } from '../../src/core/errors.js';
import { markProcessed } from '../../src/stores/postgres/mark-processed.js';
import { PostgresDedupStore } from '../../src/stores/postgres/postgres-dedup-store.js';
import { RedisDedupStore, type RedisConnection } from '../../src/stores/redis/index.js';
import { describeStoreError, storeFailureHint } from '../../src/stores/store-failure-hint.js';
import { freePort } from '../helpers/free-port.js';
import { postgresSuite } from '../helpers/postgres-suite.js';
import { PrivatePostgres } from '../helpers/private-postgres.js';
import { PrivateRedis } from '../helpers/private-redis.js';

const PASSWORD = 'pw-1f3a9c-not-for-logs';

/** The rejection of `promise`, which must reject. */
async function failureOf(promise: PromiseLike<unknown>): Promise<unknown> {
  return Promise.resolve(promise).then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

/** A claim through a Redis store on `connection`, which must fail. */
function failedClaim(connection: RedisConnection): Promise<unknown> {
  return failureOf(new RedisDedupStore(connection, { commandTimeoutMs: 5_000 }).begin('evt_1', 1_000));
}

describe('on Postgres errors', () => {
  const suite = postgresSuite();

  it('42P01 (no table): run migrateProcessedEvents(), through pg, postgres.js, PostgresDedupStore, markProcessed and an ORM wrapper', async () => {
    const missing = suite.table('missing');
    const failures = [
      await failureOf(suite.pool.query(`SELECT 1 FROM ${missing}`)),
      await failureOf(suite.sql.unsafe(`SELECT 1 FROM ${missing}`)),
      await failureOf(new PostgresDedupStore(suite.pool, { table: missing }).begin('evt_1', 1_000)),
      await failureOf(suite.sql.begin((tx) => markProcessed(tx, 'evt_1', { table: missing }))),
      await failureOf(drizzle(suite.pool).execute(drizzleSql.raw(`SELECT 1 FROM ${missing}`))),
    ];
    for (const failure of failures) expect(storeFailureHint(failure)).toMatch(/run migrateProcessedEvents\(\).*store\.migrate\(\)/);
    expect(describeStoreError(failures[0])).toBe(`DatabaseError 42P01: relation "${missing}" does not exist`);
    expect(describeStoreError(failures[1])).toBe(`PostgresError 42P01: relation "${missing}" does not exist`);
  });

  it('3D000 (no such database): create it or correct the name', async () => {
    const url = new URL(suite.url);
    url.pathname = '/svc_webhooks_no_such_database';
    const client = new pg.Client({ connectionString: url.href });
    const failure = await failureOf(client.connect());
    expect(storeFailureHint(failure)).toMatch(/database .* does not exist: create it/);
    expect(describeStoreError(failure)).toBe('DatabaseError 3D000: database "svc_webhooks_no_such_database" does not exist');
  });

  it('28000 (no such role): check the user and pg_hba.conf', async () => {
    const url = new URL(suite.url);
    url.username = 'svc_webhooks_no_such_role';
    const sql = postgres(url.href, { max: 1, onnotice: () => {} });
    try {
      const failure = await failureOf(sql`SELECT 1`);
      expect(storeFailureHint(failure)).toMatch(/refused the login.*pg_hba\.conf/);
      expect(describeStoreError(failure)).toBe('PostgresError 28000: role "svc_webhooks_no_such_role" does not exist');
    } finally {
      await sql.end();
    }
  });

  it('ECONNREFUSED (nothing listens): check the server and its address, through pg and postgres.js', async () => {
    const url = `postgres://postgres:${PASSWORD}@127.0.0.1:${await freePort()}/test`;
    const sql = postgres(url, { max: 1, connect_timeout: 5 });
    try {
      const failures = [await failureOf(new pg.Client({ connectionString: url }).connect()), await failureOf(sql`SELECT 1`)];
      for (const failure of failures) {
        expect(storeFailureHint(failure)).toMatch(/^Nothing accepts connections/);
        expect(describeStoreError(failure)).toMatch(/^Error ECONNREFUSED: connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
      }
    } finally {
      await sql.end();
    }
  });

  describe('on a private server asking for passwords', () => {
    let server: PrivatePostgres;
    beforeAll(async () => {
      server = await PrivatePostgres.start();
      await requirePassword(server.url, 'svc_webhooks_writer', PASSWORD);
    }, 60_000);
    afterAll(() => server?.destroy());

    it('28P01 (wrong password): check the credentials; the password given is in no line', async () => {
      const url = new URL(server.url);
      url.username = 'svc_webhooks_writer';
      url.password = `wrong-${PASSWORD}`;
      const failure = await failureOf(new pg.Client({ connectionString: url.href }).connect());
      expect(storeFailureHint(failure)).toMatch(/refused the password/);
      expect(describeStoreError(failure)).toBe('DatabaseError 28P01: password authentication failed for user "svc_webhooks_writer"');
      url.password = PASSWORD;
      const client = new pg.Client({ connectionString: url.href });
      await client.connect();
      await client.end();
    });
  });
});

/** Makes `user` log in with `password` only (scram-sha-256), and waits until the server applies it. */
async function requirePassword(url: string, user: string, password: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE ROLE ${user} LOGIN PASSWORD '${password}'`);
    const hbaFile = (await admin.query('SHOW hba_file')).rows[0].hba_file as string;
    writeFileSync(hbaFile, `host all ${user} 127.0.0.1/32 scram-sha-256\n${readFileSync(hbaFile, 'utf8')}`);
    await admin.query('SELECT pg_reload_conf()');
  } finally {
    await admin.end();
  }
  // A wrong password gets in until the rule applies, and is refused with 28P01 after.
  const wrong = new URL(url);
  wrong.username = user;
  wrong.password = `wrong-${password}`;
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const client = new pg.Client({ connectionString: wrong.href });
    const answer = await client.connect().then(
      () => client.end().then(() => 'in'),
      (error: { code?: string }) => error.code,
    );
    if (answer === '28P01') return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the server did not apply the password rule within 10 s');
}

describe('on Redis errors', () => {
  let server: PrivateRedis;
  const clients: Array<{ disconnect(): unknown }> = [];
  /** An ioredis client that gives up at once, without the INFO ready check an ACL user may not run. */
  const ioredis = (options: RedisOptions): Redis => {
    const client = new Redis(server.url, { maxRetriesPerRequest: 1, retryStrategy: () => null, enableReadyCheck: false, ...options });
    client.on('error', () => {});
    clients.push(client);
    return client;
  };
  /** A node-redis client, connected unless `connect` is false. */
  const nodeRedis = async (options: { username?: string; password?: string }) => {
    const client = createClient({ url: server.url, ...options, socket: { reconnectStrategy: false } });
    client.on('error', () => {});
    await client.connect();
    clients.push({ disconnect: () => client.destroy() });
    return client;
  };

  beforeAll(async () => {
    server = await PrivateRedis.start();
    const admin = new Redis(server.url);
    try {
      const acl = (user: string, ...rules: string[]) => admin.call('ACL', 'SETUSER', user, 'on', `>${PASSWORD}`, ...rules);
      await acl('no_scripts', '~*', '+@all', '-evalsha', '-eval');
      await acl('other_keys', '~other:*', '+@all');
      await acl('scripts_only', '~*', '+evalsha', '+eval');
    } finally {
      admin.disconnect();
    }
  }, 30_000);
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await server?.close();
  });

  it('NOPERM for a command, NOPERM for a key, and a command the script runs: the ACL names what to allow', async () => {
    for (const username of ['no_scripts', 'other_keys', 'scripts_only']) {
      const failures = [
        await failedClaim(ioredis({ username, password: PASSWORD })),
        await failedClaim(await nodeRedis({ username, password: PASSWORD })),
      ];
      for (const failure of failures) expect(storeFailureHint(failure), `${username}: ${describeStoreError(failure)}`).toMatch(/ACL SETUSER/);
    }
    const denied = await failedClaim(ioredis({ username: 'no_scripts', password: PASSWORD }));
    expect(describeStoreError(denied)).toMatch(/^\w+: NOPERM this user has no permissions to run the 'evalsha' command$/);
  });

  it('WRONGPASS: check the credentials; the password given is in no line', async () => {
    const failures = [
      await failureOf(ioredis({ username: 'no_scripts', password: `wrong-${PASSWORD}` }).ping()),
      await failureOf(nodeRedis({ username: 'no_scripts', password: `wrong-${PASSWORD}` })),
    ];
    for (const failure of failures) {
      expect(storeFailureHint(failure)).toMatch(/refused the username or password/);
      expect(describeStoreError(failure)).toMatch(/^\w+: WRONGPASS invalid username-password pair or user is disabled\.$/);
    }
  });

  it('NOAUTH (a password is required and none was sent): give the client its password', async () => {
    const guarded = await PrivateRedis.start();
    try {
      // Set once it runs: PrivateRedis waits for an unauthenticated PING to answer.
      const admin = new Redis(guarded.url);
      await admin.call('CONFIG', 'SET', 'requirepass', PASSWORD);
      admin.disconnect();
      const client = new Redis(guarded.url, { maxRetriesPerRequest: 1, retryStrategy: () => null });
      client.on('error', () => {});
      clients.push(client);
      const failures = [await failedClaim(client), await failureOf(createClient({ url: guarded.url, socket: { reconnectStrategy: false } }).on('error', () => {}).connect())];
      for (const failure of failures) {
        expect(storeFailureHint(failure)).toMatch(/requires a password and the client sent none/);
        expect(describeStoreError(failure)).toMatch(/^\w+: NOAUTH /);
      }
    } finally {
      await guarded.close();
    }
  });

  it('ioredis MaxRetriesPerRequestError and a refused command with enableOfflineQueue: false: check that Redis runs', async () => {
    const port = await freePort();
    const retrying = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1, retryStrategy: () => 10 });
    const offline = new Redis(port, '127.0.0.1', { enableOfflineQueue: false, retryStrategy: () => 10 });
    for (const client of [retrying, offline]) {
      client.on('error', () => {});
      clients.push(client);
    }
    const gaveUp = await failedClaim(retrying);
    expect(describeStoreError(gaveUp)).toBe(
      'MaxRetriesPerRequestError: Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest" option for details.',
    );
    expect(storeFailureHint(gaveUp)).toMatch(/^ioredis gave up on the command/);
    expect(storeFailureHint(await failedClaim(offline))).toMatch(/^ioredis is not connected to Redis \(enableOfflineQueue is false\)/);
  });

  it('node-redis ClientClosedError (never connected) and ClientOfflineError (server gone, offline queue off)', async () => {
    const neverConnected = createClient({ url: server.url });
    const closed = await failedClaim(neverConnected);
    expect(describeStoreError(closed)).toBe('ClientClosedError: The client is closed');
    expect(storeFailureHint(closed)).toMatch(/await client\.connect\(\)/);

    const doomed = await PrivateRedis.start();
    const client = createClient({ url: doomed.url, disableOfflineQueue: true, socket: { reconnectStrategy: 50 } });
    client.on('error', () => {});
    await client.connect();
    try {
      await doomed.close();
      while (client.isReady) await new Promise((resolve) => setTimeout(resolve, 10));
      const offline = await failedClaim(client);
      expect(describeStoreError(offline)).toBe('ClientOfflineError: The client is offline');
      expect(storeFailureHint(offline)).toMatch(/offline, reconnecting/);
    } finally {
      client.destroy();
    }
  });

  it('node-redis ECONNREFUSED: check the server and its address', async () => {
    const port = await freePort();
    const client = createClient({ url: `redis://127.0.0.1:${port}`, socket: { reconnectStrategy: false } });
    client.on('error', () => {});
    const failure = await failureOf(client.connect());
    expect(storeFailureHint(failure)).toMatch(/^Nothing accepts connections/);
    expect(describeStoreError(failure)).toBe(`Error ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:${port}`);
  });
});

describe('storeFailureHint', () => {
  it('knows nothing of other failures, a timeout of the store included', () => {
    const unknown = [
      new Error('boom'),
      new WebhookDedupError('dedup_unavailable', 'Redis did not answer within 2000 ms'),
      Object.assign(new Error('deadlock detected'), { code: '40P01' }),
      // Only a reply's first word counts, in capitals.
      new Error('the reply was NOPERM'),
      new Error('noperm this user'),
      'NOPERM as a string',
      42,
      undefined,
      null,
    ];
    for (const failure of unknown) expect(storeFailureHint(failure)).toBeUndefined();
  });

  it('follows causes outward in, and stops at a cycle', () => {
    const missing = Object.assign(new Error('relation "t" does not exist'), { code: '42P01' });
    expect(storeFailureHint(new Error('outer', { cause: new Error('middle', { cause: missing }) }))).toMatch(/migrate\(\)/);
    const looped = new Error('looped');
    looped.cause = new Error('back', { cause: looped });
    expect(storeFailureHint(looped)).toBeUndefined();
  });
});

describe('describeStoreError', () => {
  it('names the class (pg errors are named "error"), then a code that looks like one', () => {
    class DatabaseError extends Error {
      override name = 'error';
    }
    expect(describeStoreError(Object.assign(new DatabaseError('x'), { code: '42P01' }))).toBe('DatabaseError 42P01: x');
    expect(describeStoreError(new WebhookDedupError('dedup_unavailable', 'late'))).toBe('WebhookDedupError dedup_unavailable: late');
    expect(describeStoreError(Object.assign(new Error('x'), { name: 'TimeoutError' }))).toBe('TimeoutError: x');
    expect(describeStoreError(Object.assign(new Error('x'), { code: 7 }))).toBe('Error: x');
    expect(describeStoreError(Object.assign(new Error('x'), { code: 'not a code: it has spaces' }))).toBe('Error: x');
    expect(describeStoreError({ message: 'plain object' })).toBe('Error: plain object');
    // A class without a name gives way to the error's name, and a name that is empty to Error.
    expect(describeStoreError({ constructor: { name: '' }, name: 'ReplyError', message: 'x' })).toBe('ReplyError: x');
    expect(describeStoreError(Object.assign(new Error('x'), { name: '' }))).toBe('Error: x');
  });

  it('leaves out the credentials of a URL whose scheme holds a digit, and trims the message', () => {
    expect(describeStoreError(new Error(`  no bucket at s3://key:${PASSWORD}@bucket/path  `))).toBe('Error: no bucket at s3://bucket/path');
  });

  it('leaves out the credentials of URLs and password or secret values', () => {
    const message =
      `could not reach postgres://app:${PASSWORD}@db.internal:5432/app or "redis://:${PASSWORD}@cache:6379/0", ` +
      `nor rediss://user:p@ss@h/0 with db_password=${PASSWORD}; secret=${PASSWORD} whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw`;
    const line = describeStoreError(new Error(message));
    expect(line).toBe(
      'Error: could not reach postgres://db.internal:5432/app or "redis://cache:6379/0", nor rediss://h/0 with db_password=…; secret=… whsec_…',
    );
  });

  it('puts the message on one line and cuts it after 200 characters', () => {
    const line = describeStoreError(new Error(`first\n  second\t${'x'.repeat(300)}`));
    expect(line).toBe(`Error: ${`first second ${'x'.repeat(300)}`.slice(0, 200)}…`);
    expect(describeStoreError(new Error('y'.repeat(200)))).toBe(`Error: ${'y'.repeat(200)}`);
  });

  it("gives an AggregateError's inner messages when it has none of its own, as Node's for a refused connection", () => {
    const refused = Object.assign(new AggregateError([new Error('connect ECONNREFUSED ::1:5432'), new Error('connect ECONNREFUSED 127.0.0.1:5432')], ''), {
      code: 'ECONNREFUSED',
    });
    expect(describeStoreError(refused)).toBe('AggregateError ECONNREFUSED: connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432');
    expect(storeFailureHint(refused)).toMatch(/^Nothing accepts connections/);
    expect(describeStoreError(new AggregateError([null, 5], ''))).toBe('AggregateError: ');
  });

  it('describes what is not an error without failing on it', () => {
    expect(describeStoreError('connection lost')).toBe('string: connection lost');
    expect(describeStoreError(undefined)).toBe('undefined: undefined');
    expect(describeStoreError(null)).toBe('object: null');
    expect(describeStoreError(Symbol('s'))).toBe('symbol: Symbol(s)');
    const unprintable = Object.create(null) as object; // no constructor, no name
    expect(describeStoreError(Object.assign(unprintable, { message: 5 }))).toBe('Error: ');
  });
});

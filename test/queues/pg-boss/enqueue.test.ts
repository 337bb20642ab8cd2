/**
 * enqueue over real HTTP, on each pg-boss major under test: an Express
 * receiver whose handoff records the event's key and sends its pg-boss job in
 * one transaction, on the shared Postgres; what each outcome answers, and
 * what the queue and the processed-events table hold after it.
 */
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import express from 'express';
import type pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { verifyWebhook } from '../../../adapters/express.js';
import { enqueue, type PgBossEnqueueOptions } from '../../../src/queues/pg-boss/enqueue.js';
import type { DedupStore } from '../../../src/stores/dedup-store.js';
import type { PgPool, PgPoolClient } from '../../../src/queues/pg-boss/transaction.js';
import type { QueuedDelivery } from '../../../src/queues/queued-delivery.js';
import { serveNode, type ServedApp } from '../../helpers/http-harness.js';
import { PG_BOSS_MAJORS, type TestPgBoss } from '../../helpers/pg-boss-majors.js';
import { pgBossSuite } from '../../helpers/pg-boss-suite.js';
import { deliveryOf, keyOf, now, SECRET, signedRequest, type RequestSpec } from '../../helpers/signed-request.js';
import { freePort } from '../../helpers/free-port.js';
import { silentServer } from '../../helpers/silent-server.js';
import { TestDedupStore } from '../../helpers/test-dedup-store.js';
import { pgPool, uniqueTable } from '../../helpers/postgres-clients.js';
import { WebhookOptionsError } from '../../../src/base/options-error.js';

/** Secrets of tenants of their own, for the specs with tenants. */
const ACME_SECRET = `whsec_${Buffer.from('pg-boss-acme-secret-0123456789ab').toString('base64')}`;
const GLOBEX_SECRET = `whsec_${Buffer.from('pg-boss-globex-secret-0123456789').toString('base64')}`;

describe.each(PG_BOSS_MAJORS)('on $name', (major) => {
  const suite = pgBossSuite(major);
  let pool: pg.Pool;
  let boss: TestPgBoss;
  let table: string;
  let queue: string;
  let served: ServedApp | undefined;

  beforeAll(() => {
    ({ pool, boss, table } = suite);
  });

  afterAll(async () => {
    await served?.close();
  });

  beforeEach(async () => {
    await served?.close();
    queue = uniqueTable('queue');
    await boss.createQueue(queue);
    served = await receiver(queue, { pool, table }, []);
  });

  /**
   * An Express receiver handing every event to `queueName`, by default without a lease store: the transaction
   * is the deduplication. With one, a delivery holds a claim on its event until it is answered.
   */
  async function receiver(queueName: string, options: PgBossEnqueueOptions, heard: unknown[], dedup: DedupStore | false = false): Promise<ServedApp> {
    const app = express();
    const handoff = enqueue(boss, queueName, options);
    app.post('/webhooks', verifyWebhook({ secret: SECRET, now, dedup: dedup && { store: dedup }, handoff, onHandlerError: (error) => void heard.push(error) }));
    return serveNode(createServer(app));
  }

  /** Posts as the sender does, which gives up after 10 s; answers how long the answer took too. */
  async function post(spec: RequestSpec = {}, url = served!.url): Promise<{ status: number; retryAfter: string | null; body: string; ms: number }> {
    const { body, headers } = signedRequest(spec);
    const started = performance.now();
    const response = await fetch(`${url}/webhooks`, { method: 'POST', body, headers, signal: AbortSignal.timeout(SENDER_TIMEOUT_MS) });
    const text = await response.text();
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: text, ms: Math.round(performance.now() - started) };
  }

  async function recorded(): Promise<string[]> {
    return (await pool.query(`SELECT id FROM ${table} ORDER BY id`)).rows.map((row: { id: string }) => row.id);
  }

  const DUPLICATE = JSON.stringify({ received: true, duplicate: true });
  const SENDER_TIMEOUT_MS = 10_000;
  const HANDOFF_FAILED = { status: 503, retryAfter: '5', body: expect.stringContaining('"handoff_failed"') };

  /** A pool on the shared Postgres whose clients run everything but COMMIT, which fails as a lost connection would. */
  function failingCommitPool(): PgPool {
    return {
      async connect() {
        const client = await pool.connect();
        return Object.assign(Object.create(client) as PgPoolClient, {
          query: (text: string, values?: unknown[]) => (text === 'COMMIT' ? Promise.reject(new Error('the connection was lost')) : client.query(text, values)),
        });
      },
    };
  }

  /** How many backends of `applicationName` are in a transaction. */
  async function inTransactionCount(applicationName: string): Promise<number> {
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND xact_start IS NOT NULL', [applicationName]);
    return rows[0].n;
  }

  describe('enqueue', () => {
    it("answers 202 once the job is sent and the event's dedup key recorded, the job's data the verified delivery", async () => {
      const id = `evt_${queue}`;
      expect(await post({ id, type: 'transcript.ready' })).toMatchObject({ status: 202, body: '' });
      const jobs = await suite.jobs(queue);
      expect(jobs).toHaveLength(1);
      expect(jobs[0]!.data).toEqual({ delivery: deliveryOf({ id, type: 'transcript.ready' }) });
      expect(await recorded()).toContain(keyOf(id));
    });

    it('answers every retry of a queued event as a duplicate, and sends no second job', async () => {
      const id = `evt_retried_${queue}`;
      expect((await post({ id })).status).toBe(202);
      expect(await post({ id })).toMatchObject({ status: 200, body: DUPLICATE });
      expect(await post({ id })).toMatchObject({ status: 200, body: DUPLICATE });
      expect(await suite.jobs(queue)).toHaveLength(1);
    });

    it('queues one job for two copies sent at once: one waits for the other on the record, and is answered as a duplicate', async () => {
      const ids = Array.from({ length: 20 }, (_, index) => `evt_copies_${index}_${queue}`);
      const answers = await Promise.all(ids.flatMap((id) => [post({ id }), post({ id })]));
      for (let index = 0; index < ids.length; index++) {
        expect([answers[2 * index]!.status, answers[2 * index + 1]!.status].sort()).toEqual([200, 202]);
      }
      const jobs = await suite.jobs(queue);
      expect(jobs.map((job) => (job.data as QueuedDelivery).delivery.id).sort()).toEqual([...ids].sort());
    });

    it('answers 503 with Retry-After and records nothing when the queue does not exist, so the retry queues it', async () => {
      const heard: unknown[] = [];
      const missing = uniqueTable('missing_queue');
      const elsewhere = await receiver(missing, { pool, table }, heard);
      try {
        const id = `evt_no_queue_${queue}`;
        const answer = await post({ id }, elsewhere.url);
        expect(answer).toMatchObject({ status: 503, retryAfter: '5' });
        expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'handoff_failed' } });
        expect(answer.body).not.toContain(id);
        // pg-boss 10 answers null, which the entry turns into its own error; 11 and 12 reject with theirs.
        expect(heard).toHaveLength(1);
        expect((heard[0] as Error).message).toBe(
          major.major === '10'
            ? `svc-webhooks: pg-boss created no job in the queue "${missing}": does it exist, with the standard policy?`
            : `Queue ${missing} does not exist`,
        );
        // The record was rolled back with the failed send: once the queue exists, the retry queues the event.
        expect(await recorded()).not.toContain(keyOf(id));
        await boss.createQueue(missing);
        expect((await post({ id }, elsewhere.url)).status).toBe(202);
        expect(await suite.jobs(missing)).toHaveLength(1);
      } finally {
        await elsewhere.close();
      }
    });

    it('answers 503 with Retry-After when no transaction can be opened', async () => {
      const unreachable = pgPool(`postgres://postgres@127.0.0.1:${await freePort()}/postgres`, { connectionTimeoutMillis: 500 });
      const heard: unknown[] = [];
      const elsewhere = await receiver(queue, { pool: unreachable, table }, heard);
      try {
        expect(await post({ id: `evt_down_${queue}` }, elsewhere.url)).toMatchObject({ status: 503, retryAfter: '5' });
        expect(heard).toHaveLength(1);
      } finally {
        await elsewhere.close();
        await unreachable.end();
      }
    });

    it('answers 503 handoff_failed within timeoutMs (2000 by default) while the pool has no client to give, and releases the claim, so a retry is never refused as in progress', async () => {
      const exhausted = pgPool(suite.url, { max: 1 });
      let held: PgPoolClient | undefined = await exhausted.connect();
      const dedup = new TestDedupStore();
      const heard: unknown[] = [];
      const elsewhere = await receiver(queue, { pool: exhausted, table }, heard, dedup);
      try {
        const id = `evt_exhausted_${queue}`;
        const first = await post({ id }, elsewhere.url);
        expect(first).toMatchObject(HANDOFF_FAILED);
        expect(first.ms).toBeLessThan(SENDER_TIMEOUT_MS);
        expect(dedup.stateOf(keyOf(id))).toBe('absent');
        // The retry waits for a client on its own deadline: 503 again, not 409 behind a claim still held.
        expect(await post({ id }, elsewhere.url)).toMatchObject(HANDOFF_FAILED);
        expect(heard.map((error) => (error as Error).message)).toEqual(Array(2).fill('svc-webhooks: the pool gave no client within 2000 ms'));
        held.release();
        held = undefined;
        expect((await post({ id }, elsewhere.url)).status).toBe(202);
        expect(await suite.jobs(queue)).toHaveLength(1);
        expect(await recorded()).toContain(keyOf(id));
      } finally {
        held?.release();
        await elsewhere.close();
        await exhausted.end();
      }
    }, 30_000);

    it('answers 503 handoff_failed within timeoutMs from a Postgres that accepts the connection and never answers, and releases the claim each time', async () => {
      const silent = await silentServer();
      // No connectionTimeoutMillis: pg waits for the server's first word for ever.
      const hanging = pgPool(`postgres://postgres@127.0.0.1:${silent.port}/test`);
      const dedup = new TestDedupStore();
      const heard: unknown[] = [];
      const elsewhere = await receiver(queue, { pool: hanging, table, timeoutMs: 500 }, heard, dedup);
      try {
        const id = `evt_silent_${queue}`;
        for (let attempt = 0; attempt < 2; attempt++) {
          const answer = await post({ id }, elsewhere.url);
          expect(answer).toMatchObject(HANDOFF_FAILED);
          // Well before the default's 2 s: the option is the one waited.
          expect(answer.ms).toBeLessThan(2_000);
          expect(dedup.stateOf(keyOf(id))).toBe('absent');
        }
        expect(silent.accepted()).toBeGreaterThan(0);
        expect(heard.map((error) => (error as Error).message)).toEqual(Array(2).fill('svc-webhooks: the pool gave no client within 500 ms'));
      } finally {
        await elsewhere.close();
        await silent.close();
        await hanging.end();
      }
    }, 30_000);

    it('never commits a transaction after its deadline: one stuck on a lock is rolled back once it moves, and the retry queues the event once', async () => {
      const applicationName = `stuck_${queue}`;
      const own = pgPool(suite.url, { application_name: applicationName });
      const locker = await pool.connect();
      const dedup = new TestDedupStore();
      const heard: unknown[] = [];
      const elsewhere = await receiver(queue, { pool: own, table, timeoutMs: 500 }, heard, dedup);
      const id = `evt_stuck_${queue}`;
      try {
        await locker.query('BEGIN');
        await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
        // The record's insert waits for the lock, past the deadline.
        expect(await post({ id }, elsewhere.url)).toMatchObject(HANDOFF_FAILED);
        expect(dedup.stateOf(keyOf(id))).toBe('absent');
        expect(heard.map((error) => (error as Error).message)).toEqual([
          'svc-webhooks: the transaction did not end within 500 ms; it was not committed, and its connection was closed',
        ]);
        await locker.query('COMMIT');
        // The stuck transaction gets the lock and goes on, and finds no COMMIT: nothing it did stays.
        await vi.waitFor(async () => expect(await inTransactionCount(applicationName)).toBe(0), { timeout: 5_000, interval: 50 });
        expect(await recorded()).not.toContain(keyOf(id));
        expect(await suite.jobs(queue)).toEqual([]);
        // The sender's retry, to a receiver with the default deadline: on a busy machine a whole
        // transaction can take longer than 500 ms.
        const retry = await receiver(queue, { pool: own, table }, heard, dedup);
        try {
          expect((await post({ id }, retry.url)).status).toBe(202);
        } finally {
          await retry.close();
        }
        expect(await suite.jobs(queue)).toHaveLength(1);
      } finally {
        await locker.query('ROLLBACK').catch(() => {});
        locker.release();
        await elsewhere.close();
        await own.end();
      }
    }, 30_000);

    it("rolls the record back when the job's options make pg-boss fail, so no record is left without its job", async () => {
      const heard: unknown[] = [];
      // A start that is neither a date nor a number of seconds fails pg-boss's insert, in the transaction.
      const elsewhere = await receiver(queue, { pool, table, job: { startAfter: 'whenever' } }, heard);
      try {
        const id = `evt_bad_job_${queue}`;
        expect((await post({ id }, elsewhere.url)).status).toBe(503);
        expect(heard).toHaveLength(1);
        expect(await recorded()).not.toContain(keyOf(id));
        expect(await suite.jobs(queue)).toEqual([]);
      } finally {
        await elsewhere.close();
      }
    });

    it('leaves neither the record nor the job when the commit fails: the job is sent in the transaction', async () => {
      const heard: unknown[] = [];
      const elsewhere = await receiver(queue, { pool: failingCommitPool(), table }, heard);
      try {
        const id = `evt_no_commit_${queue}`;
        expect(await post({ id }, elsewhere.url)).toMatchObject({ status: 503, retryAfter: '5' });
        expect(heard).toEqual([new Error('the connection was lost')]);
        expect(await recorded()).not.toContain(keyOf(id));
        expect(await suite.jobs(queue)).toEqual([]);
      } finally {
        await elsewhere.close();
      }
    });

    it('answers a retry of a queued event as a duplicate without committing: its transaction changed nothing, and is rolled back', async () => {
      const id = `evt_duplicate_no_commit_${queue}`;
      expect((await post({ id })).status).toBe(202);
      const heard: unknown[] = [];
      const elsewhere = await receiver(queue, { pool: failingCommitPool(), table }, heard);
      try {
        expect(await post({ id }, elsewhere.url)).toMatchObject({ status: 200, body: DUPLICATE });
        expect(heard).toEqual([]);
        expect(await suite.jobs(queue)).toHaveLength(1);
      } finally {
        await elsewhere.close();
      }
    });

    it("sends each job with the job options given, pg-boss's own", async () => {
      const elsewhere = await receiver(queue, { pool, table, job: { retryLimit: 7, priority: 3, expireInSeconds: 90 } }, []);
      try {
        expect((await post({ id: `evt_options_${queue}` }, elsewhere.url)).status).toBe(202);
        const [job] = await suite.jobs(queue);
        expect(await suite.major.jobOptions(boss, queue, job!.id)).toEqual({ retryLimit: 7, priority: 3, expireInSeconds: 90 });
      } finally {
        await elsewhere.close();
      }
    });

    it("keys each delivery on its dedupKey: the same id verified by three secrets is three jobs, each carrying its delivery, each queued once", async () => {
      const handoff = enqueue(boss, queue, { pool, table });
      const id = `evt_tenants_${queue}`;
      const deliveries = [
        deliveryOf({ id, keyId: 'k1', tenant: 'acme:eu', secret: ACME_SECRET }),
        deliveryOf({ id, tenant: 'globex', secret: GLOBEX_SECRET }),
        deliveryOf({ id }),
      ];
      expect(await Promise.all(deliveries.map((delivery) => handoff.hand(delivery)))).toEqual([undefined, undefined, undefined]);
      expect(await Promise.all(deliveries.map((delivery) => handoff.hand(delivery)))).toEqual(['duplicate', 'duplicate', 'duplicate']);
      // Another tenant name with the same secret is the same endpoint: the same key, a duplicate.
      expect(await handoff.hand({ ...deliveries[0]!, tenant: 'acme:us' })).toBe('duplicate');
      const jobs = await suite.jobs(queue);
      expect(jobs.map((job) => job.data)).toEqual(expect.arrayContaining(deliveries.map((delivery) => ({ delivery }))));
      expect(jobs).toHaveLength(3);
      expect(await recorded()).toEqual(expect.arrayContaining([keyOf(id, ACME_SECRET), keyOf(id, GLOBEX_SECRET), keyOf(id)]));
    });

    it("queues each tenant's copy of an event once, over HTTP: the receiver's tenant reaches the job", async () => {
      const app = express();
      const handoff = enqueue(boss, queue, { pool, table });
      const secrets: Readonly<Record<string, string>> = { 'acme:eu': ACME_SECRET, acme: GLOBEX_SECRET, 'acme-alias': GLOBEX_SECRET };
      app.post('/webhooks/:tenant', verifyWebhook({ tenants: { of: (req) => req.params.tenant, secret: (tenant) => secrets[tenant] }, now, dedup: false, handoff }));
      const tenants = await serveNode(createServer(app));
      try {
        const id = `evt_http_tenants_${queue}`;
        const postTo = async (tenant: string) => {
          const { body, headers } = signedRequest({ id, secret: secrets[tenant] });
          return (await fetch(`${tenants.url}/webhooks/${encodeURIComponent(tenant)}`, { method: 'POST', body, headers })).status;
        };
        expect([await postTo('acme:eu'), await postTo('acme')]).toEqual([202, 202]);
        expect([await postTo('acme:eu'), await postTo('acme')]).toEqual([200, 200]);
        // A tenant name whose secret is acme's is acme's endpoint: its delivery was queued already.
        expect(await postTo('acme-alias')).toBe(200);
        const jobs = await suite.jobs(queue);
        expect(jobs.map((job) => (job.data as QueuedDelivery).delivery.tenant).sort()).toEqual(['acme', 'acme:eu']);
        expect(jobs.map((job) => job.data)).toEqual(
          expect.arrayContaining([{ delivery: deliveryOf({ id, secret: ACME_SECRET, tenant: 'acme:eu' }) }, { delivery: deliveryOf({ id, secret: GLOBEX_SECRET, tenant: 'acme' }) }]),
        );
        expect(await recorded()).toEqual(expect.arrayContaining([keyOf(id, ACME_SECRET), keyOf(id, GLOBEX_SECRET)]));
      } finally {
        await tenants.close();
      }
    });

    it.each([
      ['no pg-boss', () => enqueue({} as TestPgBoss, 'q', { pool }), 'svc-webhooks: enqueue needs a pg-boss instance (new PgBoss(...)) as its first argument'],
      ['a pg-boss that is null', () => enqueue(null as unknown as TestPgBoss, 'q', { pool }), 'svc-webhooks: enqueue needs a pg-boss instance (new PgBoss(...)) as its first argument'],
      ['no queue name', () => enqueue(boss, '', { pool }), 'svc-webhooks: enqueue needs the name of a pg-boss queue'],
      ['a queue name that is no string', () => enqueue(boss, 42 as never, { pool }), 'svc-webhooks: enqueue needs the name of a pg-boss queue'],
      ['no options', () => enqueue(boss, 'q', undefined as unknown as PgBossEnqueueOptions), 'svc-webhooks: enqueue needs options with pool, a pg Pool on the database of pg-boss'],
      ['options that are null', () => enqueue(boss, 'q', null as unknown as PgBossEnqueueOptions), 'svc-webhooks: enqueue options must be an object'],
      ['no pool', () => enqueue(boss, 'q', {} as PgBossEnqueueOptions), 'svc-webhooks: enqueue needs pool, a pg Pool on the database of pg-boss'],
      ['job options that are no object', () => enqueue(boss, 'q', { pool, job: 3 as never }), 'svc-webhooks: enqueue options.job must be an object'],
      ['job options that are null', () => enqueue(boss, 'q', { pool, job: null as never }), 'svc-webhooks: enqueue options.job must be an object'],
      ['a timeout of 0', () => enqueue(boss, 'q', { pool, timeoutMs: 0 }), 'svc-webhooks: timeoutMs must be a whole number of milliseconds from 1 to 2147483647'],
      ['a timeout that is no whole number', () => enqueue(boss, 'q', { pool, timeoutMs: 1.5 }), 'svc-webhooks: timeoutMs must be a whole number of milliseconds from 1 to 2147483647'],
    ])('throws TypeError at creation for %s', (_name, create, message) => {
      expect(create).toThrow(new WebhookOptionsError(message));
    });

    it('throws TypeError at creation for a bad table name', () => {
      expect(() => enqueue(boss, 'q', { pool, table: 'Bad Name' })).toThrow(TypeError);
    });

    it("neither keeps nor changes the caller's options: a later change has no effect", async () => {
      const job: { retryLimit: number } = { retryLimit: 4 };
      const options = { pool, table, job };
      const handoff = enqueue(boss, queue, Object.freeze(options));
      job.retryLimit = 9;
      await handoff.hand(deliveryOf({ id: `evt_frozen_${queue}` }));
      const [queued] = await suite.jobs(queue);
      expect(await suite.major.jobOptions(boss, queue, queued!.id)).toMatchObject({ retryLimit: 4 });
      expect(options).toEqual({ pool, table, job: { retryLimit: 9 } });
    });
  });
});

/**
 * enqueue over real HTTP, on each pg-boss major under test: an Express
 * receiver whose handoff records the event's key and sends its pg-boss job in
 * one transaction, on the shared Postgres; what each outcome answers, and
 * what the queue and the processed-events table hold after it.
 */
import { createServer } from 'node:http';
import express from 'express';
import type pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../../adapters/express.js';
import type { WebhookEvent } from '../../../src/core/event.js';
import { enqueue, type EnqueueOptions } from '../../../src/queues/pg-boss/enqueue.js';
import type { PgPool, PgPoolClient } from '../../../src/queues/pg-boss/transaction.js';
import type { QueuedEvent } from '../../../src/queues/queued-event.js';
import { serveNode, type ServedApp } from '../../helpers/http-harness.js';
import { PG_BOSS_MAJORS, type TestPgBoss } from '../../helpers/pg-boss-majors.js';
import { pgBossSuite } from '../../helpers/pg-boss-suite.js';
import { now, SECRET, signedRequest, type RequestSpec } from '../../helpers/signed-request.js';
import { freePort } from '../../helpers/free-port.js';
import { pgPool, uniqueTable } from '../../postgres/clients.js';

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

  /** An Express receiver handing every event to `queueName`, without a lease store: the transaction is the deduplication. */
  async function receiver(queueName: string, options: EnqueueOptions, heard: unknown[]): Promise<ServedApp> {
    const app = express();
    const handoff = enqueue(boss, queueName, options);
    app.post('/webhooks', verifyWebhook({ secret: SECRET, now, dedup: false, handoff, onHandlerError: (error) => void heard.push(error) }));
    return serveNode(createServer(app));
  }

  async function post(spec: RequestSpec = {}, url = served!.url): Promise<{ status: number; retryAfter: string | null; body: string }> {
    const { body, headers } = signedRequest(spec);
    const response = await fetch(`${url}/webhooks`, { method: 'POST', body, headers });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.text() };
  }

  async function recorded(): Promise<string[]> {
    return (await pool.query(`SELECT id FROM ${table} ORDER BY id`)).rows.map((row: { id: string }) => row.id);
  }

  const DUPLICATE = JSON.stringify({ received: true, duplicate: true });

  describe('enqueue', () => {
    it("answers 202 once the job is sent and the event's id recorded, the job's data the verified event and its context", async () => {
      const id = `evt_${queue}`;
      expect(await post({ id, type: 'transcript.ready' })).toMatchObject({ status: 202, body: '' });
      const jobs = await suite.jobs(queue);
      expect(jobs).toHaveLength(1);
      expect(jobs[0]!.data).toEqual({ event: JSON.parse(signedRequest({ id, type: 'transcript.ready' }).body), context: { id, keyId: '0' } });
      expect(await recorded()).toContain(id);
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
      expect(jobs.map((job) => (job.data as QueuedEvent).context.id).sort()).toEqual([...ids].sort());
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
        expect(await recorded()).not.toContain(id);
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

    it("rolls the record back when the job's options make pg-boss fail, so no record is left without its job", async () => {
      const heard: unknown[] = [];
      // A start that is neither a date nor a number of seconds fails pg-boss's insert, in the transaction.
      const elsewhere = await receiver(queue, { pool, table, job: { startAfter: 'whenever' } }, heard);
      try {
        const id = `evt_bad_job_${queue}`;
        expect((await post({ id }, elsewhere.url)).status).toBe(503);
        expect(heard).toHaveLength(1);
        expect(await recorded()).not.toContain(id);
        expect(await suite.jobs(queue)).toEqual([]);
      } finally {
        await elsewhere.close();
      }
    });

    it('leaves neither the record nor the job when the commit fails: the job is sent in the transaction', async () => {
      // The pool's clients run everything but COMMIT, which fails as a lost connection would.
      const failingCommit: PgPool = {
        async connect() {
          const client = await pool.connect();
          return Object.assign(Object.create(client) as PgPoolClient, {
            query: (text: string, values?: unknown[]) =>
              text === 'COMMIT' ? Promise.reject(new Error('the connection was lost')) : client.query(text, values),
          });
        },
      };
      const heard: unknown[] = [];
      const elsewhere = await receiver(queue, { pool: failingCommit, table }, heard);
      try {
        const id = `evt_no_commit_${queue}`;
        expect(await post({ id }, elsewhere.url)).toMatchObject({ status: 503, retryAfter: '5' });
        expect(heard).toEqual([new Error('the connection was lost')]);
        expect(await recorded()).not.toContain(id);
        expect(await suite.jobs(queue)).toEqual([]);
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

    it("keys each tenant's event apart: the same id for two tenants is two jobs, each carrying its tenant, each queued once", async () => {
      const handoff = enqueue(boss, queue, { pool, table });
      const event = JSON.parse(signedRequest({ id: `evt_tenants_${queue}` }).body) as WebhookEvent;
      const contexts = [{ id: event.id, keyId: 'k1', tenant: 'acme:eu' }, { id: event.id, tenant: 'acme' }, { id: event.id }];
      expect(await Promise.all(contexts.map((context) => handoff.hand(event, context)))).toEqual([undefined, undefined, undefined]);
      expect(await Promise.all(contexts.map((context) => handoff.hand(event, context)))).toEqual(['duplicate', 'duplicate', 'duplicate']);
      const jobs = await suite.jobs(queue);
      expect(jobs.map((job) => job.data)).toEqual(expect.arrayContaining(contexts.map((context) => ({ event, context }))));
      expect(jobs).toHaveLength(3);
      // The tenant is percent-encoded, so its own ':' cannot make two pairs meet.
      expect(await recorded()).toEqual(expect.arrayContaining(['acme%3Aeu:' + event.id, 'acme:' + event.id, event.id]));
    });

    it("queues each tenant's copy of an event once, over HTTP: the receiver's tenant reaches the job", async () => {
      const app = express();
      const handoff = enqueue(boss, queue, { pool, table });
      app.post('/webhooks/:tenant', verifyWebhook({ secret: SECRET, now, dedup: false, tenant: (req) => req.params.tenant, handoff }));
      const tenants = await serveNode(createServer(app));
      try {
        const id = `evt_http_tenants_${queue}`;
        const { body, headers } = signedRequest({ id });
        const postTo = async (tenant: string) =>
          (await fetch(`${tenants.url}/webhooks/${encodeURIComponent(tenant)}`, { method: 'POST', body, headers })).status;
        expect([await postTo('acme:eu'), await postTo('acme')]).toEqual([202, 202]);
        expect([await postTo('acme:eu'), await postTo('acme')]).toEqual([200, 200]);
        const jobs = await suite.jobs(queue);
        expect(jobs.map((job) => (job.data as QueuedEvent).context.tenant).sort()).toEqual(['acme', 'acme:eu']);
        expect(await recorded()).toEqual(expect.arrayContaining([`acme%3Aeu:${id}`, `acme:${id}`]));
      } finally {
        await tenants.close();
      }
    });

    it.each([
      ['no pg-boss', () => enqueue({} as TestPgBoss, 'q', { pool }), 'svc-webhooks: enqueue needs a pg-boss instance (new PgBoss(...)) as its first argument'],
      ['no queue name', () => enqueue(boss, '', { pool }), 'svc-webhooks: enqueue needs the name of a pg-boss queue'],
      ['no options', () => enqueue(boss, 'q', undefined as unknown as EnqueueOptions), 'svc-webhooks: enqueue options must be an object'],
      ['no pool', () => enqueue(boss, 'q', {} as EnqueueOptions), 'svc-webhooks: enqueue needs pool, a pg Pool on the database of pg-boss'],
      ['job options that are no object', () => enqueue(boss, 'q', { pool, job: 3 as never }), 'svc-webhooks: enqueue options.job must be an object'],
    ])('throws TypeError at creation for %s', (_name, create, message) => {
      expect(create).toThrow(new TypeError(message));
    });

    it('throws TypeError at creation for a bad table name', () => {
      expect(() => enqueue(boss, 'q', { pool, table: 'Bad Name' })).toThrow(TypeError);
    });

    it("neither keeps nor changes the caller's options: a later change has no effect", async () => {
      const job: { retryLimit: number } = { retryLimit: 4 };
      const options = { pool, table, job };
      const handoff = enqueue(boss, queue, Object.freeze(options));
      job.retryLimit = 9;
      const event = JSON.parse(signedRequest({ id: `evt_frozen_${queue}` }).body) as WebhookEvent;
      await handoff.hand(event, { id: event.id });
      const [queued] = await suite.jobs(queue);
      expect(await suite.major.jobOptions(boss, queue, queued!.id)).toMatchObject({ retryLimit: 4 });
      expect(options).toEqual({ pool, table, job: { retryLimit: 9 } });
    });
  });
});

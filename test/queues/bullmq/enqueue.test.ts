/**
 * `enqueue` as every entry's `handoff`, over real HTTP and a real BullMQ
 * queue on both majors: one job per event under the claim, 202 once Redis
 * acknowledged it, 503 with Retry-After and the claim released when it did not.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Buffer } from 'node:buffer';
import { enqueue, jobIdOf, type JobQueue } from '../../../src/queues/bullmq/index.js';
import { redisUrl } from '../../helpers/redis-clients.js';
import { BULLMQ_MAJORS, dropQueue, uniqueQueueName, type TestQueue } from '../../helpers/bullmq-majors.js';
import { serveExpressHandlers } from '../../helpers/adapter-servers.js';
import { HANDOFF_ENTRIES, type HandoffEntry } from '../../helpers/bullmq-receivers.js';
import { freePort } from '../../helpers/free-port.js';
import { deliveryOf, keyOf, now, SECRET, signedRequest, type SignedRequest } from '../../helpers/signed-request.js';
import { TestDedupStore } from '../../helpers/test-dedup-store.js';
import { WebhookOptionsError } from '../../../src/base/options-error.js';

/** A secret of each tenant, for the specs with tenants. */
const ACME_SECRET = `whsec_${Buffer.from('acme-test-secret-0123456789abcdef').toString('base64')}`;
const GLOBEX_SECRET = `whsec_${Buffer.from('globex-test-secret-0123456789abcd').toString('base64')}`;
const TENANT_SECRETS: Readonly<Record<string, string>> = { acme: ACME_SECRET, globex: GLOBEX_SECRET };

const opened: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of opened.reverse()) await close();
});

async function served(entry: HandoffEntry, queue: JobQueue, dedup = new TestDedupStore(), timeoutMs?: number): Promise<{ post: (request: SignedRequest) => Promise<Response>; dedup: TestDedupStore }> {
  const handoff = enqueue(queue, timeoutMs === undefined ? {} : { timeoutMs });
  const app = await HANDOFF_ENTRIES[entry]({ secret: SECRET, now, dedup: { store: dedup }, handoff });
  opened.push(() => app.close());
  return { post: ({ body, headers }) => fetch(`${app.url}/webhooks`, { method: 'POST', body, headers }), dedup };
}

function openQueue(major: (typeof BULLMQ_MAJORS)[number], label: string, url = redisUrl()): TestQueue {
  const queue = major.queue(uniqueQueueName(label), url);
  opened.push(() => dropQueue(queue));
  return queue;
}

describe.each(BULLMQ_MAJORS)('enqueue on $name', (major) => {
  it.each(Object.keys(HANDOFF_ENTRIES) as HandoffEntry[])('%s: adds one job named by the event type, keyed on the event, answers 202, then a retry 200', async (entry) => {
    const queue = openQueue(major, 'enqueue');
    const { post, dedup } = await served(entry, queue);
    const request = signedRequest({ id: 'msg_2Kx', type: 'message.received' });

    const first = await post(request);
    expect([first.status, await first.text()]).toEqual([202, '']);
    expect(dedup.stateOf(keyOf('msg_2Kx'))).toBe('done');
    const job = await queue.getJob(jobIdOf(keyOf('msg_2Kx')));
    expect(job?.name).toBe('message.received');
    expect(job?.data).toEqual({ delivery: deliveryOf({ id: 'msg_2Kx', type: 'message.received' }) });

    const retry = await post(request);
    expect([retry.status, await retry.json()]).toEqual([200, { received: true, duplicate: true }]);
    expect(await queue.getJobCounts('wait', 'delayed', 'active')).toEqual({ wait: 1, delayed: 0, active: 0 });
  });

  it("keys the job by the dedup key of the tenant's secret, with the tenant an entry's tenant option reads, over HTTP", async () => {
    const queue = openQueue(major, 'http-tenants');
    const app = await serveExpressHandlers({
      tenants: { of: (req) => req.get('x-tenant'), secret: (tenant) => TENANT_SECRETS[tenant] },
      now,
      dedup: { store: new TestDedupStore() },
      handoff: enqueue(queue),
    });
    opened.push(() => app.close());
    const statuses: number[] = [];
    for (const tenant of ['acme', 'globex', 'acme']) {
      const { body, headers } = signedRequest({ secret: TENANT_SECRETS[tenant] });
      statuses.push((await fetch(`${app.url}/webhooks`, { method: 'POST', body, headers: { ...headers, 'x-tenant': tenant } })).status);
    }
    expect(statuses).toEqual([202, 202, 200]);
    expect((await queue.getJob(jobIdOf(keyOf('evt_1', ACME_SECRET))))?.data).toEqual({ delivery: deliveryOf({ secret: ACME_SECRET, tenant: 'acme' }) });
    expect((await queue.getJob(jobIdOf(keyOf('evt_1', GLOBEX_SECRET))))?.data).toEqual({ delivery: deliveryOf({ secret: GLOBEX_SECRET, tenant: 'globex' }) });
    expect(await queue.getJobCounts('wait')).toEqual({ wait: 2 });
  });

  it("keys the job on the delivery's dedupKey: the same id verified by two secrets is two jobs, each with its delivery", async () => {
    const queue = openQueue(major, 'tenants');
    const handoff = enqueue(queue);
    const acme = deliveryOf({ id: 'evt_1', keyId: 'k1', tenant: 'acme:eu', secret: ACME_SECRET });
    const globex = deliveryOf({ id: 'evt_1', tenant: 'globex', secret: GLOBEX_SECRET });
    await handoff.hand(acme);
    await handoff.hand(globex);
    await handoff.hand(globex);
    // The same secret under another tenant name is the same endpoint: one key, one job, the first delivery's.
    await handoff.hand({ ...acme, tenant: 'acme:us' });
    expect((await queue.getJob(jobIdOf(keyOf('evt_1', ACME_SECRET))))?.data).toEqual({ delivery: acme });
    expect((await queue.getJob(jobIdOf(keyOf('evt_1', GLOBEX_SECRET))))?.data).toEqual({ delivery: globex });
    expect(await queue.getJobCounts('wait')).toEqual({ wait: 2 });
  });

  it('queues events whose ids BullMQ would refuse as they are: integers, colons', async () => {
    const queue = openQueue(major, 'odd-ids');
    const handoff = enqueue(queue);
    for (const id of ['12', 'a:b:c', '-0']) await handoff.hand(deliveryOf({ id }));
    const scope = keyOf('').slice(0, -1);
    expect((await queue.getJob(`${scope}%3A12`))?.name).toBe('call.missed');
    expect((await queue.getJob(`${scope}%3Aa%3Ab%3Ac`))?.name).toBe('call.missed');
    expect((await queue.getJob(`${scope}%3A-0`))?.data).toEqual({ delivery: deliveryOf({ id: '-0' }) });
    expect(await queue.getJobCounts('wait')).toEqual({ wait: 3 });
  });

  it('passes job on to each job, as it was given: neither changed nor read again later', async () => {
    const queue = openQueue(major, 'job-options');
    const job = { attempts: 7, delay: 60_000 };
    const handoff = enqueue(queue, Object.freeze({ job }));
    job.attempts = 1;
    await handoff.hand(deliveryOf());
    expect(job).toEqual({ attempts: 1, delay: 60_000 });
    const added = (await queue.getJob(jobIdOf(keyOf('evt_1')))) as unknown as { opts: { attempts: number; delay: number } };
    expect(added.opts).toMatchObject({ attempts: 7, delay: 60_000 });
    expect(await queue.getJobCounts('delayed')).toEqual({ delayed: 1 });
  });

  it('answers 503 handoff_failed with Retry-After and releases the claim when Redis does not answer within timeoutMs', async () => {
    // Nothing listens there: BullMQ's connection queues the add until it would connect.
    const queue = openQueueOnDeadPort(major, await freePort());
    const { post, dedup } = await served('Express', queue, undefined, 300);
    const answer = await post(signedRequest());
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('5');
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('handoff_failed');
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('absent');
    // The error the handoff fails with, which names the bound.
    await expect(enqueue(queue, { timeoutMs: 300 }).hand(deliveryOf({ id: 'evt_2' }))).rejects.toThrow(
      new Error('svc-webhooks: Redis did not acknowledge the job within 300 ms'),
    );
  });

  it('answers 503 and releases the claim when the add fails', async () => {
    const queue = major.queue(uniqueQueueName('closed'), redisUrl());
    await queue.close();
    const { post, dedup } = await served('Fetch', queue);
    expect((await post(signedRequest())).status).toBe(503);
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('absent');
  });
});

function openQueueOnDeadPort(major: (typeof BULLMQ_MAJORS)[number], port: number): TestQueue {
  const queue = major.queue(uniqueQueueName('dead'), `redis://127.0.0.1:${port}`);
  queue.on('error', () => {});
  // Obliterating needs the server that never came: closing is all there is to do.
  opened.push(() => queue.close());
  return queue;
}

describe('enqueue options', () => {
  const queue: JobQueue = { add: async () => undefined };
  it.each([
    ['no queue', () => enqueue(undefined as never), 'svc-webhooks: enqueue needs a BullMQ Queue (an object with an add method)'],
    ['a queue that is null', () => enqueue(null as never), 'svc-webhooks: enqueue needs a BullMQ Queue (an object with an add method)'],
    ['a queue with no add method', () => enqueue({ name: 'q' } as never), 'svc-webhooks: enqueue needs a BullMQ Queue (an object with an add method)'],
    ['job options that are a number', () => enqueue(queue, { job: 3 as never }), 'svc-webhooks: enqueue options.job must be an object'],
    ['options that are no object', () => enqueue(queue, 7 as never), 'svc-webhooks: enqueue options must be an object'],
    ['job options that are no object', () => enqueue(queue, { job: null as never }), 'svc-webhooks: enqueue options.job must be an object'],
    ['a jobId of its own', () => enqueue(queue, { job: { jobId: 'x' } as never }), 'svc-webhooks: job.jobId is not taken: each event is one job, keyed on the event'],
    ['repeat', () => enqueue(queue, { job: { repeat: { every: 1000 } } as never }), 'svc-webhooks: job.repeat is not taken: each event is one job, keyed on the event'],
    ['a timeout of 0', () => enqueue(queue, { timeoutMs: 0 }), 'svc-webhooks: timeoutMs must be a whole number of milliseconds from 1 to 2147483647'],
  ])('refuses %s with a TypeError', (_name, create, message) => {
    expect(create).toThrow(new WebhookOptionsError(message));
  });
});

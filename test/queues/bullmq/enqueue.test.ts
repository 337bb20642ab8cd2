/**
 * `enqueue` as every entry's `handoff`, over real HTTP and a real BullMQ
 * queue on both majors: one job per event under the claim, 202 once Redis
 * acknowledged it, 503 with Retry-After and the claim released when it did not.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { enqueue, type JobQueue } from '../../../src/queues/bullmq/index.js';
import { redisUrl } from '../../dedup/redis-clients.js';
import { BULLMQ_MAJORS, dropQueue, uniqueQueueName, type TestQueue } from '../../helpers/bullmq-majors.js';
import { serveExpressHandlers } from '../../helpers/adapter-servers.js';
import { HANDOFF_ENTRIES, type HandoffEntry } from '../../helpers/bullmq-receivers.js';
import { freePort } from '../../helpers/free-port.js';
import { eventOf } from '../../helpers/events.js';
import { now, SECRET, signedRequest, type SignedRequest } from '../../helpers/signed-request.js';
import { TestDedupStore } from '../../helpers/test-dedup-store.js';

const opened: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of opened.reverse()) await close();
});

async function served(entry: HandoffEntry, queue: JobQueue, dedup = new TestDedupStore(), timeoutMs?: number): Promise<{ post: (request: SignedRequest) => Promise<Response>; dedup: TestDedupStore }> {
  const handoff = enqueue(queue, timeoutMs === undefined ? {} : { timeoutMs });
  const app = await HANDOFF_ENTRIES[entry]({ secret: SECRET, now, dedup, handoff });
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
    expect(dedup.stateOf('msg_2Kx')).toBe('done');
    const job = await queue.getJob('msg_2Kx');
    expect(job?.name).toBe('message.received');
    expect(job?.data).toEqual({ event: eventOf('message.received', 'msg_2Kx'), context: { id: 'msg_2Kx', keyId: '0' } });

    const retry = await post(request);
    expect([retry.status, await retry.json()]).toEqual([200, { received: true, duplicate: true }]);
    expect(await queue.getJobCounts('wait', 'delayed', 'active')).toEqual({ wait: 1, delayed: 0, active: 0 });
  });

  it("keys the job by the tenant an entry's tenant option reads, over HTTP", async () => {
    const queue = openQueue(major, 'http-tenants');
    const app = await serveExpressHandlers({ secret: SECRET, now, dedup: new TestDedupStore(), handoff: enqueue(queue), tenant: (req) => req.get('x-tenant') });
    opened.push(() => app.close());
    const { body, headers } = signedRequest();
    const statuses: number[] = [];
    for (const tenant of ['acme', 'globex', 'acme']) {
      statuses.push((await fetch(`${app.url}/webhooks`, { method: 'POST', body, headers: { ...headers, 'x-tenant': tenant } })).status);
    }
    expect(statuses).toEqual([202, 202, 200]);
    expect((await queue.getJob('acme%3Aevt_1'))?.data).toMatchObject({ context: { id: 'evt_1', tenant: 'acme' } });
    expect((await queue.getJob('globex%3Aevt_1'))?.data).toMatchObject({ context: { id: 'evt_1', tenant: 'globex' } });
    expect(await queue.getJobCounts('wait')).toEqual({ wait: 2 });
  });

  it('keys the job per tenant: the same id for two tenants is two jobs, each with its tenant', async () => {
    const queue = openQueue(major, 'tenants');
    const handoff = enqueue(queue);
    const event = eventOf('call.missed', 'evt_1');
    await handoff.hand(event, { id: 'evt_1', keyId: 'k1', tenant: 'acme:eu' });
    await handoff.hand(event, { id: 'evt_1', tenant: 'globex' });
    await handoff.hand(event, { id: 'evt_1', tenant: 'globex' });
    expect((await queue.getJob('acme%253Aeu%3Aevt_1'))?.data).toEqual({ event, context: { id: 'evt_1', keyId: 'k1', tenant: 'acme:eu' } });
    expect((await queue.getJob('globex%3Aevt_1'))?.data).toEqual({ event, context: { id: 'evt_1', tenant: 'globex' } });
    expect(await queue.getJobCounts('wait')).toEqual({ wait: 2 });
  });

  it('queues events whose ids BullMQ would refuse as they are: integers, colons', async () => {
    const queue = openQueue(major, 'odd-ids');
    const handoff = enqueue(queue);
    for (const id of ['12', 'a:b:c', '-0']) await handoff.hand(eventOf('call.missed', id), { id });
    expect((await queue.getJob('%312'))?.name).toBe('call.missed');
    expect((await queue.getJob('a%3Ab%3Ac'))?.name).toBe('call.missed');
    expect(await queue.getJobCounts('wait')).toEqual({ wait: 3 });
  });

  it('passes jobOptions on to each job, as they were given: neither changed nor read again later', async () => {
    const queue = openQueue(major, 'job-options');
    const jobOptions = { attempts: 7, delay: 60_000 };
    const handoff = enqueue(queue, Object.freeze({ jobOptions }));
    jobOptions.attempts = 1;
    await handoff.hand(eventOf('call.missed', 'evt_1'), { id: 'evt_1' });
    expect(jobOptions).toEqual({ attempts: 1, delay: 60_000 });
    const job = (await queue.getJob('evt_1')) as unknown as { opts: { attempts: number; delay: number } };
    expect(job.opts).toMatchObject({ attempts: 7, delay: 60_000 });
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
    expect(dedup.stateOf('evt_1')).toBe('absent');
  });

  it('answers 503 and releases the claim when the add fails', async () => {
    const queue = major.queue(uniqueQueueName('closed'), redisUrl());
    await queue.close();
    const { post, dedup } = await served('Fetch', queue);
    expect((await post(signedRequest())).status).toBe(503);
    expect(dedup.stateOf('evt_1')).toBe('absent');
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
    ['options that are no object', () => enqueue(queue, 7 as never), 'svc-webhooks: enqueue options must be an object'],
    ['jobOptions that are no object', () => enqueue(queue, { jobOptions: null as never }), 'svc-webhooks: jobOptions must be an object'],
    ['a jobId of its own', () => enqueue(queue, { jobOptions: { jobId: 'x' } as never }), 'svc-webhooks: jobOptions.jobId is not taken: each event is one job, keyed on the event'],
    ['repeat', () => enqueue(queue, { jobOptions: { repeat: { every: 1000 } } as never }), 'svc-webhooks: jobOptions.repeat is not taken: each event is one job, keyed on the event'],
    ['a timeout of 0', () => enqueue(queue, { timeoutMs: 0 }), 'svc-webhooks: timeoutMs must be a whole number of milliseconds from 1 to 2147483647'],
  ])('refuses %s with a TypeError', (_name, create, message) => {
    expect(create).toThrow(new TypeError(message));
  });
});

/**
 * The Fetch entry handing off to Cloudflare Queues and `work()` consuming
 * them, both in workerd without nodejs_compat, on one D1 database: each
 * event's handler succeeds once however its copies arrive.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloudflareDeployment, type CloudflareDeployment } from '../../helpers/cloudflare-queues.js';
import { until } from '../../helpers/until.js';

const WAIT_MS = 30_000;

/** What sending copies of an event led to: the receiver's answers, and the handler's successful runs once the consumer acked the messages expected. */
interface Delivered {
  readonly statuses: number[];
  readonly runs: number | undefined;
}

/**
 * Sends `copies` of event `id`, one after another or all at once, waits
 * until the consumer acked `acks` more messages, and answers what it came to.
 */
async function deliver(deployment: CloudflareDeployment, id: string, copies: number, acks: number, atOnce = false): Promise<Delivered> {
  const before = (await deployment.settled()).ack;
  const statuses: number[] = [];
  if (atOnce) statuses.push(...(await Promise.all(Array.from({ length: copies }, () => deployment.send(id)))));
  else for (let copy = 0; copy < copies; copy++) statuses.push(await deployment.send(id));
  await until(async () => (await deployment.settled()).ack >= before + acks, WAIT_MS);
  return { statuses, runs: (await deployment.runs()).get(id) };
}

/** Both Workers, started before the suite's tests with the receiver's store `receiverDedup`, stopped after them. */
function deployed(receiverDedup: 'd1' | 'none'): () => CloudflareDeployment {
  let deployment: CloudflareDeployment | undefined;
  beforeAll(async () => {
    deployment = await cloudflareDeployment(receiverDedup);
  }, 60_000);
  afterAll(() => deployment?.close());
  return () => deployment!;
}

describe('a receiver that queues every copy (no store of its own): work() keeps each event once', () => {
  const deployment = deployed('none');

  it('runs an event queued twice once, and acks both messages', async () => {
    expect(await deliver(deployment(), 'evt_twice', 2, 2)).toEqual({ statuses: [202, 202], runs: 1 });
  }, 40_000);

  it('runs an event of two concurrent requests once: the copy that finds it claimed waits, then is a duplicate', async () => {
    expect(await deliver(deployment(), 'evt_concurrent', 2, 2, true)).toEqual({ statuses: [202, 202], runs: 1 });
  }, 40_000);

  it('retries a failing handler until it succeeds, then runs it no more', async () => {
    const { retry } = await deployment().settled();
    expect(await deliver(deployment(), 'fail2_evt', 1, 1)).toEqual({ statuses: [202], runs: 1 });
    expect((await deployment().settled()).retry - retry).toBe(2);
    // A copy sent after it succeeded is acked without running.
    expect(await deliver(deployment(), 'fail2_evt', 1, 1)).toEqual({ statuses: [202], runs: 1 });
  }, 40_000);
});

describe('a receiver with a D1DedupStore: copies stop at the receiver', () => {
  const deployment = deployed('d1');

  it('answers a repeat 200 as a duplicate, queueing one message', async () => {
    expect(await deliver(deployment(), 'evt_repeat', 2, 1)).toEqual({ statuses: [202, 200], runs: 1 });
  }, 40_000);

  it('queues one of two concurrent requests for an event; the other is told it is in progress or done', async () => {
    const { statuses, runs } = await deliver(deployment(), 'evt_both', 2, 1, true);
    expect([statuses.filter((status) => status === 202).length, statuses.filter((status) => status === 409 || status === 200).length, runs]).toEqual([1, 1, 1]);
  }, 40_000);
});

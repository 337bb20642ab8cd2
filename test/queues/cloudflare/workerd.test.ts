/**
 * The Fetch entry handing off to Cloudflare Queues and `work()` consuming
 * them, both in workerd without nodejs_compat, on one D1 database: each
 * event's handler succeeds once however its copies arrive.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloudflareDeployment, type CloudflareDeployment } from '../../helpers/cloudflare-queues.js';
import { until } from '../../helpers/until.js';

const WAIT_MS = 30_000;

/** Waits until the consumer acked `count` more messages than it had at `before`. */
async function acked(deployment: CloudflareDeployment, before: number, count: number): Promise<void> {
  await until(async () => (await deployment.settled()).ack >= before + count, WAIT_MS);
}

describe('a receiver that queues every copy (no store of its own): work() keeps each event once', () => {
  let deployment: CloudflareDeployment;
  beforeAll(async () => {
    deployment = await cloudflareDeployment('none');
  }, 60_000);
  afterAll(() => deployment.close());

  it('runs an event queued twice once, and acks both messages', async () => {
    const { ack } = await deployment.settled();
    expect(await deployment.send('evt_twice')).toBe(202);
    expect(await deployment.send('evt_twice')).toBe(202);
    await acked(deployment, ack, 2);
    expect((await deployment.runs()).get('evt_twice')).toBe(1);
  }, 40_000);

  it('runs an event of two concurrent requests once: the copy that finds it claimed waits, then is a duplicate', async () => {
    const { ack } = await deployment.settled();
    expect(await Promise.all([deployment.send('evt_concurrent'), deployment.send('evt_concurrent')])).toEqual([202, 202]);
    await acked(deployment, ack, 2);
    expect((await deployment.runs()).get('evt_concurrent')).toBe(1);
  }, 40_000);

  it('retries a failing handler until it succeeds, then runs it no more', async () => {
    const before = await deployment.settled();
    expect(await deployment.send('fail2_evt')).toBe(202);
    await acked(deployment, before.ack, 1);
    expect((await deployment.runs()).get('fail2_evt')).toBe(1);
    expect((await deployment.settled()).retry - before.retry).toBe(2);
    // A copy sent after it succeeded is acked without running.
    expect(await deployment.send('fail2_evt')).toBe(202);
    await acked(deployment, before.ack, 2);
    expect((await deployment.runs()).get('fail2_evt')).toBe(1);
  }, 40_000);
});

describe('a receiver with a D1DedupStore: copies stop at the receiver', () => {
  let deployment: CloudflareDeployment;
  beforeAll(async () => {
    deployment = await cloudflareDeployment('d1');
  }, 60_000);
  afterAll(() => deployment.close());

  it('answers a repeat 200 as a duplicate, queueing one message', async () => {
    const { ack } = await deployment.settled();
    expect(await deployment.send('evt_repeat')).toBe(202);
    expect(await deployment.send('evt_repeat')).toBe(200);
    await acked(deployment, ack, 1);
    expect((await deployment.runs()).get('evt_repeat')).toBe(1);
  }, 40_000);

  it('queues one of two concurrent requests for an event; the other is told it is in progress or done', async () => {
    const { ack } = await deployment.settled();
    const statuses = await Promise.all([deployment.send('evt_both'), deployment.send('evt_both')]);
    expect(statuses.filter((status) => status === 202)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409 || status === 200)).toHaveLength(1);
    await acked(deployment, ack, 1);
    expect((await deployment.runs()).get('evt_both')).toBe(1);
  }, 40_000);
});

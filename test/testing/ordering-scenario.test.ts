/**
 * simulateDelivery's ordering scenario against real receivers: one built
 * with `ordering` and one without (the last write wins), each keeping the
 * state of the event it ran last, over HTTP (the Fetch entry behind
 * node:http) and as each in-process target; the plan its seed makes; the
 * service's retries of what got no 2xx; and its options checked at call.
 */
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { verifyWebhook as azureWebhook } from '../../adapters/azure.js';
import { verifyWebhook as fetchWebhook } from '../../adapters/fetch.js';
import { verifyWebhook as lambdaWebhook } from '../../adapters/lambda.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';
import type { WebhookEvent } from '../../src/index.js';
import { orderingPlan } from '../../src/testing/ordering-scenario.js';
import { simulateDelivery, testEvent, type SimulateDeliveryOptions, type SimulatedAttempt, type SimulatedOrdering } from '../../src/testing/index.js';
import { serveFetch } from '../helpers/adapter-servers.js';
import { recordingLogger } from '../helpers/recording-logger.js';

const SECRET = `whsec_${Buffer.from('ordering-scenario-secret-0000000').toString('base64')}`;
const noWait = async (): Promise<void> => undefined;
/** The attempts of each delivery of the plan. */
const byCopy = (attempts: readonly SimulatedAttempt[]): SimulatedAttempt[][] => [...new Set(attempts.map(({ copy }) => copy))].map((copy) => attempts.filter((one) => one.copy === copy));
const BY_TIMESTAMP = { version: (event: WebhookEvent) => event.timestamp };
// Each stale event skipped is one warning line: recorded, not printed.
const { logger } = recordingLogger();

type Target = Parameters<typeof simulateDelivery>[0];
/** What a receiver keeps of its object: the event it ran last. */
interface Kept {
  id: string;
  timestamp: string;
}

/** A receiver keeping the state of the event it ran last, with `ordering` or not; `reset` builds it anew. */
function lastWriteReceiver(ordered: boolean) {
  let kept: Kept | undefined;
  const build = () =>
    fetchWebhook({ secret: SECRET, logger, outcomeHeader: 'on', ...(ordered && { ordering: BY_TIMESTAMP }) }, (event) => {
      kept = { id: event.id, timestamp: String(event.timestamp) };
    });
  let receiver = build();
  return {
    target: (request: Request) => receiver(request),
    state: () => kept,
    reset: () => {
      receiver = build();
      kept = undefined;
    },
  };
}

describe('simulateDelivery with ordering, over HTTP to the Fetch entry', () => {
  it.each([
    [true, 'with ordering: the state equals the in-order one, each older event after the newest answered stale'],
    [false, 'without ordering: the state is not the in-order one, and the older event applied after a newer one is named'],
  ])('%s: %s', async (ordered) => {
    const receiver = lastWriteReceiver(ordered);
    const server = await serveFetch(receiver.target);
    try {
      const event = testEvent('message.received');
      const { delivered, attempts, ordering } = await simulateDelivery(`${server.url}/webhooks`, event, {
        secret: SECRET,
        sleep: noWait,
        ordering: { state: receiver.state, reset: receiver.reset },
      });
      expect(delivered).toBe(true);
      expect(ordering!.events).toHaveLength(5);
      expect(ordering!.events.at(-1)).toBe(event.id);
      expect(ordering!.inOrderDelivered).toBe(true);
      expect(ordering!.expected).toEqual({ id: event.id, timestamp: event.timestamp });
      expect(ordering!.seed).toBe(1);
      // Every event delivered, some of them twice.
      expect(new Set(attempts.map(({ event: id }) => id))).toEqual(new Set(ordering!.events));
      expect(new Set(attempts.map(({ copy }) => copy)).size).toBeGreaterThan(5);
      if (ordered) {
        expect(ordering!.equal).toBe(true);
        expect(ordering!.actual).toEqual(ordering!.expected);
        expect(ordering!.olderAfterNewer).toBeUndefined();
        expect(attempts.some(({ stale }) => stale)).toBe(true);
      } else {
        expect(ordering!.equal).toBe(false);
        expect(ordering!.actual).not.toEqual(ordering!.expected);
        const { older, newer } = ordering!.olderAfterNewer!;
        expect(ordering!.events.indexOf(older)).toBeLessThan(ordering!.events.indexOf(newer));
        expect(attempts.some(({ stale }) => stale)).toBe(false);
      }
    } finally {
      await server.close();
    }
  });
});

/** Each in-process target, on a receiver with ordering or without, keeping the event it ran last in `kept`. */
const TARGETS: ReadonlyArray<readonly [string, (ordered: boolean, keep: (event: WebhookEvent) => void) => Target]> = [
  ['a Fetch handler', (ordered, keep) => fetchWebhook({ secret: SECRET, logger, ...(ordered && { ordering: BY_TIMESTAMP }) }, keep)],
  ['a Lambda handler', (ordered, keep) => ({ lambda: lambdaWebhook({ secret: SECRET, logger, ...(ordered && { ordering: BY_TIMESTAMP }) }, keep), format: 'rest' })],
  ['an Azure handler', (ordered, keep) => ({ azure: azureWebhook({ secret: SECRET, logger, ...(ordered && { ordering: BY_TIMESTAMP }) }, keep) })],
];

describe.each(TARGETS)('simulateDelivery with ordering to %s, against the expected state', (_name, receiver) => {
  it.each([true, false])('ordering %s: equal exactly when the receiver orders', async (ordered) => {
    let kept: string | undefined;
    const event = testEvent('call.missed');
    const target = receiver(ordered, (one) => void (kept = String(one.timestamp)));
    const result = await simulateDelivery(target, event, { secret: SECRET, sleep: noWait, ordering: { state: async () => kept, expected: event.timestamp, versions: 4, seed: 7 } });
    expect([result.delivered, result.ordering!.equal, result.ordering!.olderAfterNewer === undefined]).toEqual([true, ordered, ordered]);
    expect(result.ordering!.expected).toBe(event.timestamp);
    expect(result.ordering).not.toHaveProperty('inOrderDelivered');
    expect(result.ordering!.events).toHaveLength(4);
  });
});

describe('the ordering scenario', () => {
  /**
   * A receiver answering 204 to everything, recording each event id it got,
   * and the ids of the requests sent at once, in groups: each answer waits a
   * turn of the event loop, so a group's requests all arrive before it.
   */
  function recorder(answer: (id: string, seen: number) => Response | Promise<Response> = () => new Response(null, { status: 204 })) {
    const ids: string[] = [];
    const groups: string[][] = [];
    let running = 0;
    return {
      ids,
      groups,
      target: async (request: Request): Promise<Response> => {
        const id = request.headers.get('webhook-id')!;
        ids.push(id);
        const seen = ids.filter((one) => one === id).length;
        if (running === 0) groups.push([]);
        groups.at(-1)!.push(id);
        running += 1;
        await new Promise((resolve) => setImmediate(resolve));
        running -= 1;
        return answer(id, seen);
      },
    };
  }
  /** The versions (1 the oldest) of event ids, for a literal plan. */
  const versionsOf = (ordering: SimulatedOrdering, ids: readonly string[]): number[] => ids.map((id) => ordering.events.indexOf(id) + 1);
  const plain = (seed?: number): SimulateDeliveryOptions => ({ secret: SECRET, sleep: noWait, ordering: { state: () => 0, expected: 0, ...(seed !== undefined && { seed }) } });

  it('delivers the same plan for the same seed, another for another seed', async () => {
    const event = testEvent('call.missed');
    const runs = [];
    for (const seed of [3, 3, 4]) {
      const { ordering, attempts } = await simulateDelivery(recorder().target, event, plain(seed));
      runs.push(attempts.map(({ copy, version }) => [copy, version]));
      expect(ordering!.seed).toBe(seed);
    }
    expect(runs[0]).toEqual(runs[1]);
    expect(runs[0]).not.toEqual(runs[2]);
  });

  it('makes older versions of the event: fresh evt_ ids, a second apart, the event itself the newest; or takes them given', async () => {
    const event = testEvent('call.missed', { timestamp: '2025-03-01T10:00:00Z' });
    const { ordering } = await simulateDelivery(recorder().target, event, { ...plain(), ordering: { state: () => 0, expected: 0, versions: 3 } });
    expect(ordering!.events).toEqual([expect.stringMatching(/^evt_/), expect.stringMatching(/^evt_/), event.id]);
    const received: WebhookEvent[] = [];
    const receiver = async (request: Request): Promise<Response> => {
      received.push((await request.json()) as WebhookEvent);
      return new Response(null, { status: 204 });
    };
    await simulateDelivery(receiver, event, { ...plain(), ordering: { state: () => 0, expected: 0, versions: 3 } });
    expect(new Set(received.map(({ timestamp }) => timestamp))).toEqual(new Set(['2025-03-01T09:59:58Z', '2025-03-01T09:59:59Z', '2025-03-01T10:00:00Z']));
    const older = [testEvent('call.missed'), testEvent('call.missed')];
    const given = await simulateDelivery(recorder().target, event, { ...plain(), ordering: { state: () => 0, expected: 0, older } });
    expect(given.ordering!.events).toEqual([older[0]!.id, older[1]!.id, event.id]);
  });

  it("retries each attempt without a 2xx on its own, 409 included, after the service's waits, up to maxAttempts", async () => {
    // Each event's first attempt is answered 409, as while another event of its object runs.
    const { target, ids } = recorder((_id, seen) => (seen === 1 ? Response.json({ error: { code: 'delivery_in_progress' } }, { status: 409 }) : new Response(null, { status: 204 })));
    const waits: number[] = [];
    const event = testEvent('call.missed');
    const result = await simulateDelivery(target, event, { ...plain(), sleep: async (ms) => void waits.push(ms) });
    expect(result.delivered).toBe(true);
    for (const copyAttempts of byCopy(result.attempts)) expect(copyAttempts.map(({ status }) => status).at(-1)).toBe(204);
    expect(result.attempts.filter(({ status }) => status === 409).map(({ code }) => code)).toEqual(Array(5).fill('delivery_in_progress'));
    expect(waits.length).toBeGreaterThan(0);
    expect(waits.every((ms) => ms === 1000)).toBe(true);
    expect(new Set(ids).size).toBe(5);

    const failing = recorder(() => new Response(null, { status: 500 }));
    const given = await simulateDelivery(failing.target, event, { ...plain(), maxAttempts: 2 });
    expect(given.delivered).toBe(false);
    for (const copyAttempts of byCopy(given.attempts)) expect(copyAttempts).toHaveLength(2);
  });

  it('reads a stale answer by the outcome header too, and names no older event applied for it', async () => {
    let sent = 0;
    const event = testEvent('call.missed');
    // The newest runs; every other answer is a 200 whose outcome header says stale.
    const target = async (request: Request): Promise<Response> => {
      sent += 1;
      const fresh = request.headers.get('webhook-id') === event.id;
      return new Response(null, { status: fresh ? 204 : 200, headers: fresh ? {} : { 'svc-webhooks-outcome': 'stale; key-id=0' } });
    };
    const { ordering, attempts } = await simulateDelivery(target, event, plain());
    expect(sent).toBeGreaterThan(5);
    expect(attempts.filter(({ stale }) => stale).map(({ event: id }) => id)).not.toContain(event.id);
    expect(ordering!.olderAfterNewer).toBeUndefined();
  });

  it('plans each version once in a shuffled order, the newest never last and ending its group, about half again', () => {
    let seeds = 0;
    for (let seed = 0; seed < 200; seed++) {
      let state = seed;
      const random = (): number => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
      const groups = orderingPlan(5, random);
      const sends = groups.flat();
      const firsts = sends.filter((version, i) => sends.indexOf(version) === i);
      expect([...firsts].sort()).toEqual([0, 1, 2, 3, 4]);
      expect(firsts.at(-1)).not.toBe(4);
      expect(sends.length).toBeGreaterThan(5);
      const newestGroup = groups.find((group) => group.includes(4))!;
      expect(newestGroup.at(-1)).toBe(4);
      for (const group of groups) expect(group.length).toBeGreaterThanOrEqual(1);
      if (groups.some((group) => group.length > 1)) seeds += 1;
    }
    // Some groups are sent at once.
    expect(seeds).toBeGreaterThan(100);
  });

  // A receiver applying every event: the groups show the plan, the first older event after a newer one is named.
  it.each<[number | undefined, number, number[][], [number, number]]>([
    // No seed: the default, 1.
    [undefined, 5, [[5], [3, 2], [1], [3], [4, 4], [1]], [3, 5]],
    // The newest sent again before the older ones: not an older event applied after it.
    [4, 3, [[3], [3, 1, 2], [2]], [1, 3]],
    // The oldest applied first: the event named is the one applied after the newest, not after the first.
    [10, 3, [[1], [3], [2], [2]], [2, 3]],
    [3, 2, [[2], [2, 1]], [1, 2]],
    // The first group ends at its size, before the newest is sent.
    [19, 4, [[2, 3], [4], [1], [4]], [1, 4]],
  ])('seed %s over %s versions: the same groups every time, each delivery numbered as sent', async (seed, versions, plan, olderAfterNewer) => {
    for (const run of [1, 2]) {
      const { target, groups } = recorder();
      const { ordering, attempts } = await simulateDelivery(target, testEvent('call.missed'), { ...plain(), ordering: { state: () => 0, expected: 0, versions, ...(seed !== undefined && { seed }) } });
      expect(groups.map((group) => versionsOf(ordering!, group)), `run ${run}`).toEqual(plan);
      expect(attempts.map(({ copy, version }) => [copy, version])).toEqual(plan.flat().map((version, i) => [i + 1, version]));
      const { older, newer } = ordering!.olderAfterNewer!;
      expect(versionsOf(ordering!, [older, newer])).toEqual(olderAfterNewer);
    }
  });

  it('places each retry in a later group the seed picks, after a wait doubling from 1 s, up to maxAttempts per delivery', async () => {
    const oldest = testEvent('call.missed');
    const middle = testEvent('call.missed');
    // The oldest is never delivered; each other event fails its first attempt only.
    const { target, groups } = recorder((id, seen) => new Response(null, { status: id === oldest.id || seen === 1 ? 503 : 204 }));
    const waits: number[] = [];
    const { delivered, attempts, ordering } = await simulateDelivery(target, testEvent('call.missed'), {
      ...plain(),
      maxAttempts: 3,
      sleep: async (ms) => void waits.push(ms),
      ordering: { state: () => 0, expected: 0, older: [oldest, middle] },
    });
    expect(groups.map((group) => versionsOf(ordering!, group))).toEqual([[3], [1, 2], [3, 3], [1, 2], [1]]);
    // Copy 2, the oldest, stops after its third attempt.
    expect(attempts.map(({ copy, version, status }) => [copy, version, status])).toEqual([
      [1, 3, 503],
      [2, 1, 503],
      [3, 2, 503],
      [4, 3, 204],
      [1, 3, 204],
      [2, 1, 503],
      [3, 2, 204],
      [2, 1, 503],
    ]);
    // Before each group holding a retry: 1 s for second attempts, 2 s for the third.
    expect(waits).toEqual([1000, 1000, 2000]);
    expect(delivered).toBe(false);
  });

  it('reports what each attempt got: its status, its error code, a duplicate answer, and nothing it did not get', async () => {
    const oldest = testEvent('call.missed');
    const middle = testEvent('call.missed');
    const event = testEvent('call.missed');
    const { target } = recorder((id, seen) => {
      if (id === oldest.id) return Response.json({ error: { code: 'dedup_unavailable' } }, { status: 503 });
      if (id === middle.id) return new Promise<Response>(() => undefined);
      return seen === 1 ? new Response(null, { status: 204 }) : Response.json({ received: true, duplicate: true });
    });
    const { delivered, attempts, ordering } = await simulateDelivery(target, event, {
      ...plain(),
      maxAttempts: 1,
      answerWindowMs: 50,
      ordering: { state: () => 0, expected: 0, older: [oldest, middle] },
    });
    const ms = expect.any(Number);
    expect(attempts).toStrictEqual([
      { copy: 1, event: event.id, version: 3, status: 204, ms },
      { copy: 2, event: oldest.id, version: 1, status: 503, code: 'dedup_unavailable', ms },
      { copy: 3, event: middle.id, version: 2, ms },
      { copy: 4, event: event.id, version: 3, status: 200, duplicate: true, ms },
    ]);
    expect(delivered).toBe(false);
    // Only the newest ran: no older event after it, and no field saying so.
    expect(ordering).not.toHaveProperty('olderAfterNewer');
  });

  it('retries each event of the in-order delivery up to maxAttempts, and says when one of them ended without a 2xx', async () => {
    const older = testEvent('call.missed');
    const event = testEvent('call.missed');
    const { target, ids } = recorder((id) => new Response(null, { status: id === older.id ? 503 : 204 }));
    const sentAtReset: number[] = [];
    const waits: number[] = [];
    const { ordering } = await simulateDelivery(target, event, {
      ...plain(),
      maxAttempts: 2,
      sleep: async (ms) => void waits.push(ms),
      ordering: { state: () => 0, reset: () => void sentAtReset.push(ids.length), older: [older] },
    });
    expect(sentAtReset).toEqual([0, 3]);
    expect(ids.slice(0, 3)).toEqual([older.id, older.id, event.id]);
    expect(waits[0]).toBe(1000);
    expect(ordering!.inOrderDelivered).toBe(false);
  });

  it.each<[string, SimulateDeliveryOptions['ordering'] | 'copies', string]>([
    ['no state', { expected: 0 } as never, "svc-webhooks: ordering.state is required: a function answering the object's state as the receiver keeps it"],
    ['neither expected nor reset', { state: () => 0 }, 'svc-webhooks: ordering needs expected (the state after the lifecycle in order) or reset (to deliver the lifecycle in order first)'],
    ['a reset that is no function', { state: () => 0, reset: 'yes' as never }, 'svc-webhooks: ordering.reset must be a function'],
    ['older and versions', { state: () => 0, expected: 0, older: [testEvent('call.missed')], versions: 3 }, 'svc-webhooks: ordering takes older or versions, not both'],
    ['one version', { state: () => 0, expected: 0, versions: 1 }, 'svc-webhooks: ordering.versions must be a whole number of at least 2'],
    ['a fractional seed', { state: () => 0, expected: 0, seed: 1.5 }, 'svc-webhooks: ordering.seed must be a whole number'],
    ['an empty older', { state: () => 0, expected: 0, older: [] }, 'svc-webhooks: ordering.older must be a list of at least one event, oldest first'],
    ['an older event without an id', { state: () => 0, expected: 0, older: [testEvent('call.missed'), {} as never] }, 'svc-webhooks: ordering.older must be a list of at least one event, oldest first'],
    ['an older event that is null', { state: () => 0, expected: 0, older: [null as never] }, 'svc-webhooks: ordering.older must be a list of at least one event, oldest first'],
    ['ordering that is no object', null as never, 'svc-webhooks: ordering options must be an object'],
    ['copies beside it', 'copies', 'svc-webhooks: ordering sends copies of its own: leave copies out'],
  ])('refuses %s before sending anything', async (_title, ordering, message) => {
    const { target, ids } = recorder();
    const options = ordering === 'copies' ? { ...plain(), copies: 2 } : { ...plain(), ordering: ordering! };
    await expect(simulateDelivery(target, testEvent('call.missed'), options)).rejects.toThrow(new WebhookOptionsError(message));
    expect(ids).toEqual([]);
  });

  it('refuses older events sharing an id, and an event without an RFC 3339 timestamp to make versions from', async () => {
    const event = testEvent('call.missed');
    await expect(simulateDelivery(recorder().target, event, { ...plain(), ordering: { state: () => 0, expected: 0, older: [event] } })).rejects.toThrow(
      new WebhookOptionsError("svc-webhooks: each event of ordering.older needs an id of its own, other than the event's"),
    );
    await expect(simulateDelivery(recorder().target, { ...event, timestamp: 'yesterday' }, plain())).rejects.toThrow(
      new WebhookOptionsError('svc-webhooks: ordering makes older versions of the event from its timestamp, which is no RFC 3339 time: give ordering.older'),
    );
  });
});

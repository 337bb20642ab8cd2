/**
 * What every entry does with `ordering`, over its real transport: events of
 * one object applied in order whatever order their deliveries arrive in,
 * one at a time, a stale one skipped (or run, marked), a failed one leaving
 * no version behind, and events without a version run as without ordering.
 */
import { expect, it } from 'vitest';
import type { DedupStore, OrderingOptions } from '../../src/index.js';
import { MemoryDedupStore } from '../../src/stores/memory-dedup-store.js';
import type { AdapterHarness, BuildHarness, HarnessSpec } from './adapter-contract.js';
import { RouteSpy } from './adapter-contract.js';
import { recordingLogger, type RecordedLine } from './recording-logger.js';
import { NOW_SECONDS, now, SECRET, signedRequest, type SignedRequest } from './signed-request.js';

/** The `version` of the events here: the envelope's `timestamp`, the time the event happened. */
export const BY_TIMESTAMP: OrderingOptions = { version: (event) => event.timestamp };

/** The time version `version` of an object happened: a second apart, as RFC 3339. */
function happenedAt(version: number): string {
  return new Date((NOW_SECONDS - 3600 + version) * 1000).toISOString();
}

/** The delivery of version `version` of `object` (its event id names both), or of an event with no timestamp. */
export function versionRequest(version: number | undefined, object = 'msg_1'): SignedRequest {
  const id = `evt_${object}_v${version ?? 'none'}`;
  const timestamp = version === undefined ? {} : { timestamp: happenedAt(version) };
  return signedRequest({ id, type: 'message.received', body: JSON.stringify({ id, type: 'message.received', ...timestamp, data: { object: { id: object } } }) });
}

/** The versions the route ran, in the order it ran them. */
function versionsRun(route: RouteSpy): number[] {
  return route.calls.map(({ event }) => Math.round(Date.parse(event.timestamp as string) / 1000) - (NOW_SECONDS - 3600));
}

/** A store of its own for one test: the entry's default kind unless the contract is given another. */
export type StoreOfTest = () => DedupStore | Promise<DedupStore>;

const memoryStore: StoreOfTest = () => new MemoryDedupStore({ now });

async function withOrdering(
  build: BuildHarness,
  store: StoreOfTest,
  ordering: OrderingOptions,
  run: (harness: AdapterHarness, route: RouteSpy, lines: readonly RecordedLine[]) => Promise<void>,
): Promise<void> {
  const route = new RouteSpy();
  const { logger, lines } = recordingLogger();
  const spec: HarnessSpec = { options: { secret: SECRET, now, dedup: { store: await store() }, ordering, logger }, route };
  const harness = await build(spec);
  try {
    await run(harness, route, lines);
  } finally {
    await harness.close();
  }
}

/**
 * Posts `request`, retried on a 409 as the service retries it (a route answers before its claim is
 * settled, which a remote store takes a moment to record); answers the last response.
 */
async function postRetried(harness: AdapterHarness, request: SignedRequest): Promise<Response> {
  let response = await harness.post(request);
  for (let retries = 0; response.status === 409 && retries < 100; retries++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    response = await harness.post(request);
  }
  return response;
}

/** Sends each version one after another, each retried on a 409; answers the statuses. */
async function sendInTurn(harness: AdapterHarness, versions: readonly number[]): Promise<number[]> {
  const statuses: number[] = [];
  for (const version of versions) statuses.push((await postRetried(harness, versionRequest(version))).status);
  return statuses;
}

/** The ordering tests of one entry, on its real transport, with a store of `store`'s for each test (a `MemoryDedupStore` by default). */
export function orderingContract(build: BuildHarness, store: StoreOfTest = memoryStore): void {
  it('ordering: runs events that arrive in order, each once', async () => {
    await withOrdering(build, store, BY_TIMESTAMP, async (harness, route) => {
      expect(await sendInTurn(harness, [1, 2, 3, 4, 5])).toEqual([204, 204, 204, 204, 204]);
      expect(versionsRun(route)).toEqual([1, 2, 3, 4, 5]);
    });
  });

  it('ordering: skips events that arrive reversed, answering 200 stale, so the newest state stands, with a warning for each', async () => {
    await withOrdering(build, store, BY_TIMESTAMP, async (harness, route, lines) => {
      expect(await sendInTurn(harness, [5])).toEqual([204]);
      for (const version of [4, 3, 2, 1]) {
        const response = await postRetried(harness, versionRequest(version));
        expect(response.status).toBe(200);
        expect(await response.json()).toEqual({ received: true, stale: true });
      }
      expect(versionsRun(route)).toEqual([5]);
      expect(lines).toStrictEqual(
        [4, 3, 2, 1].map((version) => [
          'warn',
          { code: 'stale_event', id: `evt_msg_1_v${version}`, type: 'message.received', keyId: '0' },
          `event "evt_msg_1_v${version}" of type "message.received" is older than one of its object processed before: skipped, and answered 200`,
        ]),
      );
    });
  });

  it('ordering: never runs an event after a higher version of its object, shuffled and duplicated', async () => {
    await withOrdering(build, store, BY_TIMESTAMP, async (harness, route) => {
      const statuses = await sendInTurn(harness, [3, 1, 3, 5, 2, 5, 4, 1]);
      expect(statuses).toEqual([204, 200, 200, 204, 200, 200, 200, 200]);
      expect(versionsRun(route)).toEqual([3, 5]);
    });
  });

  it('ordering: answers 409 for another event of an object while one of its events runs, then runs it', async () => {
    await withOrdering(build, store, BY_TIMESTAMP, async (harness, route) => {
      let release!: () => void;
      route.hold = new Promise((resolve) => (release = resolve));
      const first = harness.post(versionRequest(1));
      await expect.poll(() => route.calls.length).toBe(1);
      const second = await harness.post(versionRequest(2));
      expect(second.status).toBe(409);
      expect(((await second.json()) as { error: { code: string } }).error.code).toBe('delivery_in_progress');
      // Another object is not held up.
      route.hold = undefined;
      expect((await harness.post(versionRequest(1, 'msg_2'))).status).toBe(204);
      release();
      expect((await first).status).toBe(204);
      expect((await postRetried(harness, versionRequest(2))).status).toBe(204);
      expect(versionsRun(route)).toEqual([1, 1, 2]);
    });
  });

  it('ordering: records no version for an event whose route failed: an older one runs, then its retry', async () => {
    await withOrdering(build, store, BY_TIMESTAMP, async (harness, route) => {
      route.failing = true;
      expect((await harness.post(versionRequest(5))).status).toBe(500);
      route.failing = false;
      expect(await sendInTurn(harness, [3, 5])).toEqual([204, 204]);
      expect(versionsRun(route)).toEqual([5, 3, 5]);
    });
  });

  it("ordering: runs a stale event marked delivery.stale under staleEvents: 'run'", async () => {
    await withOrdering(build, store, { ...BY_TIMESTAMP, staleEvents: 'run' }, async (harness, route) => {
      expect(await sendInTurn(harness, [5, 4, 6])).toEqual([204, 204, 204]);
      expect(route.calls.map(({ stale }) => stale)).toEqual([undefined, true, undefined]);
    });
  });

  it('ordering: runs events without a version as without ordering, and refuses a version that cannot order 422', async () => {
    await withOrdering(build, store, BY_TIMESTAMP, async (harness, route) => {
      expect((await harness.post(versionRequest(5))).status).toBe(204);
      expect((await harness.post(versionRequest(undefined))).status).toBe(204);
      expect(route.calls).toHaveLength(2);
      const id = 'evt_bad_version';
      const bad = await harness.post(
        signedRequest({ id, type: 'message.received', body: JSON.stringify({ id, type: 'message.received', timestamp: 'yesterday', data: { object: { id: 'msg_1' } } }) }),
      );
      expect(bad.status).toBe(422);
      expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_event_order');
      expect(route.calls).toHaveLength(2);
    });
  });
}

/**
 * Exactly once on Cloudflare without a server: 1,000 events, each sent 1 to
 * 3 times in a shuffled order, 16 at once, to a receiver that queues every
 * copy (no store of its own), consumed by work() whose handler fails one
 * run in three; all in workerd, on one D1 database. Once the consumer acked
 * every message, each event ran its handler to success exactly once: none
 * lost, none twice.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cloudflareDeployment, type CloudflareDeployment } from '../../helpers/cloudflare-queues.js';
import { until } from '../../helpers/until.js';

const EVENTS = 1_000;
const AT_ONCE = 16;

let deployment: CloudflareDeployment;
beforeAll(async () => {
  deployment = await cloudflareDeployment('none');
}, 60_000);
afterAll(() => deployment.close());

/** Each event's id once per copy, shuffled. */
function shuffledSends(): string[] {
  const sends = Array.from({ length: EVENTS }, (_, i) => Array.from({ length: 1 + Math.floor(Math.random() * 3) }, () => `random_${i}`)).flat();
  for (let i = sends.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [sends[i], sends[j]] = [sends[j]!, sends[i]!];
  }
  return sends;
}

it('runs each of 1,000 events once, sent 1 to 3 times each, under a handler failing at random', async () => {
  const sends = shuffledSends();
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: AT_ONCE }, async () => {
      while (next < sends.length) statuses.push(await deployment.send(sends[next++]!));
    }),
  );
  expect(statuses.filter((status) => status !== 202)).toEqual([]);
  await until(async () => (await deployment.settled()).ack >= sends.length, 150_000);
  const runs = await deployment.runs();
  const lost = Array.from({ length: EVENTS }, (_, i) => `random_${i}`).filter((id) => !runs.has(id));
  const twice = [...runs].filter(([, count]) => count !== 1);
  expect({ lost, twice, acked: (await deployment.settled()).ack }).toEqual({ lost: [], twice: [], acked: sends.length });
  // The handler failed, and copies met their event held: both paths ran.
  expect((await deployment.settled()).retry).toBeGreaterThan(0);
}, 240_000);

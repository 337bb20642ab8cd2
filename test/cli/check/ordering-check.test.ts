/**
 * `svc-webhooks check`'s advice on ordering, against real receivers: the
 * Fetch entry behind node:http and Express, with `ordering` (the row
 * passes) and without it (the row warns, naming the older event processed
 * after the newer, and the run still exits 0).
 */
import { describe, expect, it } from 'vitest';
import { verifyWebhook as fetchWebhook } from '../../../adapters/fetch.js';
import type { OrderingOptions, WebhookEvent } from '../../../src/index.js';
import { serveExpressHandlers, serveFetch, type ServedApp } from '../../helpers/adapter-servers.js';
import { recordingLogger } from '../../helpers/recording-logger.js';
import { checkJson, SECRET } from '../delivery-scenarios.js';
import { inProcessCli, recordedTiming } from '../in-process-cli.js';

const BY_TIMESTAMP: OrderingOptions = { version: (event) => event.timestamp };

/** A receiver keeping the event it ran last of each object, as `serve` builds it with `ordering` or not. */
async function withReceiver(serve: (keep: (event: WebhookEvent) => void) => Promise<ServedApp>, run: (url: string, ran: WebhookEvent[]) => Promise<void>): Promise<void> {
  const ran: WebhookEvent[] = [];
  const app = await serve((event) => void ran.push(event));
  try {
    await run(`${app.url}/webhooks`, ran);
  } finally {
    await app.close();
  }
}

/** The ordering row of a `check --json` run, and the run's exit code. */
async function orderingRow(url: string) {
  const { run, report } = await checkJson(inProcessCli(recordedTiming()), url);
  return { code: run.code, row: report.checks.find(({ id }) => id === 'ordering')! };
}

const { logger } = recordingLogger();
const fetchReceiver = (ordering?: OrderingOptions, outcomeHeader: 'on' | 'off' = 'off') => (keep: (event: WebhookEvent) => void) =>
  serveFetch(fetchWebhook({ secret: SECRET, logger, outcomeHeader, ...(ordering !== undefined && { ordering }) }, keep));

describe('check, on ordering', () => {
  it.each([
    ['the Fetch entry with ordering', fetchReceiver(BY_TIMESTAMP)],
    ['the Fetch entry with ordering and the outcome header', fetchReceiver(BY_TIMESTAMP, 'on')],
    ['Express with ordering', (keep: (event: WebhookEvent) => void) => serveExpressHandlers({ secret: SECRET, logger, ordering: BY_TIMESTAMP, on: { 'webhook.test': (event) => keep(event as WebhookEvent) } })],
  ])('passes %s, run after run, each with new events', async (_name, serve) => {
    await withReceiver(serve, async (url, ran) => {
      for (let round = 0; round < 2; round++) {
        const { code, row } = await orderingRow(url);
        expect(row).toStrictEqual({
          id: 'ordering',
          check: 'An older event sent after a newer one of its object is skipped',
          passed: true,
          detail: expect.stringMatching(/^the older event was answered stale: newer 204 \(\d+ ms\)(, receiver: processed.*)?, older 200 \(\d+ ms\)(, receiver: stale.*)?$/),
        });
        expect(code).toBe(0);
        // No object had two events run: the older one was skipped.
        expect(ran.filter(({ data }) => ran.filter((one) => one.data.object.id === data.object.id).length > 1)).toEqual([]);
      }
    });
  });

  it('warns of a receiver without ordering, naming the older event it processed after the newer, and exits 0', async () => {
    await withReceiver(fetchReceiver(), async (url, ran) => {
      const { code, row } = await orderingRow(url);
      const [newer, older] = ran.filter(({ data }) => ran.filter((one) => one.data.object.id === data.object.id).length === 2);
      expect(Date.parse(String(older!.timestamp))).toBeLessThan(Date.parse(String(newer!.timestamp)));
      expect(row).toStrictEqual({
        id: 'ordering',
        check: 'An older event sent after a newer one of its object is skipped',
        passed: true,
        warning: true,
        detail: expect.stringMatching(new RegExp(`^no ordering guard: event ${older!.id} \\(older\\) was processed after ${newer!.id} of the same object \\(newer 204 \\(\\d+ ms\\), older 204 \\(\\d+ ms\\)\\)$`)),
      });
      expect(code).toBe(0);
    });
  });

  it("warns of a receiver under staleEvents: 'run', which processes the older event all the same", async () => {
    await withReceiver(fetchReceiver({ ...BY_TIMESTAMP, staleEvents: 'run' }), async (url) => {
      const { row } = await orderingRow(url);
      expect([row.warning, row.detail]).toEqual([true, expect.stringMatching(/^no ordering guard: /)]);
    });
  });

  /** A receiver judging events by their envelope's timestamp: one over 30 s old is given `older`'s answer, any other 204. */
  const byAge = (older: () => Response) => (): Promise<ServedApp> =>
    serveFetch(async (request) => {
      const { timestamp } = (await request.json()) as { timestamp: string };
      return Date.parse(timestamp) < Date.now() - 30_000 ? older() : new Response(null, { status: 204 });
    });

  it('passes a receiver saying stale by its outcome header alone', async () => {
    await withReceiver(byAge(() => new Response(null, { status: 200, headers: { 'svc-webhooks-outcome': 'stale; key-id=0' } })), async (url) => {
      const { row } = await orderingRow(url);
      expect(row).toStrictEqual(expect.objectContaining({ passed: true, detail: expect.stringMatching(/^the older event was answered stale: .*, older 200 \(\d+ ms\), receiver: stale; key-id=0$/) }));
      expect(row).not.toHaveProperty('warning');
    });
  });

  it('warns of a receiver refusing the older event, which the service would retry', async () => {
    await withReceiver(byAge(() => Response.json({ error: { code: 'stale' } }, { status: 409 })), async (url) => {
      const { row } = await orderingRow(url);
      expect([row.warning, row.detail]).toEqual([true, expect.stringMatching(/^the older event was not accepted, so the service would retry it: newer 204 \(\d+ ms\), older 409 stale \(\d+ ms\)$/)]);
    });
  });
});

/**
 * The page of `svc-webhooks dev` in headless Chromium (Debian's package,
 * driven by playwright-core), over a relay in front of an Express receiver
 * built with svc-webhooks: deliveries appear as they are answered, a
 * tampered one shows its diagnosis, each replay mode gives its outcome, a
 * send from the page is delivered and recorded, and the keyboard works.
 * Each test opens a page of its own over a relay of its own, so that they
 * hold in any order (`--sequence.shuffle`). What a sender or a receiver
 * wrote is shown as text, and the page's policy lets no script run but its
 * own. The screenshot it takes is kept in .cache/ (docs/dev-page.png is one).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RelayOptions } from '../../../src/cli/dev/relay.js';
import { KNOWN_EVENT_TYPES } from '../../../src/index.js';
import { testEvent } from '../../../src/testing/index.js';
import { RELAY_SECRET, startRelayRig, type RelayRig } from '../../helpers/dev-relay.js';

const ARTEFACTS = resolve(import.meta.dirname, '../../../.cache/dev-page');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let browser: Browser;
/** Milliseconds from each delivery's answer to its row on the page. */
const latencies: number[] = [];

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await mkdir(ARTEFACTS, { recursive: true });
  await writeFile(join(ARTEFACTS, 'latencies.json'), JSON.stringify(latencies));
});

/** A page open on a relay of its own. */
interface Opened {
  readonly rig: RelayRig;
  readonly page: Page;
}

const opened: Opened[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const { rig, page } of opened.splice(0)) {
    await page.close();
    await rig.close();
  }
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** Runs before the page's own script, and is not subject to its policy: records the hostile strings' script that ran, and what the policy refused. */
const WATCH = `
  window.__ran = [];
  window.__refused = [];
  window.__xss = (where) => window.__ran.push(where);
  document.addEventListener('securitypolicyviolation', (event) => window.__refused.push(event.effectiveDirective));
`;

/** Starts a relay (`options` its own) in front of the Express receiver, and opens its page, still empty. */
async function openPage(options: Partial<RelayOptions> = {}): Promise<Opened> {
  const rig = await startRelayRig(options);
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  opened.push({ rig, page });
  await page.addInitScript(WATCH);
  await page.goto(rig.relay.inspectorUrl);
  await page.locator('#empty').waitFor();
  return { rig, page };
}

const rows = (page: Page) => page.locator('#deliveries tr');
const status = (page: Page) => page.locator('#status');
/** The hostile strings' script that ran, and the directives the page's policy refused something by. */
const watched = (page: Page) => page.evaluate('({ ran: window.__ran, refused: window.__refused })') as Promise<{ ran: string[]; refused: string[] }>;

/** Markup, a script's end tag and quotes, each of which runs script if taken as markup. */
const HOSTILE = `<img src=x onerror="window.__xss('markup')">'"</script><script>window.__xss('script')</script>`;

/** A receiver that answers every request 400 with `HOSTILE` as its body, key id and tenant; its URL. */
async function hostileReceiver(): Promise<string> {
  const outcome = `invalid_signature; key-id=${encodeURIComponent(HOSTILE)}; tenant=${encodeURIComponent(HOSTILE)}`;
  const server = createServer((_req, res) => void res.writeHead(400, { 'content-type': 'text/html', 'svc-webhooks-outcome': outcome }).end(HOSTILE));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
}

describe('svc-webhooks dev: the page, in Chromium', () => {
  it('lists each delivery as it is answered, newest first: the five types, and a tampered one', async () => {
    const { rig, page } = await openPage();
    for (const [i, type] of KNOWN_EVENT_TYPES.entries()) {
      const answer = await rig.deliver(testEvent(type));
      const answered = performance.now();
      expect(answer.status).toBe(204);
      await rows(page).nth(i).waitFor({ timeout: 5000 });
      latencies.push(performance.now() - answered);
    }
    expect((await rig.deliver(testEvent('call.missed'), new Date(), true)).status).toBe(400);
    await expect.poll(() => rows(page).count()).toBe(6);
    const top = rows(page).first();
    await expect.poll(() => top.locator('td').allTextContents()).toEqual([expect.stringMatching(/^6/), expect.any(String), 'call.missed', expect.stringMatching(/^evt_/), '', 'invalid_signature', '400', 'invalid_signature', expect.stringMatching(/^\d+$/)]);
    expect(await rows(page).nth(5).locator('td').nth(2).textContent()).toBe(KNOWN_EVENT_TYPES[0]);
    expect(await rows(page).nth(5).locator('td').nth(7).textContent()).toBe('processed');
  });

  it("shows a tampered delivery's diagnosis, its headers with the signature shortened, and its body as formatted JSON", async () => {
    const { rig, page } = await openPage();
    expect((await rig.deliver(testEvent('call.missed'), new Date(), true)).status).toBe(400);
    await rows(page).first().click();
    await expect.poll(() => page.locator('#verdict').textContent()).toMatch(/^invalid: invalid_signature: .*\ncause: /);
    const headers = await page.locator('#headers').textContent();
    expect(headers).toMatch(/webhook-signature: v1,\S{9}…/);
    expect(await page.locator('#body').textContent()).toMatch(/^\{\n {2}"id": "evt_/);
    expect(await page.locator('#answer').textContent()).toMatch(/^400 in \d+ ms\noutcome: invalid_signature/);
  });

  it('shows a body too large or nested too deep to format as received, cut at 65,536 characters, and says so', async () => {
    const { rig, page } = await openPage();
    // 48 KB nested 4,000 deep, indented a gigabyte; and 4 MiB.
    const deep = `{"id":"evt_deep","type":"webhook.test","data":${'['.repeat(3999)}[${Array(20_000).fill(0).join(',')}]${']'.repeat(3999)}}`;
    const large = JSON.stringify({ id: 'evt_large', type: 'webhook.test', pad: 'x'.repeat(4 * 1024 * 1024 - 100) });
    for (const body of [deep, large]) await fetch(rig.relay.webhookUrl, { method: 'POST', body });
    await expect.poll(() => rows(page).count()).toBe(2);
    await rows(page).nth(1).click();
    await expect.poll(() => page.locator('#detail-heading').textContent()).toBe('#1 webhook.test evt_deep');
    expect(await page.locator('#body').textContent()).toBe(deep);
    expect(await page.locator('#body-note').textContent()).toBe('Shown as received: a body is formatted only up to 64 KiB and 64 levels deep.');
    await rows(page).first().click();
    await expect.poll(() => page.locator('#detail-heading').textContent()).toBe('#2 webhook.test evt_large');
    expect(await page.locator('#body').textContent()).toBe(large.slice(0, 65_536));
    expect(await page.locator('#body-note').textContent()).toBe(
      `Shown as received: a body is formatted only up to 64 KiB and 64 levels deep. Cut at 65,536 characters of ${large.length}: GET /api/deliveries/2 gives it whole.`,
    );
    // A small body is formatted whole, with no note.
    expect((await rig.deliver(testEvent('call.missed'))).status).toBe(204);
    await expect.poll(() => rows(page).count()).toBe(3);
    await rows(page).first().click();
    await expect.poll(() => page.locator('#body').textContent()).toMatch(/^\{\n {2}"id": "evt_/);
    expect(await page.locator('#body-note').isHidden()).toBe(true);
  });

  it('shows what a sender and a receiver wrote as text in every field, markup and quotes included, and runs none of it', async () => {
    const { rig, page } = await openPage({ forward: await hostileReceiver() });
    const body = JSON.stringify({ id: HOSTILE, type: HOSTILE, data: { object: { id: HOSTILE } } });
    const headers = { 'webhook-id': HOSTILE, 'webhook-timestamp': HOSTILE, 'webhook-signature': `v1,${HOSTILE}`, 'x-hostile': HOSTILE };
    expect((await fetch(rig.relay.webhookUrl, { method: 'POST', headers, body })).status).toBe(400);
    await expect.poll(() => rows(page).count()).toBe(1);
    // Type, id, tenant and outcome in the list.
    const cells = await rows(page).first().locator('td').allTextContents();
    expect([cells[2], cells[3], cells[4], cells[7]]).toEqual([HOSTILE, HOSTILE, HOSTILE, 'invalid_signature']);
    expect(await rows(page).first().locator('td').nth(3).getAttribute('title')).toBe(HOSTILE);
    await rows(page).first().click();
    await expect.poll(() => page.locator('#detail-heading').textContent()).toBe(`#1 ${HOSTILE} ${HOSTILE}`);
    expect(await page.locator('#verdict').textContent()).toContain(`\ntimestamp: "${HOSTILE}" is not Unix seconds`);
    expect(await page.locator('#answer').textContent()).toMatch(/^400 in \d+ ms\n/);
    expect((await page.locator('#answer').textContent())!.replace(/^400 in \d+ ms\n/, '')).toBe(`outcome: invalid_signature, key ${HOSTILE}, tenant ${HOSTILE}\n\n${HOSTILE}`);
    const shown = (await page.locator('#headers').textContent())!.split('\n');
    expect(shown).toEqual(expect.arrayContaining([`webhook-id: ${HOSTILE}`, `webhook-timestamp: ${HOSTILE}`, `x-hostile: ${HOSTILE}`]));
    expect(await page.locator('#body').textContent()).toBe(JSON.stringify(JSON.parse(body), null, 2));
    // The page's own send of a type that is markup: the relay's refusal, in the status line.
    await page.getByLabel('Event type').fill(HOSTILE);
    await page.getByRole('button', { name: 'Send signed' }).click();
    await expect.poll(() => status(page).textContent()).toBe(`testEvent takes an event type, as 'call.missed', not ${JSON.stringify(HOSTILE)}`);
    expect(await page.locator('body img, main script').count()).toBe(0);
    expect(await watched(page)).toEqual({ ran: [], refused: [] });
  });

  it("runs its own script and style under a policy without 'unsafe-inline', and refuses script let in as markup", async () => {
    const { rig, page } = await openPage();
    const policy = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
    expect(policy).toMatch(/^default-src 'none'; script-src 'sha256-[\w+/]{43}='; style-src 'sha256-[\w+/]{43}='; connect-src 'self'$/);
    // Its style applies and its script ran, with nothing refused.
    expect(await page.evaluate("getComputedStyle(document.querySelector('header')).backgroundColor")).toBe('rgb(29, 42, 58)');
    expect(await page.locator('#webhook-url').textContent()).toBe(rig.relay.webhookUrl);
    expect(await watched(page)).toEqual({ ran: [], refused: [] });
    // Markup set by mistake: its handler and its script are refused.
    await page.evaluate(`
      document.querySelector('#status').innerHTML = ${JSON.stringify(HOSTILE)};
      const script = document.createElement('script');
      script.textContent = "window.__xss('inserted')";
      document.body.append(script);
    `);
    await expect.poll(async () => (await watched(page)).refused).toEqual(expect.arrayContaining(['script-src-attr', 'script-src-elem']));
    expect((await watched(page)).ran).toEqual([]);
  });

  it('replays a delivery in each mode: exact and re-signed are duplicates, a new id is processed', async () => {
    const { rig, page } = await openPage();
    expect((await rig.deliver(testEvent('call.missed'))).status).toBe(204);
    await rows(page).first().click();
    await expect.poll(() => page.locator('#detail-heading').textContent()).toMatch(/^#1 /);
    for (const [mode, label, outcome] of [
      ['exact', 'Replay exact bytes', '200 duplicate'],
      ['resign', 'Replay re-signed', '200 duplicate'],
      ['new-id', 'Replay with a new id', '204 processed'],
    ] as const) {
      await page.getByRole('button', { name: label }).click();
      await expect.poll(() => status(page).textContent()).toMatch(new RegExp(`^Replayed #1 \\(${mode}\\) as #\\d+: ${outcome}$`));
    }
    await expect.poll(() => rows(page).count()).toBe(4);
    const replayed = rows(page).first().locator('td').first();
    expect([await replayed.textContent(), await replayed.getAttribute('title')]).toEqual(['4 ↻1', 'replay of 1 (new-id)']);
  });

  it('sends an event from the page, signed, through the relay, where it is recorded', async () => {
    const { rig, page } = await openPage();
    await page.getByLabel('Event type').fill('call.missed');
    await page.getByLabel(/^data/).fill('{"object": {"id": "call_from_page"}}');
    await page.getByRole('button', { name: 'Send signed' }).click();
    await expect.poll(() => status(page).textContent()).toMatch(/^Sent call\.missed as #1: 204$/);
    await expect.poll(() => rows(page).count()).toBe(1);
    expect(await rows(page).first().locator('td').first().textContent()).toBe('1 sent');
    expect(rig.handled).toHaveLength(1);
  });

  it('moves through the list and opens a delivery with the keyboard', async () => {
    const { rig, page } = await openPage();
    for (const type of ['call.missed', 'webhook.test'] as const) expect((await rig.deliver(testEvent(type))).status).toBe(204);
    await expect.poll(() => rows(page).count()).toBe(2);
    await rows(page).first().focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#detail-heading').textContent()).toMatch(/^#1 call\.missed /);
    expect(await rows(page).nth(1).getAttribute('aria-selected')).toBe('true');
  });

  it('holds no secret, and keeps a screenshot', async () => {
    const { rig, page } = await openPage();
    for (const type of KNOWN_EVENT_TYPES) expect((await rig.deliver(testEvent(type))).status).toBe(204);
    expect((await rig.deliver(testEvent('call.missed'), new Date(), true)).status).toBe(400);
    await expect.poll(() => rows(page).count()).toBe(6);
    await rows(page).first().click();
    await expect.poll(() => page.locator('#verdict').textContent()).toMatch(/^invalid: invalid_signature/);
    expect(await page.content()).not.toContain(RELAY_SECRET.slice('whsec_'.length));
    await mkdir(ARTEFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTEFACTS, 'dev-page.png'), fullPage: true });
  });
});

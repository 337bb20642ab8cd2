/**
 * The page of `svc-webhooks dev` in headless Chromium (Debian's package,
 * driven by playwright-core), over a relay in front of an Express receiver
 * built with svc-webhooks: deliveries appear as they are answered, a
 * tampered one shows its diagnosis, each replay mode gives its outcome, a
 * send from the page is delivered and recorded, and the keyboard works.
 * What it shows: the end of an id, every column at 1,440 px, one column at
 * 800 px, the bytes as received beside the formatted body, the receiver's
 * headers, relative times; what it does: filter, clear, open what a replay
 * or a send made, copy as curl, fill a sample of a type. Each test opens a
 * page of its own over a relay of its own, so that they hold in any order
 * (`--sequence.shuffle`). What a sender or a receiver wrote is shown as
 * text, and the page's policy lets no script run but its own. The
 * screenshot it takes is kept in .cache/ (docs/dev-page.png is one).
 */
import { Buffer } from 'node:buffer';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryRecord } from '../../../src/cli/dev/delivery-log.js';
import type { RelayOptions } from '../../../src/cli/dev/relay.js';
import { KNOWN_EVENT_TYPES } from '../../../src/index.js';
import { signedHeaders, testEvent } from '../../../src/testing/index.js';
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

/** Starts a relay (`options` its own) in front of the Express receiver, and opens its page (`width` wide, `prepare`d first), still empty. */
async function openPage(options: Partial<RelayOptions> = {}, width = 1440, prepare: (page: Page) => Promise<void> = async () => {}): Promise<Opened> {
  const rig = await startRelayRig(options);
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  opened.push({ rig, page });
  await prepare(page);
  await page.addInitScript(WATCH);
  await page.goto(rig.relay.inspectorUrl);
  await page.locator('#empty').waitFor();
  return { rig, page };
}

const rows = (page: Page) => page.locator('#deliveries tr');
const status = (page: Page) => page.locator('#status');
const heading = (page: Page) => page.locator('#detail-heading');
/** A poll with room for a machine under load. */
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 10_000 });
/** Where `selector` is in the viewport, and the viewport's size. */
const box = (page: Page, selector: string) =>
  page.evaluate(`(() => { const r = document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect(); return { top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: innerHeight, width: innerWidth }; })()`) as Promise<{
    top: number;
    bottom: number;
    left: number;
    right: number;
    height: number;
    width: number;
  }>;
/** Whether `selector` is wholly within the viewport. */
const inSight = async (page: Page, selector: string): Promise<boolean> => {
  const { top, bottom, left, right, height, width } = await box(page, selector);
  return top >= 0 && bottom <= height && left >= 0 && right <= width;
};
/** A delivery of the relay's log, as the API gives it. */
const record = async (rig: RelayRig, n: number) => (await (await rig.api(`/api/deliveries/${n}`)).json()) as DeliveryRecord;
/** The hostile strings' script that ran, and the directives the page's policy refused something by. */
const watched = (page: Page) => page.evaluate('({ ran: window.__ran, refused: window.__refused })') as Promise<{ ran: string[]; refused: string[] }>;

/** Markup, a script's end tag and quotes, each of which runs script if taken as markup. */
const HOSTILE = `<img src=x onerror="window.__xss('markup')">'"</script><script>window.__xss('script')</script>`;

/** A receiver that answers every request with `status`, `headers` (as Node's raw list) and `body`; its URL. */
async function answeringReceiver(status: number, headers: string[], body: string): Promise<string> {
  const server = createServer((_req, res) => void res.writeHead(status, headers).end(body));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
}

/** A receiver that answers every request 400 with `HOSTILE` as its body, key id, tenant and a header; its URL. */
function hostileReceiver(): Promise<string> {
  const outcome = `invalid_signature; key-id=${encodeURIComponent(HOSTILE)}; tenant=${encodeURIComponent(HOSTILE)}`;
  return answeringReceiver(400, ['content-type', 'text/html', 'svc-webhooks-outcome', outcome, 'x-hostile', HOSTILE], HOSTILE);
}



describe('svc-webhooks dev: the page, in Chromium', { timeout: 60_000 }, () => {
  it('lists each delivery as it is answered, newest first: the five types, and a tampered one', async () => {
    const { rig, page } = await openPage();
    for (const [i, type] of KNOWN_EVENT_TYPES.entries()) {
      const answer = await rig.deliver(testEvent(type));
      const answered = performance.now();
      expect(answer.status).toBe(204);
      await rows(page).nth(i).waitFor({ timeout: 10_000 });
      latencies.push(performance.now() - answered);
    }
    expect((await rig.deliver(testEvent('call.missed'), new Date(), true)).status).toBe(400);
    await poll(() => rows(page).count()).toBe(6);
    const top = rows(page).first();
    await poll(() => top.locator('td').allTextContents()).toEqual([expect.stringMatching(/^6/), expect.stringMatching(/^(just now|\d+ s ago)$/), 'call.missed', expect.stringMatching(/^evt_…/), '', 'invalid_signature', '400', 'invalid_signature', expect.stringMatching(/^\d+$/)]);
    expect(await rows(page).nth(5).locator('td').nth(2).textContent()).toBe(KNOWN_EVENT_TYPES[0]);
    expect(await rows(page).nth(5).locator('td').nth(7).textContent()).toBe('processed');
  });

  it("shows the end of an id, which tells apart ids made together, whole and uncut, and the whole id in its tooltip", async () => {
    const { rig, page } = await openPage();
    // Made in the same millisecond: the first 14 characters alike, and the list's old cut showed no more.
    const ids = ['msg_01M8HGS6P0QZX7T2B4C9D1E5FA', 'msg_01M8HGS6P0K3M9W2N8R5T1V7YB'];
    for (const id of ids) expect((await rig.deliver(testEvent('call.missed', { id }))).status).toBe(204);
    await poll(() => rows(page).count()).toBe(2);
    for (const [i, [id, shown]] of [[ids[1], 'msg_…N8R5T1V7YB'], [ids[0], 'msg_…B4C9D1E5FA']].entries()) {
      const cell = rows(page).nth(i).locator('td').nth(3);
      expect([await cell.textContent(), await cell.getAttribute('title')]).toEqual([shown, id]);
      // Shown whole: nothing of it is cut off by the column.
      expect(await cell.evaluate((td) => td.scrollWidth <= td.clientWidth)).toBe(true);
    }
    await rows(page).first().click();
    await poll(() => heading(page).textContent()).toBe(`#2 call.missed ${ids[1]}`);
  });

  it.each([1440, 800])('keeps every column in sight and uncut at %i px, once replays and a send are listed', async (width) => {
    const { rig, page } = await openPage({}, width);
    for (const type of KNOWN_EVENT_TYPES) expect((await rig.deliver(testEvent(type))).status).toBe(204);
    expect((await rig.deliver(testEvent('ai_summary.ready'), new Date(), true)).status).toBe(400);
    for (const mode of ['exact', 'resign', 'new-id']) expect((await rig.api('/api/deliveries/5/replay', { mode })).status).toBe(201);
    expect((await rig.api('/api/send', { type: 'ai_summary.ready' })).status).toBe(201);
    await poll(() => rows(page).count()).toBe(10);
    expect(await rows(page).nth(1).locator('td').first().textContent()).toBe('9 ↻5');
    // The table fits its section: nothing to scroll to, no cell cut, and the last column inside the section, in sight.
    expect(await page.locator('.scroll').evaluate((scroll) => scroll.scrollWidth <= scroll.clientWidth)).toBe(true);
    expect(await page.locator('#list th, #list td').evaluateAll((cells) => cells.filter((cell) => cell.scrollWidth > cell.clientWidth).length)).toBe(0);
    expect((await box(page, '#list thead th:last-child')).right).toBeLessThanOrEqual((await box(page, '#list-section')).right);
    expect(await inSight(page, '#list thead th:last-child')).toBe(true);
  });

  it('stacks the list, the delivery and Send in one column at 800 px, with nothing past the window', async () => {
    const { rig, page } = await openPage({}, 800);
    expect((await rig.deliver(testEvent('call.missed'))).status).toBe(204);
    await rows(page).first().click();
    await poll(() => heading(page).textContent()).toMatch(/^#1 /);
    const [list, detail, send] = [await box(page, '#list-section'), await box(page, '#detail-section'), await box(page, '#send-form')];
    expect([detail.top > list.bottom, send.top > detail.bottom]).toEqual([true, true]);
    expect([detail.left, detail.right]).toEqual([list.left, list.right]);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(800);
  });

  it("shows a tampered delivery's diagnosis, its headers with the signature shortened, and its body as formatted JSON", async () => {
    const { rig, page } = await openPage();
    expect((await rig.deliver(testEvent('call.missed'), new Date(), true)).status).toBe(400);
    await rows(page).first().click();
    await poll(() => page.locator('#verdict').textContent()).toMatch(/^invalid: invalid_signature: .*\ncause: /);
    const headers = await page.locator('#headers').textContent();
    expect(headers).toMatch(/webhook-signature: v1,\S{9}…/);
    expect(await page.locator('#body').textContent()).toMatch(/^\{\n {2}"id": "evt_/);
    expect(await page.locator('#answer').textContent()).toMatch(/^400 in \d+ ms\noutcome: invalid_signature/);
  });

  it('shows the bytes as received beside the formatted body: a body diagnosed as re-serialized shows what came in', async () => {
    const { rig, page } = await openPage();
    // Signed compact, sent indented with 4 spaces and a final CR LF, as a proxy that re-serializes would.
    const event = testEvent('call.missed');
    const signed = JSON.stringify(event);
    const sent = `${JSON.stringify(event, null, 4)}\r\n`;
    expect((await fetch(rig.relay.webhookUrl, { method: 'POST', headers: signedHeaders(signed, { secret: RELAY_SECRET }), body: sent })).status).toBe(400);
    await rows(page).first().click();
    await poll(() => page.locator('#verdict').textContent()).toContain('re-serialized');
    expect(await page.locator('#body-raw').textContent()).toBe(sent);
    expect(await page.locator('#body-size').textContent()).toBe(`As received: ${Buffer.byteLength(sent)} bytes, the last a newline`);
    expect(await page.locator('#body').textContent()).toBe(JSON.stringify(event, null, 2));
    // Side by side at 1,440 px.
    const [formatted, raw] = [await box(page, '#body-formatted'), await box(page, '#body-received')];
    expect([raw.top, raw.left > formatted.right]).toEqual([formatted.top, true]);
  });

  it('shows a body too large or nested too deep to format as received, cut at 65,536 characters, and says so', async () => {
    const { rig, page } = await openPage();
    // 48 KB nested 4,000 deep, indented a gigabyte; and 4 MiB.
    const deep = `{"id":"evt_deep","type":"webhook.test","data":${'['.repeat(3999)}[${Array(20_000).fill(0).join(',')}]${']'.repeat(3999)}}`;
    const large = JSON.stringify({ id: 'evt_large', type: 'webhook.test', pad: 'x'.repeat(4 * 1024 * 1024 - 100) });
    for (const body of [deep, large]) await fetch(rig.relay.webhookUrl, { method: 'POST', body });
    await poll(() => rows(page).count()).toBe(2);
    await rows(page).nth(1).click();
    await poll(() => heading(page).textContent()).toBe('#1 webhook.test evt_deep');
    expect(await page.locator('#body-raw').textContent()).toBe(deep);
    expect(await page.locator('#body-formatted').isHidden()).toBe(true);
    expect(await page.locator('#body-note').textContent()).toBe('Shown as received: a body is formatted only up to 64 KiB and 64 levels deep.');
    await rows(page).first().click();
    await poll(() => heading(page).textContent()).toBe('#2 webhook.test evt_large');
    expect(await page.locator('#body-raw').textContent()).toBe(large.slice(0, 65_536));
    expect(await page.locator('#body-note').textContent()).toBe(
      `Shown as received: a body is formatted only up to 64 KiB and 64 levels deep. Cut at 65,536 characters of ${large.length}: GET /api/deliveries/2 gives it whole.`,
    );
    // A small body is formatted whole, with no note, beside its bytes.
    const event = testEvent('call.missed');
    expect((await rig.deliver(event)).status).toBe(204);
    await poll(() => rows(page).count()).toBe(3);
    await rows(page).first().click();
    await poll(() => page.locator('#body').textContent()).toBe(JSON.stringify(event, null, 2));
    expect(await page.locator('#body-raw').textContent()).toBe(JSON.stringify(event));
    expect(await page.locator('#body-note').isHidden()).toBe(true);
  });

  it("shows the receiver's headers as they came, at most 64, and says how many more it left out", async () => {
    const headers = ['Content-Type', 'application/json', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2'];
    for (let i = 0; i < 70; i += 1) headers.push(`X-Pad-${i}`, 'p');
    const { rig, page } = await openPage({ forward: await answeringReceiver(200, headers, '{}') });
    expect((await rig.deliver(testEvent('call.missed'))).status).toBe(200);
    await rows(page).first().click();
    await poll(() => page.locator('#answer-headers').textContent()).toMatch(/^Content-Type: application\/json\nSet-Cookie: a=1\nSet-Cookie: b=2\nX-Pad-0: p\n/);
    expect((await page.locator('#answer-headers').textContent())!.split('\n')).toHaveLength(64);
    // 73 of the receiver's, and Node's Date, Connection, Keep-Alive and Content-Length.
    expect(await page.locator('#answer-headers-note').textContent()).toBe('13 more left out: the relay keeps 64 headers of an answer, of 8 KiB in all.');
  });

  it('shows what a sender and a receiver wrote as text in every field, markup and quotes included, and runs none of it', async () => {
    const { rig, page } = await openPage({ forward: await hostileReceiver() });
    const body = JSON.stringify({ id: HOSTILE, type: HOSTILE, data: { object: { id: HOSTILE } } });
    const headers = { 'webhook-id': HOSTILE, 'webhook-timestamp': HOSTILE, 'webhook-signature': `v1,${HOSTILE}`, 'x-hostile': HOSTILE };
    expect((await fetch(rig.relay.webhookUrl, { method: 'POST', headers, body })).status).toBe(400);
    await poll(() => rows(page).count()).toBe(1);
    // Type, id, tenant and outcome in the list; the id's whole in its tooltip.
    const cells = await rows(page).first().locator('td').allTextContents();
    expect([cells[2], cells[3], cells[4], cells[7]]).toEqual([HOSTILE, `${HOSTILE.slice(0, 4)}…${HOSTILE.slice(-10)}`, HOSTILE, 'invalid_signature']);
    expect(await rows(page).first().locator('td').nth(3).getAttribute('title')).toBe(HOSTILE);
    // The filter's choices.
    expect(await page.locator('#filter-type option').allTextContents()).toEqual(['all', HOSTILE]);
    await rows(page).first().click();
    await poll(() => heading(page).textContent()).toBe(`#1 ${HOSTILE} ${HOSTILE}`);
    expect(await page.locator('#verdict').textContent()).toContain(`\ntimestamp: "${HOSTILE}" is not Unix seconds`);
    expect(await page.locator('#answer').textContent()).toMatch(/^400 in \d+ ms\n/);
    expect((await page.locator('#answer').textContent())!.replace(/^400 in \d+ ms\n/, '')).toBe(`outcome: invalid_signature, key ${HOSTILE}, tenant ${HOSTILE}\n\n${HOSTILE}`);
    expect((await page.locator('#answer-headers').textContent())!.split('\n')).toContain(`x-hostile: ${HOSTILE}`);
    const shown = (await page.locator('#headers').textContent())!.split('\n');
    expect(shown).toEqual(expect.arrayContaining([`webhook-id: ${HOSTILE}`, `webhook-timestamp: ${HOSTILE}`, `x-hostile: ${HOSTILE}`]));
    expect(await page.locator('#body').textContent()).toBe(JSON.stringify(JSON.parse(body), null, 2));
    expect(await page.locator('#body-raw').textContent()).toBe(body);
    // As curl, quoted.
    await page.getByRole('button', { name: 'Copy as curl' }).click();
    await poll(() => page.locator('#curl').textContent()).toContain(`-H 'webhook-id: ${HOSTILE.replaceAll("'", `'\\''`)}'`);
    // The page's own send of a type that is markup: the relay's refusal, beside the form.
    await page.getByLabel('Event type').fill(HOSTILE);
    await page.getByRole('button', { name: 'Send signed' }).click();
    await poll(() => page.locator('#send-status').textContent()).toBe(`testEvent takes an event type, as 'call.missed', not ${JSON.stringify(HOSTILE)}`);
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
    await poll(async () => (await watched(page)).refused).toEqual(expect.arrayContaining(['script-src-attr', 'script-src-elem']));
    expect((await watched(page)).ran).toEqual([]);
  });

  it('replays a delivery in each mode and opens the replay, in sight: exact and re-signed are duplicates, a new id is processed', async () => {
    const { rig, page } = await openPage();
    expect((await rig.deliver(testEvent('call.missed'))).status).toBe(204);
    await rows(page).first().click();
    await poll(() => heading(page).textContent()).toMatch(/^#1 /);
    // Each replay opens the delivery it made, which the next one replays.
    for (const [of, mode, label, outcome] of [
      [1, 'exact', 'Replay exact bytes', '200 duplicate'],
      [2, 'resign', 'Replay re-signed', '200 duplicate'],
      [3, 'new-id', 'Replay with a new id', '204 processed'],
    ] as const) {
      await page.getByRole('button', { name: label }).click();
      await poll(() => status(page).textContent()).toBe(`Replayed #${of} (${mode}) as #${of + 1}: ${outcome}`);
      await poll(() => heading(page).textContent()).toMatch(new RegExp(`^#${of + 1} call\\.missed `));
      expect(await inSight(page, '#status')).toBe(true);
    }
    await poll(() => rows(page).count()).toBe(4);
    const replayed = rows(page).first().locator('td').first();
    expect([await replayed.textContent(), await replayed.getAttribute('title')]).toEqual(['4 ↻3', 'replay of 3 (new-id)']);
    expect(await rows(page).first().getAttribute('aria-selected')).toBe('true');
  });

  it('sends an event from the page with a msg_ id, signed, through the relay, where it is recorded, and opens it in sight', async () => {
    const { rig, page } = await openPage();
    // A delivery open first, so that the detail is long and Send is scrolled to.
    expect((await rig.deliver(testEvent('call.missed', { data: { object: { notes: 'n'.repeat(5000) } } }))).status).toBe(204);
    await rows(page).first().click();
    await poll(() => heading(page).textContent()).toMatch(/^#1 /);
    await page.getByLabel('Event type').fill('call.missed');
    await page.getByLabel(/^data/).fill('{"object": {"id": "call_from_page"}}');
    await page.getByRole('button', { name: 'Send signed' }).click();
    await poll(() => status(page).textContent()).toMatch(/^Sent call\.missed as #2: 204$/);
    await poll(() => heading(page).textContent()).toMatch(/^#2 call\.missed msg_[0-9A-Z]{26}$/);
    expect(await inSight(page, '#detail-heading')).toBe(true);
    await poll(() => rows(page).count()).toBe(2);
    expect(await rows(page).first().locator('td').first().textContent()).toBe('2 sent');
    const sent = await record(rig, 2);
    expect(sent.request.headers['webhook-id']).toBe(sent.event!.id);
    expect(rig.handled).toEqual([expect.any(String), sent.event!.id]);
  });

  it("fills Send's data with a sample of the type chosen, from the relay's testing kit, and leaves what was typed", async () => {
    const { rig, page } = await openPage();
    const data = page.getByLabel(/^data/);
    // The sample of the type it starts with.
    await poll(async () => JSON.parse(await data.inputValue())).toEqual({ object: { id: expect.stringMatching(/^we_[0-9A-Z]{26}$/) } });
    for (const [type, kind] of [['call.missed', 'call'], ['message.received', 'msg'], ['transcript.ready', 'trs'], ['ai_summary.ready', 'sum']]) {
      await page.getByLabel('Event type').fill(type!);
      expect(JSON.parse(await data.inputValue())).toEqual({ object: { id: expect.stringMatching(new RegExp(`^${kind}_[0-9A-Z]{26}$`)) } });
    }
    const sample = JSON.parse(await data.inputValue()) as { object: { id: string } };
    await page.getByRole('button', { name: 'Send signed' }).click();
    await poll(() => status(page).textContent()).toBe('Sent ai_summary.ready as #1: 204');
    expect(JSON.parse(Buffer.from((await record(rig, 1)).request.bodyBase64, 'base64').toString()).data).toEqual(sample);
    // A type the relay has no sample of empties the sample; what was typed stays, whatever the type.
    await page.getByLabel('Event type').fill('order.created');
    expect(await data.inputValue()).toBe('');
    await data.fill('{"mine": true}');
    await page.getByLabel('Event type').fill('call.missed');
    expect(await data.inputValue()).toBe('{"mine": true}');
  });

  it('filters the list by type, by outcome and by a part of the id', async () => {
    const { rig, page } = await openPage();
    const events = [testEvent('call.missed'), testEvent('message.received'), testEvent('call.missed')];
    for (const event of events) expect((await rig.deliver(event)).status).toBe(204);
    expect((await rig.deliver(events[0]!)).status).toBe(200);
    expect((await rig.deliver(testEvent('webhook.test'), new Date(), true)).status).toBe(400);
    await poll(() => rows(page).count()).toBe(5);
    const numbers = () => rows(page).evaluateAll((all) => all.map((row) => Number(row.getAttribute('data-n'))));
    expect(await page.locator('#filter-type option').allTextContents()).toEqual(['all', 'call.missed', 'message.received', 'webhook.test']);
    await page.locator('#filter-type').selectOption('call.missed');
    expect(await numbers()).toEqual([4, 3, 1]);
    await page.locator('#filter-outcome').selectOption('duplicate');
    expect(await numbers()).toEqual([4]);
    await page.locator('#filter-type').selectOption('');
    await page.locator('#filter-outcome').selectOption('invalid_signature');
    expect(await numbers()).toEqual([5]);
    await page.locator('#filter-outcome').selectOption('');
    await page.locator('#filter-id').fill(events[1]!.id.slice(-8).toLowerCase());
    expect(await numbers()).toEqual([2]);
    await page.locator('#filter-id').fill('no such id');
    expect(await numbers()).toEqual([]);
    expect(await page.locator('#no-match').isVisible()).toBe(true);
    // A delivery that comes in is filtered as it is listed.
    await page.locator('#filter-id').fill('');
    await page.locator('#filter-type').selectOption('message.received');
    expect((await rig.deliver(testEvent('call.missed'))).status).toBe(204);
    expect((await rig.deliver(testEvent('message.received'))).status).toBe(204);
    await poll(numbers).toEqual([7, 2]);
  });

  it('clears the list, in the relay too, and lists what comes after', async () => {
    const { rig, page } = await openPage();
    for (const type of ['call.missed', 'webhook.test'] as const) expect((await rig.deliver(testEvent(type))).status).toBe(204);
    await poll(() => rows(page).count()).toBe(2);
    await rows(page).first().click();
    await poll(() => heading(page).textContent()).toMatch(/^#2 /);
    await page.getByRole('button', { name: 'Clear' }).click();
    await poll(() => rows(page).count()).toBe(0);
    expect([await page.locator('#empty').isVisible(), await page.locator('#detail').isHidden()]).toEqual([true, true]);
    expect(((await (await rig.api('/api/deliveries')).json()) as { deliveries: unknown[] }).deliveries).toEqual([]);
    await page.reload();
    await page.locator('#empty').waitFor();
    expect((await rig.deliver(testEvent('call.missed'))).status).toBe(204);
    await poll(() => rows(page).count()).toBe(1);
    expect(await rows(page).first().locator('td').first().textContent()).toBe('3');
  });

  it('says how long ago each delivery came, the time itself in its tooltip, and counts on', async () => {
    // The relay's clock 3 minutes behind the page's: its deliveries came 3 minutes ago.
    // The page's clock stands still, 30 s ahead (within which the delivery comes): the times are counted on only when it moves.
    const paused = async (page: Page): Promise<void> => {
      await page.clock.install();
      await page.clock.pauseAt(Date.now() + 30_000);
    };
    const { rig, page } = await openPage({ now: () => Date.now() - 3 * 60_000 }, 1440, paused);
    expect((await rig.deliver(testEvent('call.missed'))).status).toBe(204);
    const time = rows(page).first().locator('td').nth(1);
    await poll(() => time.textContent()).toBe('3 min ago');
    const receivedAt = (await record(rig, 1)).receivedAt;
    expect(await time.getAttribute('title')).toBe(await page.evaluate(`new Date(${JSON.stringify(receivedAt)}).toLocaleString()`));
    await page.clock.fastForward('02:00');
    await poll(() => time.textContent()).toBe('5 min ago');
  });

  it('copies a delivery as a curl command that a shell runs to send its bytes and headers again, quotes included', async () => {
    const { rig, page } = await openPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    const folder = await mkdtemp(join(tmpdir(), 'dev-page-curl-'));
    // A shell's substitution and quotes in the body and a header, which make `touched` if run.
    const touched = join(folder, 'touched');
    const event = testEvent('call.missed', { data: { object: { note: `it's $(touch ${touched}) \`touch ${touched}\`` } } });
    const body = JSON.stringify(event);
    const headers: Record<string, string> = { ...signedHeaders(body, { secret: RELAY_SECRET }), 'x-note': `'; touch ${touched}; '$(touch ${touched})` };
    expect((await fetch(rig.relay.webhookUrl, { method: 'POST', headers, body })).status).toBe(204);
    await rows(page).first().click();
    await poll(() => heading(page).textContent()).toMatch(/^#1 /);
    await page.getByRole('button', { name: 'Copy as curl' }).click();
    await poll(() => status(page).textContent()).toBe('Copied #1 as curl: it sends the request to this relay again.');
    const command = (await page.evaluate('navigator.clipboard.readText()')) as string;
    expect(await page.locator('#curl').textContent()).toBe(command);
    await promisify(execFile)('sh', ['-c', command], { cwd: folder });
    await poll(() => rows(page).count()).toBe(2);
    const [first, again] = [await record(rig, 1), await record(rig, 2)];
    expect(again.request.bodyBase64).toBe(first.request.bodyBase64);
    expect(again.request.headers).toMatchObject({ 'webhook-id': event.id, 'webhook-signature': headers['webhook-signature'], 'x-note': headers['x-note'] });
    // The same signed bytes: a duplicate to the receiver, and nothing of the sender's ran.
    expect(again.answer).toMatchObject({ status: 200, outcome: { outcome: 'duplicate' } });
    expect(existsSync(touched)).toBe(false);
  });

  it('moves through the list and opens a delivery with the keyboard', async () => {
    const { rig, page } = await openPage();
    for (const type of ['call.missed', 'webhook.test'] as const) expect((await rig.deliver(testEvent(type))).status).toBe(204);
    await poll(() => rows(page).count()).toBe(2);
    await rows(page).first().focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await poll(() => heading(page).textContent()).toMatch(/^#1 call\.missed /);
    expect(await rows(page).nth(1).getAttribute('aria-selected')).toBe('true');
    // The list drawn anew keeps the focus where it was.
    expect(await rows(page).nth(1).evaluate((row) => row === row.ownerDocument.activeElement)).toBe(true);
  });

  it('holds no secret, and keeps a screenshot', async () => {
    const { rig, page } = await openPage();
    for (const type of KNOWN_EVENT_TYPES) expect((await rig.deliver(testEvent(type))).status).toBe(204);
    expect((await rig.deliver(testEvent('call.missed'), new Date(), true)).status).toBe(400);
    // Signed compact, sent indented: re-serialized.
    const event = testEvent('message.received');
    expect((await fetch(rig.relay.webhookUrl, { method: 'POST', headers: signedHeaders(JSON.stringify(event), { secret: RELAY_SECRET }), body: JSON.stringify(event, null, 4) })).status).toBe(400);
    for (const mode of ['exact', 'resign', 'new-id']) expect((await rig.api('/api/deliveries/1/replay', { mode })).status).toBe(201);
    await page.getByLabel('Event type').fill('message.received');
    await page.getByRole('button', { name: 'Send signed' }).click();
    await poll(() => rows(page).count()).toBe(11);
    await page.locator('#deliveries tr[data-n="7"]').click();
    await poll(() => page.locator('#verdict').textContent()).toMatch(/^invalid: invalid_signature/);
    expect(await page.content()).not.toContain(RELAY_SECRET.slice('whsec_'.length));
    await mkdir(ARTEFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTEFACTS, 'dev-page.png'), fullPage: true });
  });
});

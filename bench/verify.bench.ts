/**
 * npm run bench: ops/s of verify() and Webhook#verify against the least work
 * that gives the same result with raw node:crypto, and against the peers
 * standardwebhooks and svix, all in one run. Each case is measured in
 * several interleaved rounds and the median is kept, since these machines
 * are noisy. Writes the time per verification as a bar chart to
 * docs/bench.svg, which the README shows.
 */
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { built } from './built.js';
import { rawVerify } from './limit.js';
import { measure, ROUNDS, TIME_MS } from './measure.js';
import { envelopeOfSize } from './payloads.js';
import { verifyChartSvg, type ChartPanel } from './verify-chart.js';

const { sign, verify, Webhook } = await built<typeof import('../src/index.js')>('src/index.js');

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

function cases(bytes: number): Record<string, () => () => unknown> {
  const id = 'msg_01JD2W6R0YQ4B8N2C7HV5XK3TE';
  const text = envelopeOfSize(id, bytes);
  const body = Buffer.from(text);
  const headers = sign(body, { id, timestamp: new Date(), secret: SECRET });
  const key = Buffer.from(SECRET.slice(6), 'base64');
  const webhook = new Webhook(SECRET);
  const standard = new StandardWebhook(SECRET);
  const svix = new SvixWebhook(SECRET);
  return {
    'limit (node:crypto)': () => () =>
      rawVerify(key, headers['webhook-id'], headers['webhook-timestamp'], headers['webhook-signature'], body),
    'Webhook#verify': () => () => webhook.verify(body, headers),
    'verify()': () => () => verify(body, headers, SECRET),
    // The peers take the body as a string.
    standardwebhooks: () => () => standard.verify(text, headers),
    svix: () => () => svix.verify(text, headers),
  };
}

// The chart's bars: the package, the two peers and the limit, by their case names.
const CHARTED = [
  ['Webhook#verify', 'svc-webhooks'],
  ['svix', 'svix'],
  ['standardwebhooks', 'standardwebhooks'],
  ['limit (node:crypto)', 'node:crypto (the limit)'],
] as const;

const rows: string[] = [];
const panels: ChartPanel[] = [];
for (const [label, bytes] of [['1 KiB', 1024], ['64 KiB', 64 * 1024]] as const) {
  const results = await measure(cases(bytes));
  panels.push({
    title: `${label} body`,
    bars: CHARTED.map(([name, bar]) => ({ label: bar, microseconds: 1e6 / results.get(name)!, highlight: name === 'Webhook#verify' })),
  });
  const limit = results.get('limit (node:crypto)')!;
  for (const [name, ops] of results) {
    rows.push(`| ${label} | ${name} | ${Math.round(ops).toLocaleString('en-US')} | ${(ops / limit).toFixed(2)}× |`);
  }
}
console.log(`Node ${process.version}, ${ROUNDS} rounds of ${TIME_MS} ms per case, median ops/s\n`);
console.log('| body | verifier | ops/s | vs limit |\n|---|---|---:|---:|');
console.log(rows.join('\n'));

const chart = new URL('../docs/bench.svg', import.meta.url);
const caption = `npm run bench: Node ${process.version}, ${cpus().length} cores, median of ${ROUNDS} interleaved rounds of ${TIME_MS} ms per case`;
writeFileSync(chart, verifyChartSvg('Verifying a signed webhook', caption, panels));
console.log(`\nwrote ${chart.pathname}`);

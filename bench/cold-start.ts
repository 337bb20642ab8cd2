/**
 * Cold start, the cost a serverless function pays on its first request: a
 * fresh Node process loads the package as it ships (dist/) and answers one
 * signed request, timed from before the import to the answer. svc-webhooks'
 * Fetch entry and verify() against standardwebhooks doing the same (in a
 * Fetch handler, and alone), each in its own process, interleaved; the
 * median of the runs is kept. Node's own start and the signing of the
 * request are outside the time.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const RUNS = Number(process.env.BENCH_COLD_RUNS ?? 21);
const dist = (path: string): string => new URL(`../dist/esm/${path}`, import.meta.url).href;
const peer = new URL(import.meta.resolve('standardwebhooks')).href;
if (!existsSync(fileURLToPath(dist('adapters/fetch.js')))) throw new Error('dist/ is missing: run npm run build first');

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
// Signed with node:crypto before the clock starts; the request is built inside the timed part by both sides alike.
const prelude = `
  const { createHmac } = await import('node:crypto');
  const secret = '${SECRET}';
  const body = JSON.stringify({ id: 'evt_1', type: 'call.missed', created_at: '2026-11-20T14:05:02Z', data: { object: { id: 'call_1', from: '+16475550142', note: 'x'.repeat(900) } } });
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = 'v1,' + createHmac('sha256', Buffer.from(secret.slice(6), 'base64')).update('evt_1.' + timestamp + '.' + body).digest('base64');
  const headers = { 'content-type': 'application/json', 'webhook-id': 'evt_1', 'webhook-timestamp': timestamp, 'webhook-signature': signature };
  const request = () => new Request('http://receiver.test/webhooks', { method: 'POST', body, headers });
`;
const cases: Record<string, string> = {
  'svc-webhooks/fetch, first request': `
    const { verifyWebhook } = await import('${dist('adapters/fetch.js')}');
    const response = await verifyWebhook({ secret, dedup: false }, () => undefined)(request());
    if (response.status !== 204) throw new Error(String(response.status));`,
  'standardwebhooks in a Fetch handler, first request': `
    const { Webhook } = await import('${peer}');
    const webhook = new Webhook(secret);
    const handler = async (incoming) => {
      const text = await incoming.text();
      webhook.verify(text, Object.fromEntries(incoming.headers));
      return new Response(null, { status: 204 });
    };
    const response = await handler(request());
    if (response.status !== 204) throw new Error(String(response.status));`,
  'svc-webhooks verify(), first call': `
    const { verify } = await import('${dist('src/index.js')}');
    verify(body, headers, secret);`,
  'standardwebhooks verify, first call': `
    const { Webhook } = await import('${peer}');
    new Webhook(secret).verify(body, headers);`,
};

// Each case is a module file, as a function's handler is: code given with -e loads more slowly, and unevenly.
const dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-cold-'));
const scripts = Object.entries(cases).map(([name, timed], i) => {
  const file = join(dir, `case-${i}.mjs`);
  writeFileSync(file, `${prelude}\nconst started = performance.now();\n${timed}\nconsole.log(performance.now() - started);\n`);
  return [name, file] as const;
});
const samples = new Map<string, number[]>(Object.keys(cases).map((name) => [name, []]));
for (let run = 0; run < RUNS; run++) {
  for (const [name, file] of scripts) samples.get(name)!.push(Number(execFileSync(process.execPath, [file], { encoding: 'utf8' })));
}
rmSync(dir, { recursive: true, force: true });
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(`\nCold start, Node ${process.version}: median of ${RUNS} fresh processes each, interleaved\n`);
console.log('| case | ms |\n|---|---:|');
for (const [name, values] of samples) console.log(`| ${name} | ${median(values).toFixed(1)} |`);

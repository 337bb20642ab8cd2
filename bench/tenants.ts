/**
 * What a tenant's looked-up secret costs per request once it is cached,
 * against one static secret: the core (`Webhook.verifyDelivery` against
 * `TenantWebhooks.verifyDelivery`) and the Fetch entry with `on` (no dedup,
 * so only the secret differs). 1 KiB envelopes, each a new event, over
 * 1,000 tenants whose secrets were looked up before timing.
 */
import { Buffer } from 'node:buffer';
import { built } from './built.js';
import { measure, microseconds, ROUNDS, TIME_MS, type Case } from './measure.js';
import { kibEnvelope, numberedId } from './payloads.js';

const { verifyWebhook: fetchWebhook } = await built<typeof import('../adapters/fetch.js')>('adapters/fetch.js');
const { sign, TenantWebhooks, Webhook } = await built<typeof import('../src/index.js')>('src/index.js');

const TENANTS = 1000;
const POOL = Number(process.env.BENCH_POOL ?? 20_000);
const SIGNED_AT = 1_700_000_000;
const now = (): number => SIGNED_AT * 1000;
const secretOf = (tenant: string): string => `whsec_${Buffer.from(`bench-secret-of-${tenant}`.padEnd(32, '!')).toString('base64')}`;
const STATIC_SECRET = secretOf('static');

interface Delivery {
  readonly tenant: string;
  readonly body: string;
  readonly headers: Record<string, string>;
}

/** The same deliveries signed twice: with the static secret, and with their tenant's. */
function deliveries(secret: (tenant: string) => string): Delivery[] {
  return Array.from({ length: POOL }, (_, i) => {
    const id = numberedId(i);
    const tenant = `tenant-${i % TENANTS}`;
    const body = kibEnvelope(id);
    return { tenant, body, headers: { 'content-type': 'application/json', ...sign(body, { id, timestamp: SIGNED_AT, secret: secret(tenant) }) } };
  });
}
const staticPool = deliveries(() => STATIC_SECRET);
const tenantPool = deliveries(secretOf);
let next = 0;
const request = ({ tenant, body, headers }: Delivery): Request =>
  new Request(`http://receiver.test/webhooks/${tenant}`, { method: 'POST', body, headers });

let handled = 0;
const on = { 'message.received': () => void handled++ };
const resolve = async (tenant: string): Promise<string> => secretOf(tenant);
const tenantOfUrl = (incoming: Request): string | undefined => incoming.url.slice(incoming.url.lastIndexOf('/') + 1);

const cases: Record<string, Case> = {
  'core: Webhook, one secret': () => {
    const webhook = new Webhook(STATIC_SECRET, { now });
    return () => {
      const { body, headers } = staticPool[next++ % POOL]!;
      return webhook.verifyDelivery(body, headers);
    };
  },
  'core: TenantWebhooks, cached lookup': () => {
    const webhooks = new TenantWebhooks(resolve, { now });
    return () => {
      const { tenant, body, headers } = tenantPool[next++ % POOL]!;
      return webhooks.verifyDelivery(tenant, body, headers);
    };
  },
  'Fetch: one secret': () => {
    const entry = fetchWebhook({ secret: STATIC_SECRET, now, dedup: false, on });
    return async () => (await entry(request(staticPool[next++ % POOL]!))).status;
  },
  'Fetch: tenant, cached lookup': () => {
    const entry = fetchWebhook({ tenants: { of: tenantOfUrl, secret: resolve }, now, dedup: false, on });
    return async () => (await entry(request(tenantPool[next++ % POOL]!))).status;
  },
};

/** Each case's first answers are checked, and every tenant looked up, before timing. */
const warmed: Record<string, Case> = {};
for (const [name, setup] of Object.entries(cases)) {
  const run = setup();
  for (let i = 0; i < TENANTS; i++) {
    const answer = await run();
    const status = typeof answer === 'number' ? answer : 'id' in (answer as object) ? 204 : 0;
    if (status !== 204) throw new Error(`${name} answered ${String(status)}`);
  }
  warmed[name] = () => run;
}
const results = await measure(warmed);
if (handled === 0) throw new Error('no handler ran');

console.log(`Node ${process.version}, ${ROUNDS} rounds of ${TIME_MS} ms per case, median; 1 KiB envelopes over ${TENANTS} tenants, each a new event\n`);
console.log('| path | one secret µs/req | cached lookup µs/req | added | ratio |\n|---|---:|---:|---:|---:|');
for (const [path, one, looked] of [
  ['core verifyDelivery', 'core: Webhook, one secret', 'core: TenantWebhooks, cached lookup'],
  ['Fetch entry with on', 'Fetch: one secret', 'Fetch: tenant, cached lookup'],
] as const) {
  const [base, tenant] = [results.get(one)!, results.get(looked)!];
  const added = 1e6 / tenant - 1e6 / base;
  console.log(`| ${path} | ${microseconds(base)} | ${microseconds(tenant)} | +${added.toFixed(2)} µs | ${(base / tenant).toFixed(2)}× |`);
}

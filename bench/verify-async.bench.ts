/**
 * npm run bench:verify-async: ops/s of verifyAsync() on Node, as the package
 * ships it (node:crypto) and as its web build runs where no node:crypto is
 * handed out (Vercel Edge, Cloudflare Workers without nodejs_compat: Web
 * Crypto), against the least work that gives the same result with Web Crypto
 * (`bench/web-crypto-limit.ts`), and verify() for reference; at 1 KiB and
 * 64 KiB, in interleaved rounds, the median kept.
 */
import { built } from './built.js';
import { measure, ROUNDS, TIME_MS } from './measure.js';
import { envelopeOfSize } from './payloads.js';
import { subtleVerifier } from './web-crypto-limit.js';

type Package = typeof import('../src/index.js');

const node = await built<Package>('src/index.js');
const web = await webBuildWithoutNodeCrypto();

/** dist/web as Vercel Edge loads it: with no process.getBuiltinModule, so it verifies with Web Crypto. */
async function webBuildWithoutNodeCrypto(): Promise<Package> {
  const { getBuiltinModule } = process;
  Object.assign(process, { getBuiltinModule: undefined });
  try {
    return (await import(new URL('../dist/web/src/index.js', import.meta.url).href)) as Package;
  } finally {
    Object.assign(process, { getBuiltinModule });
  }
}

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

async function cases(bytes: number): Promise<Record<string, () => () => unknown>> {
  const id = 'msg_01JD2W6R0YQ4B8N2C7HV5XK3TE';
  const body = new TextEncoder().encode(envelopeOfSize(id, bytes));
  const headers = node.sign(body, { id, timestamp: new Date(), secret: SECRET });
  if (!(() => {
    try {
      web.verify(body, headers, SECRET);
    } catch (error) {
      return error instanceof web.WebhookOptionsError;
    }
  })()) throw new Error('the web build verified synchronously: it did not run without node:crypto');
  const limit = await subtleVerifier(SECRET);
  return {
    'limit (crypto.subtle)': () => () => limit(headers['webhook-id'], headers['webhook-timestamp'], headers['webhook-signature'], body),
    'verifyAsync() web build': () => () => web.verifyAsync(body, headers, SECRET),
    'verifyAsync() node:crypto': () => () => node.verifyAsync(body, headers, SECRET),
    'verify() node:crypto': () => () => node.verify(body, headers, SECRET),
  };
}

const rows: string[] = [];
for (const [label, bytes] of [['1 KiB', 1024], ['64 KiB', 64 * 1024]] as const) {
  const results = [...(await measure(await cases(bytes)))];
  // The first case is the limit.
  const [, limit] = results[0]!;
  rows.push(...results.map(([name, ops]) => `| ${label} | ${name} | ${Math.round(ops).toLocaleString('en-US')} | ${(limit / ops).toFixed(2)}× |`));
}
console.log(`Node ${process.version}, ${ROUNDS} rounds of ${TIME_MS} ms per case, median ops/s\n`);
console.log('| body | verifier | ops/s | time vs the Web Crypto limit |\n|---|---|---:|---:|');
console.log(rows.join('\n'));

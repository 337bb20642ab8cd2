/**
 * A receiver process that claims one event and never settles it, as a
 * route that hangs would: `node --import tsx lease-holder-process.ts
 * <redis url> <key prefix> <lease ms>`. It prints `claimed` once it holds
 * the lease, then renews it until it is killed.
 */
import { Redis } from 'ioredis';
import { createReceiver } from '../../src/receive/receiver.js';
import { verifyAndClaim } from './receiver-steps.js';
import { RedisDedupStore } from '../../src/stores/redis/index.js';
import { now, SECRET, signedRequest } from './signed-request.js';

const [url, keyPrefix, leaseMs] = process.argv.slice(2);
const dedup = new RedisDedupStore(new Redis(url!), { keyPrefix });
const receiver = createReceiver({ secret: SECRET, now, dedup: { store: dedup, leaseMs: Number(leaseMs) } });
const { body, headers } = signedRequest();
const reception = await verifyAndClaim(receiver, body, headers);
if (reception.action !== 'process') throw new Error(`expected a claim, got ${reception.response.status}`);
console.log('claimed');
// Renewal timers do not keep a process alive: this stands for the route that still runs.
setInterval(() => {}, 1_000);

/**
 * `npm run demo`: starts an Express receiver with the adapter on a local
 * port, sends it one signed event of each known type and a few deliveries
 * that must be refused or deduplicated, prints what it answered, and exits.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { verifyWebhook } from 'svc-webhooks/express';
import { KNOWN_EVENT_TYPES, sign, type WebhookEvent } from 'svc-webhooks';

const secret = `whsec_${randomBytes(24).toString('base64')}`;
const previousSecret = `whsec_${randomBytes(24).toString('base64')}`;
// Verify, enqueue, answer 2xx: the real work runs later, well within the sender's 10 s.
const queue: WebhookEvent[] = [];
const app = express();
// No dedup option: the receiver deduplicates with a MemoryDedupStore of its own (once per process).
app.post('/webhooks', verifyWebhook({ secret }), (req, res) => {
  queue.push(req.webhook.event);
  res.status(204).end();
});

const server = createServer(app).listen(0, '127.0.0.1');
await once(server, 'listening');
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
console.log(`Receiver on ${url}, secret ${secret}\n`);

interface Delivery {
  readonly label: string;
  readonly id: string;
  readonly type?: string;
  /** Seconds to move the signing time back. */
  readonly ageSeconds?: number;
  readonly signWith?: string | readonly string[];
  readonly tamper?: boolean;
}

const deliveries: Delivery[] = [
  ...KNOWN_EVENT_TYPES.map((type, index) => ({ label: type, id: `evt_demo_${index}`, type })),
  { label: 'tampered body', id: 'evt_demo_tampered', tamper: true },
  { label: 'expired (10 min old)', id: 'evt_demo_expired', ageSeconds: 600 },
  { label: `repeated ${KNOWN_EVENT_TYPES[0]}`, id: 'evt_demo_0', type: KNOWN_EVENT_TYPES[0] },
  { label: 'rotated pair (old + new)', id: 'evt_demo_rotated', signWith: [previousSecret, secret] },
];

const rows: string[][] = [];
for (const { label, id, type = 'call.missed', ageSeconds = 0, signWith = secret, tamper = false } of deliveries) {
  const body = JSON.stringify({ id, type, data: { object: { id: `obj_${id}` } } });
  const headers = sign(body, { id, timestamp: Math.floor(Date.now() / 1000) - ageSeconds, secret: signWith });
  const sent = tamper ? body.replace(`obj_${id}`, 'obj_forged') : body;
  const response = await fetch(url, { method: 'POST', body: sent, headers: { 'content-type': 'application/json', ...headers } });
  const answer = await response.text();
  rows.push([label, String(response.status), answer === '' ? '(empty)' : answer]);
}

const table = [['delivery', 'status', 'answer'], ...rows];
const widths = [0, 1].map((column) => Math.max(...table.map((row) => row[column]!.length)));
for (const row of table) console.log(row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  '));
console.log(`\n${queue.length} events queued for processing: ${queue.map((event) => event.type).join(', ')}`);

server.closeAllConnections();
server.close();

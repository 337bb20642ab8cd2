/**
 * A process claiming events in a SQLite file, as a second receiver on the
 * same machine would: `node --import tsx sqlite-claimer-process.ts <file>
 * <table> <command>`. `claim <count>` prints `ready`, waits for a line on stdin, then claims
 * evt_0 to evt_<count - 1> in a shuffled order, then completes each it got, and
 * prints the ids it claimed as one JSON line. `hold <lease ms>` is a receiver
 * that claims evt_1 with that lease, prints `claimed`, and keeps renewing it
 * as a handler that still runs, until it is killed.
 */
import { once } from 'node:events';
import Database from 'better-sqlite3';
import { createReceiver } from '../../src/receive/receiver.js';
import { SqliteDedupStore } from '../../src/stores/sqlite/index.js';
import { verifyAndClaim } from './receiver-steps.js';
import { now, SECRET, signedRequest } from './signed-request.js';

const [file, table, command, argument] = process.argv.slice(2);
const db = new Database(file!);
const store = new SqliteDedupStore(db, { table: table! });

if (command === 'claim') {
  const ids = Array.from({ length: Number(argument) }, (_, i) => `evt_${i}`);
  for (let i = ids.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [ids[i], ids[j]] = [ids[j]!, ids[i]!];
  }
  console.log('ready');
  await once(process.stdin, 'data');
  // Every lease is held until all were tried, as by handlers still running: a claim taken from a live lease would show.
  const claimed = new Map<string, string>();
  for (const id of ids) {
    const result = await store.begin(id, 60_000);
    if (result.state === 'claimed') claimed.set(id, result.token);
  }
  for (const [id, token] of claimed) if (!(await store.complete(id, token, 60_000))) throw new Error(`lost the lease on ${id}`);
  console.log(JSON.stringify([...claimed.keys()]));
  process.exit(0);
} else if (command === 'hold') {
  const receiver = createReceiver({ secret: SECRET, now, dedup: { store, leaseMs: Number(argument) } });
  const { body, headers } = signedRequest();
  const reception = await verifyAndClaim(receiver, body, headers);
  if (reception.action !== 'process') throw new Error(`expected a claim, got ${reception.response.status}`);
  console.log('claimed');
  // Renewal timers do not keep a process alive: this stands for the route that still runs.
  setInterval(() => {}, 1_000);
} else {
  throw new Error(`unknown command ${command}`);
}

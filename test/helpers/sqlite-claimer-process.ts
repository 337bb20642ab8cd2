/**
 * A process claiming events in a SQLite file, as a second receiver on the
 * same machine would: `node --import tsx sqlite-claimer-process.ts <file>
 * <table> <command>`. `claim <count>` prints `ready`, waits for a line on stdin, then claims
 * evt_0 to evt_<count - 1> in a shuffled order, then completes each it got, and
 * prints the ids it claimed as one JSON line. `hold <lease ms>` is a receiver
 * that claims evt_1 with that lease, prints `claimed`, and keeps renewing it
 * as a handler that still runs, until it is killed. `order <count>` prints
 * `ready`, waits for a line on stdin, then goes over evt_0 to evt_<count - 1>,
 * events of one object at versions 0 to count - 1, in a shuffled order, until
 * each is done: each it claims, it runs as a handler that logs its start (with
 * whether it was stale) and its end in the table `<table>_log`, then completes;
 * it prints the ids it ran as one JSON line.
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

/** evt_0 to evt_<count - 1>, shuffled. */
function shuffledIds(count: number): string[] {
  const ids = Array.from({ length: count }, (_, i) => `evt_${i}`);
  for (let i = ids.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [ids[i], ids[j]] = [ids[j]!, ids[i]!];
  }
  return ids;
}

if (command === 'claim') {
  const ids = shuffledIds(Number(argument));
  console.log('ready');
  await once(process.stdin, 'data');
  // Every lease is held until all were tried, as by handlers still running: a claim taken from a live lease would show.
  const claimed = new Map<string, string>();
  for (const [i, id] of ids.entries()) {
    const result = await store.begin(id, 60_000);
    if (result.state === 'claimed') claimed.set(id, result.token);
    // Paced, so that the other process, woken a moment later on a loaded machine, meets these claims rather than finding them done.
    if (i % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 5));
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
} else if (command === 'order') {
  const remaining = new Set(shuffledIds(Number(argument)));
  const log = db.prepare(`INSERT INTO ${table}_log (id, step, stale) VALUES (?, ?, ?)`);
  const ran: string[] = [];
  console.log('ready');
  await once(process.stdin, 'data');
  while (remaining.size > 0) {
    for (const id of remaining) {
      const at = { key: 'scopescopescope1:msg_1', version: Number(id.slice('evt_'.length)) };
      const result = await store.beginInOrder(id, at, 60_000);
      if (result.state === 'in_progress') continue;
      remaining.delete(id);
      if (result.state === 'done') continue;
      log.run(id, 'start', result.stale ? 1 : 0);
      // The handler spans turns of the event loop, as one awaiting its work does: time for the other process to try.
      await new Promise((resolve) => setTimeout(resolve, 2));
      log.run(id, 'end', 0);
      if (!(await store.completeInOrder(id, at, result.token, 60_000))) throw new Error(`lost the lease on ${id}`);
      ran.push(id);
      // As the next delivery would come later: the other process, trying meanwhile, takes its turns.
      await new Promise((resolve) => setTimeout(resolve, 5));
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  console.log(JSON.stringify(ran));
  process.exit(0);
} else {
  throw new Error(`unknown command ${command}`);
}

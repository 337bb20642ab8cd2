/**
 * `npm run bench:pg-boss`: what handing each event to pg-boss costs a
 * receiver. Three Express routes on one server process: a plain route that
 * reads the body and answers 204, verifyWebhook with a handler that does
 * nothing (204), and verifyWebhook with `handoff: enqueue(...)` (202, one
 * transaction per event: the record and the job). The load comes from a
 * child process (`bench/handoff-pg-boss.ts load <url> <seconds> <connections>`)
 * so that this process's CPU time (process.cpuUsage) around each run is the
 * server's alone; Postgres's own CPU is not counted. The answer's latency
 * is timed in the server, from the route's start to the answer's end, in
 * fractions of a millisecond. Each request is a 1 KiB
 * envelope with an event id of its own. Runs on DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test), in a pg-boss schema and tables
 * of its own, dropped at the end.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import express from 'express';
import { verifyWebhook } from '../adapters/express.js';
import { sign } from '../src/index.js';
import { enqueue } from '../src/queues/pg-boss/index.js';
import { migrateProcessedEvents } from '../src/stores/postgres/index.js';
import PgBoss from 'pg-boss';
import { bestOf, WORST_RUN, type HttpRun } from './best-run.js';
import { kibEnvelope } from './payloads.js';
import { benchPool, DATABASE_URL, listen, quantile, uniqueName } from './servers.js';

const SECONDS_PER_RUN = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** One connection: the answer's latency alone; ten: under load. */
const CONNECTIONS = [1, 10];
const SIGNED_AT = 1_700_000_000;
const SECRET = `whsec_${Buffer.from('bench-secret-bench-secret-bench!').toString('base64')}`;

/** What one load run measured, as the load process prints it. */
interface LoadResult {
  readonly requests: number;
  readonly perSecond: number;
}


/** Child process: loads `url` for `seconds` over `connections`, each request a new event id, and prints the result as JSON. */
async function load(url: string, seconds: number, connections: number): Promise<void> {
  // Ids no other run used: the handoff route would answer a repeated id as a duplicate.
  const prefix = randomBytes(6).toString('hex');
  let sent = 0;
  const result = await autocannon({
    url,
    method: 'POST',
    connections,
    duration: seconds,
    requests: [
      {
        setupRequest: (request) => {
          const id = `evt_${prefix}${String(sent++).padStart(12, '0')}`;
          const body = kibEnvelope(id);
          return { ...request, body, headers: { 'content-type': 'application/json', ...sign(body, { id, timestamp: SIGNED_AT, secret: SECRET }) } };
        },
      },
    ],
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers and ${result.errors} errors`);
  const measured: LoadResult = { requests: result.requests.total, perSecond: result.requests.average };
  console.log(JSON.stringify(measured));
}

/** Runs the load process against `url` and answers what it measured, the answers' times in `timings`, and this process's CPU time meanwhile. */
async function measure(url: string, timings: number[], seconds: number, connections: number): Promise<HttpRun> {
  timings.length = 0;
  const script = new URL(import.meta.url).pathname;
  const cpuBefore = process.cpuUsage();
  const child = spawn(process.execPath, [...process.execArgv, script, 'load', url, String(seconds), String(connections)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  const cpu = process.cpuUsage(cpuBefore);
  if (code !== 0) throw new Error(`the load process for ${url} exited with ${code}`);
  const result = JSON.parse(output) as LoadResult;
  return {
    perSecond: result.perSecond,
    p50: quantile(timings, 0.5),
    p99: quantile(timings, 0.99),
    cpuPerRequest: (cpu.user + cpu.system) / result.requests,
  };
}

async function main(): Promise<void> {
  const pool = benchPool(10);
  const table = uniqueName('queued');
  await migrateProcessedEvents(pool, { table });
  // pg-boss in a schema of its own, dropped at the end; without maintenance, which would only add noise.
  const schema = uniqueName('boss');
  const boss = new PgBoss({ connectionString: DATABASE_URL, schema, max: 4, supervise: false, schedule: false });
  boss.on('error', () => {});
  await boss.start();
  const queue = uniqueName('queue');
  await boss.createQueue(queue, { name: queue });

  const options = { secret: SECRET, now: () => SIGNED_AT * 1000, dedup: false as const };
  const app = express();
  const timings = new Map<string, number[]>();
  /** Times each answer of `path` into its own list. */
  const timed = (path: string): express.RequestHandler => {
    const list: number[] = [];
    timings.set(path, list);
    return (_req, res, next) => {
      const started = performance.now();
      res.once('finish', () => list.push(performance.now() - started));
      next();
    };
  };
  app.post('/plain', timed('/plain'), express.raw({ type: '*/*' }), (_req, res) => void res.status(204).end());
  app.post('/on', timed('/on'), verifyWebhook({ ...options, on: { 'message.received': () => {} } }));
  app.post('/handoff', timed('/handoff'), verifyWebhook({ ...options, handoff: enqueue(boss, queue, { pool, table }) }));
  const server: Server = createServer(app);
  const base = await listen(server);
  const routes = [
    ['plain route, 204', '/plain'],
    ['verifyWebhook + on, 204', '/on'],
    ['verifyWebhook + handoff (pg-boss), 202', '/handoff'],
  ] as const;

  try {
    console.log(
      `POST of a 1 KiB envelope with a new event id each; ${CONNECTIONS.join(' and ')} connections; best of ${ROUNDS} interleaved ` +
        `runs of ${SECONDS_PER_RUN} s per case (the lowest p50 and p99, the most req/s, the least server CPU per request, each apart); ` +
        'latency timed in the server\n',
    );
    for (const connections of CONNECTIONS) {
      for (const [, path] of routes) await measure(`${base}${path}`, timings.get(path)!, 1, connections);
      const best = routes.map(() => WORST_RUN);
      for (let round = 0; round < ROUNDS; round++) {
        for (const [index, [, path]] of routes.entries()) {
          best[index] = bestOf(best[index]!, await measure(`${base}${path}`, timings.get(path)!, SECONDS_PER_RUN, connections));
        }
      }
      printTable(connections, routes.map(([name]) => name), best);
    }
  } finally {
    server.close();
    await boss.stop({ graceful: false, wait: true, timeout: 1000 });
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.query(`DROP TABLE IF EXISTS ${table}`);
    await pool.end();
  }
}

function printTable(connections: number, names: readonly string[], rows: readonly HttpRun[]): void {
  const plain = rows[0]!;
  const ratio = (value: number, base: number): string => `${(value / base).toFixed(1)}×`;
  console.log(`${connections} connection${connections === 1 ? '' : 's'}:\n`);
  console.log('| route | p50 ms | p99 ms | req/s | server CPU µs/req | p50 vs plain | CPU vs plain |\n|---|---:|---:|---:|---:|---:|---:|');
  for (const [index, row] of rows.entries()) {
    console.log(
      `| ${names[index]} | ${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} | ${row.perSecond.toFixed(0)} | ${row.cpuPerRequest.toFixed(1)} | ` +
        `${ratio(row.p50, plain.p50)} | ${ratio(row.cpuPerRequest, plain.cpuPerRequest)} |`,
    );
  }
  console.log('');
}

if (process.argv[2] === 'load') await load(process.argv[3]!, Number(process.argv[4]), Number(process.argv[5]));
else await main();

/**
 * A Redis Cluster of the test's own: three masters, no replicas, each a
 * private redis-server in cluster mode on a spare port (its bus on that
 * port + 10000, which must be spare too), joined with
 * `redis-cli --cluster create`. The shared server is never touched.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { freePort, isFree } from './free-port.js';
import { PrivateRedis } from './private-redis.js';

const run = promisify(execFile);
const MASTERS = 3;

export class PrivateRedisCluster {
  private constructor(readonly nodes: readonly PrivateRedis[]) {}

  /** Starts the nodes, joins them, and waits until every node reports the cluster ok. */
  static async start(): Promise<PrivateRedisCluster> {
    const nodes: PrivateRedis[] = [];
    const cluster = new PrivateRedisCluster(nodes);
    try {
      for (let i = 0; i < MASTERS; i++) {
        nodes.push(await PrivateRedis.start({ port: await clusterPort(), args: ['--cluster-enabled', 'yes', '--cluster-node-timeout', '5000'] }));
      }
      const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
      await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-yes'], { timeout: 30_000 });
      await cluster.#untilOk(30_000);
      return cluster;
    } catch (error) {
      await cluster.close();
      throw error;
    }
  }

  get ports(): number[] {
    return this.nodes.map((node) => node.port);
  }

  async close(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.close()));
  }

  /** Polls `CLUSTER INFO` on every node until each says `cluster_state:ok`. */
  async #untilOk(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const infos = await Promise.all(this.ports.map((port) => run('redis-cli', ['-p', String(port), 'cluster', 'info'])));
      if (infos.every(({ stdout }) => stdout.includes('cluster_state:ok'))) return;
      if (Date.now() > deadline) throw new Error('the private Redis Cluster did not reach cluster_state:ok');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** A free port whose cluster bus port (+10000) is free as well. */
async function clusterPort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 10_000 <= 65_535 && (await isFree(port + 10_000))) return port;
  }
}


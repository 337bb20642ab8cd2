/**
 * Kills Redis client connections as a failover or an administrator would:
 * every few hundred milliseconds one connection of the server, drawn from
 * the seed, with `CLIENT KILL ID`. Only for a server of the test's own:
 * it kills everyone's connections but its own.
 */
import { Redis } from 'ioredis';
import { draw } from './load/seeded-random.js';

export interface ClientKiller {
  /** Stops killing; resolves to how many connections were killed. */
  stop(): Promise<number>;
}

export function startClientKiller(url: string, seed: number, everyMs: number): ClientKiller {
  const admin = new Redis(url, { retryStrategy: () => 50 });
  admin.on('error', () => {});
  let killed = 0;
  let running = true;
  const loop = (async () => {
    for (let round = 0; running; round++) {
      await new Promise((resolve) => setTimeout(resolve, everyMs));
      try {
        const own = String(await admin.client('ID'));
        const ids = String(await admin.client('LIST'))
          .split('\n')
          .map((line) => /^id=(\d+)/.exec(line)?.[1])
          .filter((id): id is string => id !== undefined && id !== own);
        const victim = ids[Math.floor(draw(seed, 'client-kill', round) * ids.length)];
        if (victim !== undefined) killed += Number(await admin.client('KILL', 'ID', victim));
      } catch {
        // The server restarting, or the admin connection itself reconnecting: the next round tries again.
      }
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      admin.disconnect();
      return killed;
    },
  };
}

/**
 * Kills the test's own connections mid-transaction, as a failover or an
 * administrator would: every few milliseconds, one backend of the given
 * application_name that is inside a transaction block (idle in it, or
 * running a statement after BEGIN) is ended with pg_terminate_backend.
 * Other people's connections on the shared server are never touched.
 */
import type pg from 'pg';

export interface BackendKiller {
  /** Stops killing; resolves to how many backends were ended, or rejects with the loop's failure. */
  stop(): Promise<number>;
}

const KILL_ONE = `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS killed FROM (
  SELECT pid FROM pg_stat_activity
  WHERE application_name = $1 AND (state = 'idle in transaction' OR (state = 'active' AND xact_start < query_start))
  ORDER BY random() LIMIT 1
) AS victim`;

export function startBackendKiller(admin: pg.Pool, applicationName: string, everyMs: number): BackendKiller {
  let killed = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      killed += (await admin.query(KILL_ONE, [applicationName])).rows[0].killed;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  // A test that failed before stop() ends the pool under the loop: that failure is the one to report.
  loop.catch(() => {});
  return {
    async stop() {
      running = false;
      await loop;
      return killed;
    },
  };
}

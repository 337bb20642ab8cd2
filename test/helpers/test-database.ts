/**
 * The database the Postgres suites run on: DATABASE_URL, by default the
 * server this machine and CI run. When nothing answers there, a private
 * server is started for the test file; when none can be started either, the
 * suite fails with one line. It never skips.
 */
import { PrivatePostgres } from './private-postgres.js';
import { answers } from './tcp-answers.js';

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDatabase {
  readonly url: string;
  /** Stops the private server, if one was started. */
  close(): Promise<void>;
}

export async function testDatabase(): Promise<TestDatabase> {
  const url = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  const { hostname, port } = new URL(url);
  if (await answers(hostname, Number(port || 5432))) return { url, close: async () => {} };
  let server: PrivatePostgres;
  try {
    server = await PrivatePostgres.start();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`nothing answers at ${url} (DATABASE_URL) and no private Postgres could be started: ${reason}`);
  }
  return { url: server.url, close: () => server.destroy() };
}

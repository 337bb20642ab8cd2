/**
 * The two receivers of the Postgres load tests, one on pg and one on
 * postgres.js, sharing a processed-events table and a side-effect table of
 * their own, with every connection named `applicationName` so that a test
 * can find and kill them.
 */
import { migrateProcessedEvents } from '../../../src/stores/postgres/migrate.js';
import { pgPool, uniqueTable } from '../postgres-clients.js';
import { pgTransactions } from './pg-transactions.js';
import { postgresJsTransactions, type PostgresJsTransactions } from './postgres-js-transactions.js';
import { SideEffectLedger } from './side-effect-ledger.js';
import { startTransactionalReceiver, type TransactionalReceiver } from './transactional-receiver.js';

/** Connections per receiver. */
const CONNECTIONS = 8;
/** How long a connection attempt may take, so that a request during an outage fails instead of waiting. */
const CONNECT_TIMEOUT_S = 1;

export interface PostgresReceivers {
  /** The pg receiver's URL, then the postgres.js receiver's. */
  readonly urls: readonly string[];
  readonly postgresJs: PostgresJsTransactions;
  /** The side effects as the database holds them: one process() per side-effect row. */
  rows(): Promise<SideEffectLedger>;
  close(): Promise<void>;
}

export async function startPostgresReceivers(
  url: string,
  options: { readonly seed: number; readonly ledger: SideEffectLedger; readonly applicationName: string },
): Promise<PostgresReceivers> {
  const { seed, ledger, applicationName } = options;
  const admin = pgPool(url, { max: 2 });
  const table = uniqueTable('processed');
  const effects = `${table}_effects`;
  await migrateProcessedEvents(admin, { table });
  await admin.query(`CREATE TABLE ${effects} (event_id text NOT NULL)`);

  const pgRunner = pgTransactions(
    pgPool(url, { max: CONNECTIONS, application_name: applicationName, connectionTimeoutMillis: CONNECT_TIMEOUT_S * 1000 }),
  );
  const postgresJs = postgresJsTransactions(url, CONNECTIONS, {
    connection: { application_name: applicationName },
    connect_timeout: CONNECT_TIMEOUT_S,
  });
  const receivers: TransactionalReceiver[] = [];
  for (const runner of [pgRunner, postgresJs]) {
    receivers.push(await startTransactionalReceiver({ runner, ledger, seed, table, effects }));
  }

  return {
    urls: receivers.map((receiver) => receiver.url),
    postgresJs,
    async rows() {
      const rows = new SideEffectLedger();
      for (const { event_id } of (await admin.query(`SELECT event_id FROM ${effects}`)).rows) rows.process(event_id);
      return rows;
    },
    async close() {
      for (const receiver of receivers) await receiver.close();
      await pgRunner.close();
      await postgresJs.close();
      await admin.query(`DROP TABLE IF EXISTS ${table}, ${effects}`).catch(() => {});
      await admin.end();
    },
  };
}

/** An application_name no other run uses. */
export function uniqueApplicationName(): string {
  return uniqueTable('load');
}


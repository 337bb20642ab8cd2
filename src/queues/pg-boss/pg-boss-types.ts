/**
 * The part of pg-boss this entry uses, as structural types: the four
 * methods it calls and the options it passes on, as pg-boss 10, 11 and 12
 * all take them. pg-boss's own types differ between those majors (10 and 11
 * are a CommonJS `export =` class, 12 an ES module with a named `PgBoss`
 * class), so an instance of any of them fits these, and nothing of pg-boss
 * is imported, neither at run time nor by the declarations.
 */

/** A database connection as pg-boss's `db` option takes it: the entry's transaction, for one `send`. */
export interface PgBossDb {
  /** Runs one statement with `$1`, `$2`… placeholders. */
  executeSql(
    text: string,
    values: unknown[],
  ): Promise<{
    /** The statement's rows. */
    rows: unknown[];
  }>;
}

/**
 * pg-boss's options of `send` that pg-boss 10, 11 and 12 all take, for the
 * jobs `enqueue` sends. The job's id and its connection are the entry's; a
 * job option of one major alone is passed on as well, but not typed here.
 */
export interface PgBossSendOptions {
  /**
   * The job's priority: a higher number is fetched first.
   * @default 0
   */
  readonly priority?: number;
  /**
   * When the job may run first: a `Date`, an ISO 8601 string, or a number of seconds from now.
   * @default at once
   */
  readonly startAfter?: number | string | Date;
  /**
   * How many times pg-boss retries a failed job before it keeps it in the failed state.
   * @default the queue's
   */
  readonly retryLimit?: number;
  /**
   * Seconds between a failure and the retry.
   * @default the queue's
   */
  readonly retryDelay?: number;
  /**
   * Whether the delay grows exponentially from `retryDelay` with each retry.
   * @default the queue's
   */
  readonly retryBackoff?: boolean;
  /**
   * Seconds a job may stay active: past it, pg-boss fails the job and retries it, although its handler may
   * still run. Set it above the longest handler's run.
   * @default the queue's
   */
  readonly expireInSeconds?: number;
  /**
   * Seconds a job may wait to be fetched before pg-boss deletes it.
   * @default the queue's
   */
  readonly retentionSeconds?: number;
}

/**
 * pg-boss's options of `work` that pg-boss 10, 11 and 12 all take, passed
 * on by `work()`.
 */
export interface PgBossWorkOptions {
  /**
   * How many jobs the worker fetches at once; the jobs of a batch run concurrently.
   * @default 1
   */
  readonly batchSize?: number;
  /**
   * Seconds between two polls of the queue (at least 0.5).
   * @default 2
   */
  readonly pollingIntervalSeconds?: number;
  /**
   * Whether jobs are fetched by priority (pg-boss 10 and 11; pg-boss 12 always fetches by priority and
   * ignores this).
   * @default true
   */
  readonly priority?: boolean;
}

/** A job as pg-boss hands it to a worker: the part this entry reads. */
export interface PgBossJob {
  /** pg-boss's id of the job. */
  readonly id: string;
  /** The job's data: a `QueuedDelivery` for a job `enqueue` sent. */
  readonly data: unknown;
}

/**
 * A pg-boss instance (`new PgBoss(...)`, started) of pg-boss 10, 11 or 12:
 * the methods this entry calls.
 */
export interface PgBossInstance {
  /** Creates a job in the queue `name`; resolves to its id, or `null` when pg-boss created none. */
  send(name: string, data: object, options: PgBossSendOptions & { readonly db: PgBossDb }): Promise<string | null>;
  /** Starts a worker on the queue `name`; resolves to the worker's id. */
  work(name: string, options: PgBossWorkOptions, handler: (jobs: PgBossJob[]) => Promise<void>): Promise<string>;
  /** Completes the active jobs of `ids`. */
  complete(name: string, ids: string[]): Promise<unknown>;
  /**
   * Fails the job `id`, keeping `data` (an error, serialized) as its output; pg-boss retries it as the queue
   * allows. Every major has it; without it, the failed jobs of a batch are failed by pg-boss together, with
   * the first one's error.
   */
  fail?(name: string, id: string, data: object): Promise<unknown>;
}

/**
 * The types of pg-boss this entry uses. Import types load nothing at run
 * time, and, unlike a default import of pg-boss's `export =`, they compile
 * in the CommonJS build as in the ES module one.
 */

/** A pg-boss instance (`new PgBoss(...)`). */
export type PgBossInstance = import('pg-boss');
/** pg-boss's options of `send`. */
export type PgBossSendOptions = import('pg-boss').SendOptions;
/** pg-boss's options of `work`. */
export type PgBossWorkOptions = import('pg-boss').WorkOptions;
/** A job as pg-boss hands it to a worker. */
export type PgBossJob = import('pg-boss').Job<unknown>;

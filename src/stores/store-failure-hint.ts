/** What an operator should know of a dedup store's failure: what failed, and what to do where the cause is known. */

/** One sentence on what to do about `error`, where its cause is known. */
export function storeFailureHint(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === '42P01') return 'Its table does not exist: run migrate() (or store.migrate()) once.';
  return undefined;
}

/** `<class>[ <code>]: <message>` for a log line. */
export function describeStoreError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return `${error.name}${typeof code === 'string' ? ` ${code}` : ''}: ${error.message.slice(0, 200)}`;
}

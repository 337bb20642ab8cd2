/** Reading errors that clients and ORMs wrap in errors of their own. */

/** How deep a chain of causes is followed; a longer one, or a cycle, ends there. */
const MAX_DEPTH = 8;

/** `error` followed by its `cause`, that cause's `cause`, and so on, outermost first. */
export function errorChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current !== undefined && current !== null && chain.length < MAX_DEPTH; ) {
    if (chain.includes(current)) break;
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

/** Whether `error`, or a cause in its chain, carries `code` (a Postgres SQLSTATE, say) as its `code`. */
export function hasErrorCode(error: unknown, code: string): boolean {
  return errorChain(error).some((link) => (link as { code?: unknown }).code === code);
}

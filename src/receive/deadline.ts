/** A wait with a time limit, its timer cleared whichever comes first. */

/**
 * Resolves to what `promise` settles to, or, once `ms` have passed first, to
 * what `late()` returns; `promise` goes on unobserved then.
 */
export async function beforeDeadline<T, L>(promise: PromiseLike<T>, ms: number, late: () => L): Promise<T | L> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<L>((resolve) => {
    timer = setTimeout(() => resolve(late()), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

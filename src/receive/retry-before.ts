/** Retrying a dedup store operation while its lease still lives. */

/** The pause after the first failure; it doubles after each further one, up to the cap. */
const FIRST_PAUSE_MS = 25;
const MAX_PAUSE_MS = 1_000;

/**
 * Runs `operation`, and again after each rejection, pausing longer each time,
 * as long as the next try starts no later than `deadline` (a `Date.now()`
 * time): the last try starts at the deadline itself. The first try always
 * runs. Resolves to the first answer; rejects with the last error once out
 * of time.
 */
export async function retryBefore<T>(deadline: number, operation: () => Promise<T>): Promise<T> {
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(2 * pause, MAX_PAUSE_MS)) {
    try {
      return await operation();
    } catch (error) {
      const left = deadline - Date.now();
      if (left <= 0) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
    }
  }
}

/** Retrying a store operation while there is time: a store mostly comes back within seconds. */
import { after } from '../base/deadlines.js';

/** The pause after an operation's first failure; it doubles after each further one, up to the cap. */
const FIRST_PAUSE_MS = 25;
const MAX_PAUSE_MS = 1_000;

/**
 * Runs `operation`, and again after each rejection, pausing longer each time,
 * as long as the next try starts no later than `deadline` (a `Date.now()`
 * time): the last try starts at the deadline itself. The first try always
 * runs. Resolves to the first answer; rejects with the last error once out
 * of time. `failed` hears of each rejection, with the try's number: from 1,
 * or after the `triedBefore` tries the caller made and saw fail.
 */
export function retryBefore<T>(
  deadline: number,
  operation: () => PromiseLike<T>,
  failed?: (error: unknown, attempt: number) => void,
  triedBefore = 0,
): Promise<T> {
  const attempt = (pause: number, tried: number): Promise<T> => {
    let running: Promise<T>;
    try {
      running = Promise.resolve(operation());
    } catch (error) {
      running = Promise.reject(error);
    }
    // The first try mostly succeeds: it costs one reaction, and only a failure waits and tries again.
    return running.then(undefined, async (error: unknown) => {
      failed?.(error, tried);
      const left = deadline - Date.now();
      if (left <= 0) throw error;
      await new Promise<void>((resolve) => after(Math.min(pause, left), resolve));
      return attempt(Math.min(2 * pause, MAX_PAUSE_MS), tried + 1);
    });
  };
  return attempt(FIRST_PAUSE_MS, triedBefore + 1);
}

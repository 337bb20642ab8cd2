/** The promise a store's method answers for an operation that answers at once. */

/**
 * What `operation` answers, as a settled promise: a throw (a bad duration, a
 * failing clock, a full store) becomes a rejection, as in an async function,
 * which would cost more per call.
 */
export function settledWith<A extends unknown[], T>(operation: (...args: A) => T, ...args: A): Promise<T> {
  try {
    return Promise.resolve(operation(...args));
  } catch (error) {
    return Promise.reject(error);
  }
}

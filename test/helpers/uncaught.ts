/**
 * The uncaught exceptions while `run` runs, and one tick after it: a
 * diagnostics channel subscriber's throw surfaces as one, on the next tick,
 * where Vitest would blame whichever test runs then.
 */
export async function uncaughtDuring<T>(run: () => Promise<T>): Promise<{ readonly result: T; readonly uncaught: unknown[] }> {
  const uncaught: unknown[] = [];
  const record = (error: unknown): void => void uncaught.push(error);
  process.on('uncaughtException', record);
  try {
    const result = await run();
    await new Promise((resolve) => setImmediate(resolve));
    return { result, uncaught };
  } finally {
    process.off('uncaughtException', record);
  }
}

/** A printable reason for anything thrown, for one log line; even a value whose `message` or `toString` throws. */
export function reasonOf(error: unknown): string {
  try {
    return error instanceof Error ? error.message : String(error);
  } catch {
    return 'an unprintable value';
  }
}

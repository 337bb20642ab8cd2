/** The two ways a user's callback fails: it throws, or it returns a rejected promise. */
export function failingBothWays(error: unknown): Array<[string, () => Promise<never>]> {
  return [
    [
      'throws',
      () => {
        throw error;
      },
    ],
    ['rejects', () => Promise.reject(error)],
  ];
}

/** A Fetch body stream for the readers' tests: it hands out `chunks` one per read, then closes, errors or stalls. */
export function webStream(chunks: readonly Uint8Array[], then: 'close' | 'error' | 'stall' = 'close') {
  const state = { cancelled: false, pulled: 0 };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const chunk = chunks[state.pulled++];
        if (chunk !== undefined) return controller.enqueue(chunk);
        if (then === 'close') return controller.close();
        if (then === 'error') return controller.error(new Error('connection reset'));
        return new Promise(() => undefined);
      },
      cancel() {
        state.cancelled = true;
      },
    },
    // Pulled only when read: what was pulled is what the reader asked for.
    { highWaterMark: 0 },
  );
  return { stream, state };
}

/** A POST request whose body is `stream`, with `headers`. */
export function streamedRequest(stream: ReadableStream<Uint8Array> | null, headers: Record<string, string> = {}): Request {
  return new Request('http://receiver.test/webhooks', { method: 'POST', body: stream, headers, duplex: 'half' } as RequestInit);
}

/** Whether `promise` has settled once pending callbacks ran under fake timers (`advance` is `vi.advanceTimersByTimeAsync`); its outcome is observed either way. */
export async function settledAfter(promise: Promise<unknown>, advance: (ms: number) => Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await advance(0);
  return done;
}

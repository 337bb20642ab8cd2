/**
 * The handlers' side effect, shared by every receiver instance of a test:
 * how many times each event was processed, and how often handlers failed.
 */
export class SideEffectLedger {
  readonly #processed = new Map<string, number>();
  readonly #calls = new Map<string, number>();
  thrown = 0;
  answered500 = 0;

  /** Counts a handler call for `id`; answers its number, from 0. */
  call(id: string): number {
    const call = this.#calls.get(id) ?? 0;
    this.#calls.set(id, call + 1);
    return call;
  }

  /** The side effect itself. */
  process(id: string): void {
    this.#processed.set(id, (this.#processed.get(id) ?? 0) + 1);
  }

  timesProcessed(id: string): number {
    return this.#processed.get(id) ?? 0;
  }

  /** How many distinct events were processed at least once. */
  get eventsProcessed(): number {
    return this.#processed.size;
  }

  get handlerCalls(): number {
    let calls = 0;
    for (const count of this.#calls.values()) calls += count;
    return calls;
  }

  get handlerFailures(): number {
    return this.thrown + this.answered500;
  }
}

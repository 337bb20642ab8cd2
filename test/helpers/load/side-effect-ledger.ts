/**
 * The handlers' side effect, shared by every receiver instance of a test:
 * how many times each event was processed, when its handler was first
 * called, and how often handlers failed.
 */
import { performance } from 'node:perf_hooks';

export class SideEffectLedger {
  readonly #processed = new Map<string, number>();
  readonly #calls = new Map<string, number>();
  readonly #firstCallAt = new Map<string, number>();
  thrown = 0;
  answered500 = 0;

  /** Counts a handler call for `id`; answers its number, from 0. */
  call(id: string): number {
    const call = this.#calls.get(id) ?? 0;
    this.#calls.set(id, call + 1);
    if (call === 0) this.#firstCallAt.set(id, performance.now());
    return call;
  }

  /** The side effect itself. */
  process(id: string): void {
    this.#processed.set(id, (this.#processed.get(id) ?? 0) + 1);
  }

  timesProcessed(id: string): number {
    return this.#processed.get(id) ?? 0;
  }

  /** When a handler was first called for `id`, by `performance.now()`. */
  firstCallAt(id: string): number | undefined {
    return this.#firstCallAt.get(id);
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

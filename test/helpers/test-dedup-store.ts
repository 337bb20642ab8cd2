/** A small but real in-memory DedupStore for adapter tests, which can be made to fail. */
import type { BeginResult, DedupStore } from '../../src/index.js';

type Entry = { readonly state: 'leased'; readonly token: string } | { readonly state: 'done' };
export type Settlement = { readonly op: 'complete' | 'release'; readonly id: string };

export class TestDedupStore implements DedupStore {
  readonly #entries = new Map<string, Entry>();
  readonly #waiting: Array<(settlement: Settlement) => void> = [];
  #tokens = 0;
  /** When true, every call rejects, as a store that is down. */
  failing = false;

  async begin(id: string): Promise<BeginResult> {
    this.#checkUp();
    const entry = this.#entries.get(id);
    if (entry?.state === 'done') return { state: 'done' };
    if (entry?.state === 'leased') return { state: 'in_progress' };
    const token = `token-${++this.#tokens}`;
    this.#entries.set(id, { state: 'leased', token });
    return { state: 'claimed', token };
  }

  async complete(id: string, token: string): Promise<boolean> {
    return this.#settle('complete', id, token, () => this.#entries.set(id, { state: 'done' }));
  }

  async release(id: string, token: string): Promise<boolean> {
    return this.#settle('release', id, token, () => this.#entries.delete(id));
  }

  async renew(id: string, token: string): Promise<boolean> {
    this.#checkUp();
    const entry = this.#entries.get(id);
    return entry?.state === 'leased' && entry.token === token;
  }

  /** The state recorded for `id`: absent, leased or done. */
  stateOf(id: string): 'absent' | Entry['state'] {
    return this.#entries.get(id)?.state ?? 'absent';
  }

  /** Resolves at the next complete or release, whichever comes. */
  nextSettlement(): Promise<Settlement> {
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #settle(op: Settlement['op'], id: string, token: string, apply: () => void): boolean {
    this.#checkUp();
    const entry = this.#entries.get(id);
    const held = entry?.state === 'leased' && entry.token === token;
    if (held) apply();
    for (const resolve of this.#waiting.splice(0)) resolve({ op, id });
    return held;
  }

  #checkUp(): void {
    if (this.failing) throw new Error('the test store is down');
  }
}

/**
 * What a handler call of the load tests does, drawn from the seed for its
 * event and call number: after a pause of up to a few milliseconds, so that
 * deliveries of one event overlap, it throws, fails (the route answers 500),
 * or succeeds. The ledger counts the failures.
 */
import { draw } from './seeded-random.js';
import type { SideEffectLedger } from './side-effect-ledger.js';

/** Share of handler calls that throw; as many again fail. */
const THROW_RATE = 0.1;
const FAIL_RATE = 0.1;
const MAX_DELAY_MS = 3;

export async function handlerFate(seed: number, id: string, call: number, ledger: SideEffectLedger): Promise<'fail' | 'succeed'> {
  await new Promise((resolve) => setTimeout(resolve, Math.floor(draw(seed, 'delay', id, call) * (MAX_DELAY_MS + 1))));
  const fate = draw(seed, 'fate', id, call);
  if (fate < THROW_RATE) {
    ledger.thrown += 1;
    // Express answers 500 for a rejected handler.
    throw new Error('the handler failed');
  }
  if (fate < THROW_RATE + FAIL_RATE) {
    ledger.answered500 += 1;
    return 'fail';
  }
  return 'succeed';
}

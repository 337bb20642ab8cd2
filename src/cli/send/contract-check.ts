/**
 * `send --contract`: the event checked against the service's contract before
 * it is sent, so that a fixture the receiver's validators would refuse is
 * not mistaken for a receiver fault. It is still sent: testing a refusal is
 * one reason to send it.
 */
import { isKnownEventType } from '../../core/event.js';
import { UsageError } from '../shared/args.js';
import { contractPath, readContract } from '../shared/contract.js';
import { ContractError } from '../shared/contract-error.js';
import { compileChecks, failedPaths } from '../shared/validator.js';
import { printable } from '../../base/printable.js';

/** What the user should hear before the event is sent: nothing when the contract describes `type` and `event` fits it. Throws `UsageError` for a contract it cannot use. */
export async function contractWarnings(location: string, type: string, event: unknown): Promise<string[]> {
  // As types takes it: a local file, never a download.
  const path = contractPath(location, '--contract');
  try {
    const contract = await readContract(path);
    const described = contract.events.find((one) => one.type === type);
    if (described === undefined) {
      const known = isKnownEventType(type) ? 'the spec names it, but the contract does not describe it' : 'neither the spec nor the contract names it';
      return [`--type ${type}: ${known}`];
    }
    const [check] = await compileChecks(contract, [described]);
    if (check!(event as never)) return [];
    return [`the event does not fit the contract's ${type} at ${[...new Set(failedPaths(check!, event))].join(', ')}: a receiver with its schemas answers 422`];
  } catch (error) {
    // Escaped: the message quotes the contract, text from outside.
    if (error instanceof ContractError) throw new UsageError(`--contract: ${printable(error.message, 400)}`);
    throw error;
  }
}

/** A contract or a setup `svc-webhooks types` cannot use: printed as one line, exit 2, never a stack trace. */
export class ContractError extends Error {
  override readonly name = 'ContractError';
}

/** `svc-webhooks dev`: a relay in front of a receiver, and a page that shows, diagnoses and replays each delivery. */
import { parseCommandArgs, noPositionals, receiverUrl, required, secrets, UsageError, wholeNumber } from '../shared/args.js';
import type { Command } from '../shared/command.js';
import type { CliIO } from '../shared/io.js';
import { deliveryLine } from './delivery-line.js';
import { startRelay, type Relay } from './relay.js';

const options = {
  forward: { type: 'string' },
  port: { type: 'string' },
  secret: { type: 'string', multiple: true },
  save: { type: 'string' },
} as const;

const DEFAULT_PORT = 8787;

/** How the command waits for its end: the process's Ctrl-C, or a test's own signal. */
export type StopSignal = (stop: () => void) => void;

const untilInterrupted: StopSignal = (stop) => {
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
};

/** What a failed start becomes: a usage error when the port is the cause (in use, or privileged), else the error itself. */
export function startFailure(error: unknown, port: number): unknown {
  const { code } = error as { code?: unknown };
  if (code === 'EADDRINUSE') return new UsageError(`port ${port} is in use: give another with --port`);
  if (code === 'EACCES') return new UsageError(`port ${port} needs privileges this process does not have: give another with --port`);
  return error;
}

export const devCommand = {
  name: 'dev',
  summary: 'relay deliveries to a receiver, and show, diagnose and replay each on a local page',
  help: `Usage: svc-webhooks dev --forward <receiver URL> [--port ${DEFAULT_PORT}] [--secret S] [--save deliveries.jsonl]

Starts a relay and a page on 127.0.0.1. Point the tunnel (or svc-webhooks
send) at the webhook address it prints: each delivery is recorded, verified
with the secret and diagnosed as svc-webhooks verify would, forwarded byte
for byte to the receiver, and answered with the receiver's answer. The page,
at the first address it prints (with a token of this run), lists deliveries
as they arrive, shows each one's headers, body and diagnosis, and the
receiver's own outcome when it runs svc-webhooks with outcomeHeader: 'on';
it replays them (exact bytes, re-signed, or with a new id) and sends events.
Each delivery also prints one line here once answered: time, number, type,
id, the relay's verdict, the receiver's status and outcome, milliseconds.

Options:
  --forward URL  the receiver's webhook URL
  --port N       the relay's port on 127.0.0.1 (default: ${DEFAULT_PORT}; 0 for any)
  --secret S     the endpoint's secret; without it, WEBHOOK_SECRET. Never shown.
  --save FILE    append each delivery to FILE as a JSON line, for
                 svc-webhooks replay

Stops on Ctrl-C. Exit status: 0 stopped, 2 bad arguments or a port in use.`,

  async run(args: readonly string[], io: CliIO, stopSignal: StopSignal = untilInterrupted): Promise<number> {
    const { values, positionals } = parseCommandArgs(args, options);
    noPositionals(positionals);
    const forward = receiverUrl(required(values.forward, 'forward'));
    const port = values.port === undefined ? DEFAULT_PORT : wholeNumber(values.port, 'port');
    if (port > 65_535) throw new UsageError('--port must be at most 65535');
    const secretList = secrets(values.secret);
    let relay: Relay;
    try {
      relay = await startRelay({
        forward,
        port,
        secrets: secretList,
        save: values.save,
        onDelivery: (record) => io.out(deliveryLine(record)),
        onProblem: (line) => io.err(`svc-webhooks dev: ${line}`),
      });
    } catch (error) {
      throw startFailure(error, port);
    }
    io.out(`Inspector: ${relay.inspectorUrl}`);
    io.out(`Webhooks: ${relay.webhookUrl} -> ${forward}`);
    await new Promise<void>((resolve) => stopSignal(resolve));
    await relay.close();
    return 0;
  },
} satisfies Command;

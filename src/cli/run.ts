/** The `svc-webhooks` command line: picks the command, prints help, maps errors to exit statuses. */
import { WebhookOptionsError } from '../base/options-error.js';
import { UsageError } from './shared/args.js';
import { checkCommand } from './check/check.js';
import { EXIT, type Command } from './shared/command.js';
import type { CliIO } from './shared/io.js';
import { sendCommand } from './send/send.js';
import { signCommand } from './sign/sign.js';
import { typesCommand } from './types/types.js';
import { devCommand } from './dev/dev.js';
import { replayCommand } from './replay/replay.js';
import { verifyCommand } from './verify/verify.js';

const COMMANDS: readonly Command[] = [sendCommand, checkCommand, signCommand, verifyCommand, devCommand, replayCommand, typesCommand];

const HELP = `Usage: svc-webhooks <command> [options]

Test a receiver of the Messaging and Calling Service's webhooks (Standard
Webhooks signatures, spec sections 5 and 6), and type their events from the
service's OpenAPI contract.

Commands:
${COMMANDS.map((command) => `  ${command.name.padEnd(8)}${command.summary}`).join('\n')}

Run "svc-webhooks <command> --help" for a command's options.`;

const wantsHelp = (args: readonly string[]): boolean => args.includes('--help') || args.includes('-h');

/** Runs the command line `args` (without node and the script); answers the exit status. */
export async function runCli(args: readonly string[], io: CliIO): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const command = COMMANDS.find((one) => one.name === rest[0]);
    if (name === undefined) {
      io.err(HELP);
      return EXIT.usage;
    }
    io.out(command?.help ?? HELP);
    return EXIT.ok;
  }
  const command = COMMANDS.find((one) => one.name === name);
  if (command === undefined) {
    io.err(`svc-webhooks: unknown command "${name}"\n\n${HELP}`);
    return EXIT.usage;
  }
  if (wantsHelp(rest)) {
    io.out(command.help);
    return EXIT.ok;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    // The core throws WebhookOptionsError for a caller's mistake (an empty id, a malformed secret): a usage error here.
    const usage = error instanceof UsageError || error instanceof WebhookOptionsError;
    if (!usage) throw error;
    io.err(`svc-webhooks ${command.name}: ${error.message.replace(/^svc-webhooks: /, '')}`);
    io.err(`Run "svc-webhooks ${command.name} --help" for usage.`);
    return EXIT.usage;
  }
}

#!/usr/bin/env node
/**
 * The `svc-webhooks` bin: send, check, sign and verify webhooks from a
 * terminal or a CI job. `svc-webhooks --help` lists the commands.
 */
import { processIO } from './shared/io.js';
import { runCli } from './run.js';

// Awaited at the top level, so that importing the bin finishes once the command has.
try {
  process.exitCode = await runCli(process.argv.slice(2), processIO);
} catch (error) {
  console.error(error);
  process.exitCode = 70;
}

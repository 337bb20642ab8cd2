#!/usr/bin/env node
/**
 * The `svc-webhooks` bin: send, check, sign and verify webhooks from a
 * terminal or a CI job. `svc-webhooks --help` lists the commands.
 */
import { processIO } from './io.js';
import { runCli } from './run.js';

runCli(process.argv.slice(2), processIO).then(
  (status) => {
    process.exitCode = status;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 70;
  },
);

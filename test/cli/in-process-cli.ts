/**
 * The command line run in this process, its streams replaced by buffers: the
 * same shape of run as the packed bin gives, so scenarios serve both.
 */
import { Buffer } from 'node:buffer';
import { checkCommand } from '../../src/cli/check/check.js';
import { SERVICE_TIMING, type DeliveryTiming } from '../../src/testing/delivery.js';
import type { CliIO } from '../../src/cli/shared/io.js';
import { runCli } from '../../src/cli/run.js';
import { sendCommand } from '../../src/cli/send/send.js';
import type { RunCli } from './delivery-scenarios.js';

/** Timing that records each pause instead of waiting it out. */
export interface RecordedTiming extends DeliveryTiming {
  readonly pauses: number[];
}

/** The service's answer window (unless given another), with pauses recorded and skipped. */
export function recordedTiming(answerWindowMs = SERVICE_TIMING.answerWindowMs): RecordedTiming {
  const pauses: number[] = [];
  return {
    answerWindowMs,
    pauses,
    pause: async (ms) => {
      pauses.push(ms);
    },
  };
}

/**
 * Runs `svc-webhooks …args` in this process. With `timing`, send and check
 * run with it (their other mistakes still end as thrown errors); without,
 * every command goes through runCli as the bin does.
 */
export function inProcessCli(timing?: DeliveryTiming): RunCli {
  return async (args, input = '') => {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const io: CliIO = {
      out: (line) => stdout.push(`${line}\n`),
      err: (line) => stderr.push(`${line}\n`),
      stdin: async () => Buffer.from(input),
    };
    const [name, ...rest] = args;
    const command = timing === undefined ? undefined : [sendCommand, checkCommand].find((one) => one.name === name);
    const code = command === undefined ? await runCli(args, io) : await command.run(rest, io, timing);
    return { code, stdout: stdout.join(''), stderr: stderr.join('') };
  };
}

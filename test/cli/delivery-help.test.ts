/**
 * The help of send and check, read from the command objects alone (this file
 * does not load the command line's entry): it documents the options they take
 * and the answer window they use.
 */
import { describe, expect, it } from 'vitest';
import { checkCommand } from '../../src/cli/check.js';
import { SERVICE_TIMING } from '../../src/testing/delivery.js';
import { sendCommand } from '../../src/cli/send.js';

describe('the help of send and check', () => {
  it.each([
    { command: sendCommand, options: ['--secret S', '--type T', '--data D', '--id ID', '--retries N'] },
    { command: checkCommand, options: ['--secret S', '--json'] },
  ])('$command.name describes each option, the 10 s window and the exit statuses', ({ command, options }) => {
    expect(command.help).toMatch(new RegExp(`^Usage: svc-webhooks ${command.name} <url> --secret S `));
    for (const option of options) expect(command.help).toMatch(new RegExp(`^  ${option} `, 'm'));
    expect(command.help).toMatch(new RegExp(`\\b${SERVICE_TIMING.answerWindowMs / 1000} s(econds)?\\b`));
    expect(command.help).toMatch(/\nExit status: 0 .*, 1 .*, 2 bad arguments\.$/);
  });
});

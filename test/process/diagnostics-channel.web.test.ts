/**
 * `node:diagnostics_channel` as the web build finds it: the runtime's own
 * where `process.getBuiltinModule` hands it out (Workers with
 * `nodejs_compat`, and Node itself), nothing where the runtime has no such
 * module or no `process`, so that `diagnostics.ts` makes no channel there
 * instead of failing to load.
 */
import * as diagnosticsChannel from 'node:diagnostics_channel';
import { afterEach, describe, expect, it, vi } from 'vitest';

const WEB_MODULE = '../../src/process/diagnostics-channel.web.js';

/** Loads the web module afresh, with `globalThis.process` as `process` while it loads. */
async function loadWith(process: unknown): Promise<typeof import('../../src/process/diagnostics-channel.web.js')> {
  vi.resetModules();
  vi.stubGlobal('process', process);
  try {
    return await import(WEB_MODULE);
  } finally {
    vi.unstubAllGlobals();
  }
}

afterEach(() => vi.resetModules());

describe('diagnostics_channel in the web build', () => {
  it("hands out the runtime's own channel and tracingChannel where getBuiltinModule has the module", async () => {
    const asked: string[] = [];
    const web = await loadWith({
      getBuiltinModule: (name: string) => {
        asked.push(name);
        return diagnosticsChannel;
      },
    });
    expect(asked).toEqual(['node:diagnostics_channel']);
    expect(web.channel).toBe(diagnosticsChannel.channel);
    expect(web.tracingChannel).toBe(diagnosticsChannel.tracingChannel);
  });

  it('hands out nothing where the runtime has no such module, no getBuiltinModule, or no process', async () => {
    for (const process of [{ getBuiltinModule: () => undefined }, {}, undefined]) {
      const web = await loadWith(process);
      expect(web.channel).toBeUndefined();
      expect(web.tracingChannel).toBeUndefined();
    }
  });
});

/**
 * `node:diagnostics_channel` in the web build (Vercel Edge, Cloudflare
 * Workers), which puts this file in its place: the runtime's own where it
 * hands it out (`process.getBuiltinModule`, as Workers do with
 * `nodejs_compat`), else nothing, and `diagnostics.ts` then makes no channel.
 */

interface Builtin {
  readonly channel?: unknown;
  readonly tracingChannel?: unknown;
}

const builtin = (globalThis as { process?: { getBuiltinModule?: (name: string) => unknown } }).process?.getBuiltinModule?.('node:diagnostics_channel') as
  | Builtin
  | undefined;

/** `diagnostics_channel.channel`, where the runtime has it. */
export const channel = builtin?.channel;
/** `diagnostics_channel.tracingChannel`, where the runtime has it. */
export const tracingChannel = builtin?.tracingChannel;

/** Which runtime this is, and its version, told by the runtime itself. */
export function runtimeName(): { name: string; version: string } {
  const g = globalThis as {
    EdgeRuntime?: string;
    Bun?: { version: string };
    Deno?: { version: { deno: string } };
    navigator?: { userAgent?: string };
    process?: { versions?: { node?: string } };
  };
  // Vercel's Edge runtime names itself, and gives no version: the runner reports its package's.
  if (typeof g.EdgeRuntime === 'string') return { name: 'edge-runtime', version: 'unknown' };
  if (g.Bun !== undefined) return { name: 'bun', version: g.Bun.version };
  if (g.Deno !== undefined) return { name: 'deno', version: g.Deno.version.deno };
  // workerd gives no version to the script; the runner reports its package's.
  // Without nodejs_compat a Worker has no process.
  if (g.navigator?.userAgent === 'Cloudflare-Workers') return { name: g.process === undefined ? 'workerd-no-compat' : 'workerd', version: 'unknown' };
  return { name: 'node', version: g.process?.versions?.node ?? 'unknown' };
}

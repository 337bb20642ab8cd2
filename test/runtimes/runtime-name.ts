/** Which runtime this is, and its version, told by the runtime itself. */
export function runtimeName(): { name: string; version: string } {
  const g = globalThis as {
    Bun?: { version: string };
    Deno?: { version: { deno: string } };
    navigator?: { userAgent?: string };
    process?: { versions?: { node?: string } };
  };
  if (g.Bun !== undefined) return { name: 'bun', version: g.Bun.version };
  if (g.Deno !== undefined) return { name: 'deno', version: g.Deno.version.deno };
  // workerd gives no version to the script; the runner reports its package's.
  if (g.navigator?.userAgent === 'Cloudflare-Workers') return { name: 'workerd', version: 'unknown' };
  return { name: 'node', version: g.process?.versions?.node ?? 'unknown' };
}

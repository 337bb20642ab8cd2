/** workerd's module of the Worker's bindings, of which the test Workers use `env` alone. */
declare module 'cloudflare:workers' {
  /** The Worker's bindings, the same object as its handlers' `env`. */
  export const env: unknown;
}

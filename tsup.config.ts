/** Builds every entry of build/entries.ts as ESM (.js) and CommonJS (.cjs), each with its own types. */
import { defineConfig } from 'tsup';
import { ENTRIES, outputName } from './build/entries.js';

export default defineConfig({
  entry: Object.fromEntries(Object.entries(ENTRIES).map(([subpath, source]) => [outputName(subpath), source])),
  format: ['esm', 'cjs'],
  dts: true,
  tsconfig: 'tsconfig.build.json',
  // Shared code goes to common chunks in both formats, so every subpath sees
  // one WebhookVerificationError class and instanceof holds across them.
  splitting: true,
  // Frameworks and clients stay the user's own copies.
  skipNodeModulesBundle: true,
  // Keep `node:buffer` and `node:crypto` as written: bundlers for Workers and
  // other non-Node targets take a bare `buffer` for an npm package.
  removeNodeProtocol: false,
  platform: 'node',
  target: 'es2022',
  clean: true,
});

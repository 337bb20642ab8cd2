/**
 * The esbuild plugin of the web build: each `*.web` module in the place of
 * its namesake (`runtime-crypto.web` of `runtime-crypto`,
 * `diagnostics-channel.web` of `node:diagnostics_channel`), and any other
 * `node:` import an error. `extension` is that of the modules bundled: `.js`
 * for tsc's output, `.ts` for the sources (the tests' Workers).
 */
import { join, relative } from 'node:path';
import type { Plugin } from 'esbuild';

export function webModules(root: string, diagnosticsChannel: string, extension: '.js' | '.ts'): Plugin {
  return {
    name: 'web-modules',
    setup(esbuild) {
      esbuild.onResolve({ filter: /\/runtime-crypto\.js$/ }, ({ path, resolveDir }) => ({ path: join(resolveDir, path.replace(/\.js$/, `.web${extension}`)) }));
      esbuild.onResolve({ filter: /^node:diagnostics_channel$/ }, () => ({ path: diagnosticsChannel }));
      esbuild.onResolve({ filter: /^node:/ }, ({ path, importer }) => ({
        errors: [{ text: `${path}, imported by ${relative(root, importer)}, is not in the web build: give it a *.web.ts twin` }],
      }));
    },
  };
}

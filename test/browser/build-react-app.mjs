/**
 * Builds test/fixtures/react-app with Vite, as a builder would build a page that uses
 * `@amp-labs/react`: `node build-react-app.mjs <outDir> <apiOrigin>`. The package reads its API base
 * URL from `process.env.REACT_APP_AMP_SERVER` at build time; Vite's `define` sets it to Ferry's api
 * host. Runs in its own process so Vite's native bundler stays out of Jest's module system.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

const [outDir, apiOrigin] = process.argv.slice(2);
if (!outDir || !apiOrigin) {
  console.error('usage: node build-react-app.mjs <outDir> <apiOrigin>');
  process.exit(2);
}

/**
 * The package's stylesheet imports a web font from a CDN. A page that must work offline (or under a
 * strict Content-Security-Policy) drops remote `@import`s; the components fall back to system fonts.
 */
const offlineCss = {
  name: 'offline-css',
  enforce: 'pre',
  transform(code, id) {
    if (!id.endsWith('.css')) return undefined;
    return code.replace(/@import\s*(?:url\()?\s*["']https?:\/\/[^"']*["']\s*\)?[^;]*;/g, '');
  },
};

await build({
  root: fileURLToPath(new URL('../fixtures/react-app/', import.meta.url)),
  configFile: false,
  logLevel: 'warn',
  base: '/',
  define: { 'process.env.REACT_APP_AMP_SERVER': JSON.stringify(apiOrigin) },
  // React 17+ automatic runtime: what @vitejs/plugin-react configures, without its Babel peers.
  plugins: [offlineCss],
  oxc: { jsx: { runtime: 'automatic', importSource: 'react' } },
  build: { outDir, emptyOutDir: true, minify: false, sourcemap: false, reportCompressedSize: false },
});

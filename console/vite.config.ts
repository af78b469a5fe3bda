import { defineConfig } from 'vite';

/**
 * The console is served by the api host under /console; everything is bundled, nothing from a CDN.
 * `scripts/build-console.js` runs it with `root: console/`.
 */
export default defineConfig({
  base: '/console/',
  build: { outDir: 'dist', emptyOutDir: true, assetsInlineLimit: 0, sourcemap: false },
  oxc: { jsx: { runtime: 'automatic' } },
});

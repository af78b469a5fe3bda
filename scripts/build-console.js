#!/usr/bin/env node
// Builds the builder console (console/ → console/dist, served by the api host at /console).
//   node scripts/build-console.js              build now
//   node scripts/build-console.js --if-missing build only when console/dist/index.html is absent
// Vite and the console's libraries are dev dependencies: where they are not installed
// (`npm ci --omit=dev`), the build is skipped with a note and the api host answers /console with 503.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const consoleDir = join(root, 'console');
const dist = join(consoleDir, 'dist');

if (process.argv.includes('--if-missing') && existsSync(join(dist, 'index.html'))) process.exit(0);

try {
  createRequire(import.meta.url).resolve('vite');
} catch {
  process.stderr.write('console: vite is not installed (dev dependencies omitted); skipping the build\n');
  process.exit(0);
}

const { build } = await import('vite');
const started = performance.now();
await build({ root: consoleDir, configFile: join(consoleDir, 'vite.config.ts'), logLevel: 'warn' });
const seconds = ((performance.now() - started) / 1000).toFixed(1);

let bytes = 0;
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else bytes += statSync(path).size;
  }
};
walk(dist);
process.stderr.write(`console: built console/dist in ${seconds} s (${(bytes / 1024).toFixed(0)} KB)\n`);

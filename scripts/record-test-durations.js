#!/usr/bin/env node
/**
 * Writes test/setup/durations.json from a Jest JSON report (default .data/jest-results.json): the
 * seconds each suite took, which the sequencer uses to start the longest first on a fresh clone.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

const report = JSON.parse(readFileSync(process.argv[2] ?? '.data/jest-results.json', 'utf8'));
const durations = Object.fromEntries(
  report.testResults
    .map((suite) => [
      relative(process.cwd(), suite.name),
      Math.round((suite.endTime - suite.startTime) / 100) / 10,
    ])
    .sort(([a], [b]) => (a < b ? -1 : 1)),
);
writeFileSync(
  new URL('../test/setup/durations.json', import.meta.url),
  JSON.stringify(durations, null, 2) + '\n',
);
console.log(`recorded ${Object.keys(durations).length} suites`);

#!/usr/bin/env node
/**
 * Writes test/setup/durations.json from a Jest JSON report (default .data/jest-results.json): the
 * seconds each suite took, which the sequencer uses to start the longest first on a fresh clone.
 * Also writes test/setup/conformance-durations.json, the seconds each provider's conformance suite
 * took, which test/connectors/kit/specs.ts uses to balance the conformance shards. A partial run
 * (some suites, `CONFORMANCE=…`) updates what it ran and keeps the rest as recorded.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

const report = JSON.parse(readFileSync(process.argv[2] ?? '.data/jest-results.json', 'utf8'));
const tenths = (ms) => Math.round(ms / 100) / 10;
const byName = (entries) => Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : 1)));
const fileUrl = (file) => new URL(`../test/setup/${file}`, import.meta.url);
const recorded = (file) => {
  try {
    return JSON.parse(readFileSync(fileUrl(file), 'utf8'));
  } catch {
    return {};
  }
};
const write = (file, value) => writeFileSync(fileUrl(file), JSON.stringify(value, null, 2) + '\n');

const durations = byName(
  Object.entries({
    ...recorded('durations.json'),
    ...Object.fromEntries(
      report.testResults.map((suite) => [
        relative(process.cwd(), suite.name),
        tenths(suite.endTime - suite.startTime),
      ]),
    ),
  }),
);
write('durations.json', durations);

const providerMs = new Map();
for (const suite of report.testResults) {
  for (const test of suite.assertionResults ?? []) {
    const provider = /^(\S+) conformance$/.exec(test.ancestorTitles?.[0] ?? '')?.[1];
    if (provider) providerMs.set(provider, (providerMs.get(provider) ?? 0) + (test.duration ?? 0));
  }
}
if (providerMs.size) {
  const measured = Object.fromEntries([...providerMs].map(([p, ms]) => [p, tenths(ms)]));
  write(
    'conformance-durations.json',
    byName(Object.entries({ ...recorded('conformance-durations.json'), ...measured })),
  );
}
console.log(`recorded ${Object.keys(durations).length} suites, ${providerMs.size} conformance providers`);

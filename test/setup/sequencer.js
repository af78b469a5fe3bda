import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import TestSequencer from '@jest/test-sequencer';

/**
 * Longest suites first, so no worker sits idle at the end while another runs a long file. Jest
 * does this itself from its cache of earlier runs; a fresh clone (CI) has none and falls back to
 * file size, which ran the small conformance files last and alone. `durations.json` holds the
 * seconds each suite took in a recorded run (`node scripts/record-test-durations.js` after
 * `npm test -- --json --outputFile=.data/jest-results.json`); Jest's own cache wins when it has one.
 */
const Base = TestSequencer.default ?? TestSequencer;
const recorded = JSON.parse(readFileSync(new URL('./durations.json', import.meta.url), 'utf8'));

export default class LongestFirst extends Base {
  sort(tests) {
    const seconds = (test) => {
      const cached = this.time?.(test);
      if (cached != null) return cached / 1000;
      // An unrecorded suite counts as a short one (new files are usually small).
      return recorded[relative(test.context.config.rootDir, test.path)] ?? 1;
    };
    return [...tests].sort((a, b) => seconds(b) - seconds(a));
  }
}

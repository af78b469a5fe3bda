import { conformance } from './kit/conformance.js';
import { specsOfShard } from './kit/specs.js';

/** Shard 2 of the deep connectors' conformance suites (see conformance.test.ts). */
for (const spec of await specsOfShard(2)) conformance(spec);

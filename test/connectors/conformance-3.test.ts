import { conformance } from './kit/conformance.js';
import { specsOfShard } from './kit/specs.js';

/** Shard 3 of the deep connectors' conformance suites (see conformance.test.ts). */
for (const spec of await specsOfShard(3)) conformance(spec);

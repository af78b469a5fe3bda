import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeGong } from '../fakes/gong.js';

/**
 * Gong API v2: calls (`fromDateTime`/`toDateTime` bound the call's start, not its changes; no
 * modification time; fixed pages of 100 with a cursor; 404 when nothing matches) and users (no time
 * filter at all), at 3 calls a second, against its local fake (test/connectors/fakes/gong.ts),
 * written from Gong's API documentation. Deleted calls and removed users leave the listings and
 * nothing reveals them.
 */
export const spec: ConformanceSpec = {
  provider: 'gong',
  reference: 'https://gong.app.gong.io/settings/api/documentation#get-/v2/calls',
  start: () => startFakeGong(),
  objects: [
    { name: 'calls', revealsDeletions: false },
    { name: 'users', revealsDeletions: false },
  ],
};

import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeIterable } from '../fakes/iterable.js';

/**
 * Iterable's REST API (lists and campaigns) against its local fake (test/connectors/fakes/
 * iterable.ts), written from Iterable's reference. Neither listing filters by time (lists are
 * answered whole, campaigns paged by number), so a read walks them whole and a deleted list or
 * campaign shows only by its absence: deletions are revealed by complete walks. Users are left
 * out: Iterable lists them only through its export API (newline-delimited JSON, a few requests a
 * minute).
 */
export const spec: ConformanceSpec = {
  provider: 'iterable',
  reference: 'https://api.iterable.com/api/docs',
  start: () => startFakeIterable(),
  objects: [
    { name: 'campaigns', revealsDeletions: true },
    { name: 'lists', revealsDeletions: true },
  ],
};

import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeBraze } from '../fakes/braze.js';

/**
 * Braze's REST export endpoints (campaigns and Canvases listed in groups of 100 by creation time,
 * filtered by `last_edit.time[gt]`; segments listed whole, with no time) against its local fake
 * (test/connectors/fakes/braze.ts), written from Braze's API reference. Nothing is deleted through
 * the API: archiving leaves a campaign, Canvas or segment out of its list, which says nothing of it,
 * so campaigns and Canvases reveal no deletions and a segment's shows only as missing from a whole
 * list.
 */
export const spec: ConformanceSpec = {
  provider: 'braze',
  reference: 'https://www.braze.com/docs/api/endpoints/export/campaigns/get_campaigns/',
  start: () => startFakeBraze(),
  templateVars: { workspace: 'iad-01' },
  objects: [
    { name: 'campaigns', revealsDeletions: false },
    { name: 'canvases', revealsDeletions: false },
    { name: 'segments', revealsDeletions: true },
  ],
};

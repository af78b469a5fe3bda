import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeAttio } from '../fakes/attio.js';

/**
 * Attio's REST API v2 (records of `people` and `companies` queried by `POST
 * /v2/objects/{object}/records/query` with `limit`/`offset`, values by attribute slug under
 * `values`, attributes described by `GET /v2/objects/{object}/attributes`) against its local fake
 * (test/connectors/fakes/attio.ts), written from Attio's reference. No attribute says when a record
 * changed, so nothing can list what changed since a time: a read walks everything, and a deleted
 * record shows only as missing from that walk.
 */
const value = (stored: Record<string, unknown>, slug: string) =>
  ((stored.values as Record<string, { value?: unknown }[]>)[slug] ?? [])[0]?.value;

export const spec: ConformanceSpec = {
  provider: 'attio',
  reference: 'https://docs.attio.com/rest-api/endpoint-reference/records/list-records',
  start: () => startFakeAttio(),
  objects: [
    {
      name: 'people',
      revealsDeletions: true,
      write: {
        create: { email_addresses: 'ada@example.com', job_title: 'Analyst' },
        update: { job_title: 'Countess' },
        check: (stored) => value(stored, 'job_title'),
        delete: true,
      },
      metadata: {
        job_title: { valueType: 'string', readOnly: false, isCustom: false },
        created_at: { valueType: 'datetime', readOnly: true },
        record_id: { readOnly: true },
        tier: { valueType: 'singleSelect', isCustom: true },
      },
    },
    {
      name: 'companies',
      revealsDeletions: true,
      write: {
        create: { name: 'Analytical Engines' },
        update: { description: 'Difference engines' },
        check: (stored) => value(stored, 'description'),
        delete: true,
      },
      metadata: {
        name: { valueType: 'string', readOnly: false },
        tier: { valueType: 'singleSelect', isCustom: true },
      },
    },
  ],
};

import { setStored, type ConformanceSpec } from '../kit/conformance.js';
import { startSandboxFake } from '../fakes/sandbox.js';

/**
 * The bundled sandbox CRM's `people` against a fake of its contacts API (test/connectors/fakes/
 * sandbox.ts): the kit's full-read object (`read.fullRead`), a listing that neither filters by time
 * nor is declared to say when a record changed. Deletions are inferred from complete walks.
 */
export const spec: ConformanceSpec = {
  provider: 'sandboxApiKey',
  reference: 'src/sandbox (Ferry’s bundled CRM): src/sandbox/api.ts, src/sandbox/list-query.ts',
  start: () => startSandboxFake(),
  objects: [
    {
      name: 'people',
      revealsDeletions: true,
      fields: { selected: 'email', other: 'phone' },
      search: { field: 'email', set: setStored('people', 'email') },
      write: {
        create: { email: 'ada@example.com', firstName: 'Ada' },
        update: { lastName: 'Lovelace' },
        check: (stored) => stored.lastName,
        delete: true,
      },
    },
  ],
};

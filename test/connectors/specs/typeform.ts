import type { ConformanceSpec } from '../kit/conformance.js';
import { FAKE_RESPONSES_FORM, startFakeTypeform } from '../fakes/typeform.js';

/**
 * Typeform's Create and Responses APIs (forms listed whole by `page`/`page_size` up to 200;
 * responses of a form by `since`/`until` on `submitted_at`, `page_size` up to 1000, newest first,
 * paged by the `before` token; 2 requests a second) against its local fake
 * (test/connectors/fakes/typeform.ts). Seeded responses sit in the fake's oldest form (rspForm1). Deleted forms
 * and responses are listed nowhere.
 */
export const spec: ConformanceSpec = {
  provider: 'typeform',
  reference: 'https://www.typeform.com/developers/',
  start: () => startFakeTypeform(),
  // The form whose responses are read: the one the fake seeds responses into.
  templateVars: { formId: FAKE_RESPONSES_FORM },
  objects: [
    {
      name: 'forms',
      revealsDeletions: false,
      fields: { selected: 'title' },
      write: {
        create: { title: 'Engine survey', fields: [] },
        update: { title: 'Engine survey, second edition' },
        check: (stored) => stored.title,
        delete: true,
      },
    },
    { name: 'responses', revealsDeletions: false, fields: { selected: 'answers' } },
  ],
};

import type { ConformanceSpec } from '../kit/conformance.js';
import { startFakeWrike } from '../fakes/wrike.js';

/**
 * Wrike's API v4 against its local fake (test/connectors/fakes/wrike.ts), written from
 * https://developers.wrike.com/overview: tasks and folders filtered by an inclusive `updatedDate`
 * range, paged by `nextPageToken` (`pageSize` at most 1000), deleted into the Recycle Bin (still
 * listed, `scope` `RbTask`/`RbFolder`); contacts listed whole, deleted users marked `deleted`.
 * Custom field values sit in `customFields: [{id, value}]`, described by `GET /customfields`; the
 * spec names them `customFields.<id>`.
 */
export const spec: ConformanceSpec = {
  provider: 'wrike',
  reference: 'https://developers.wrike.com/overview',
  // The folder writes create tasks and folders in (the fake's root folder).
  templateVars: { folderId: 'IEAAAAAAI7777777' },
  start: () => startFakeWrike(),
  objects: [
    {
      name: 'tasks',
      revealsDeletions: true,
      fields: { selected: 'title' },
      write: {
        create: { title: 'Write the report' },
        update: { title: 'Write the quarterly report' },
        check: (stored) => stored.title,
        delete: true,
      },
      metadata: {
        'customFields.IEAAAAAAJUAAAAAC': {
          displayName: 'Phase',
          valueType: 'singleSelect',
          isCustom: true,
          values: [
            { value: 'Design', displayValue: 'Design' },
            { value: 'Build', displayValue: 'Build' },
          ],
        },
        'customFields.IEAAAAAAJUAAAAAB': { displayName: 'Cost center', valueType: 'string', isCustom: true },
      },
    },
    {
      name: 'folders',
      revealsDeletions: true,
      fields: { selected: 'title' },
      write: {
        create: { title: 'Launch' },
        update: { description: 'Everything for the launch' },
        check: (stored) => stored.description,
        delete: true,
      },
    },
    { name: 'contacts', revealsDeletions: true, fields: { selected: 'firstName' } },
  ],
};

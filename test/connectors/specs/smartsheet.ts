import type { ConformanceSpec } from '../kit/conformance.js';
import { SMARTSHEET_SHEET_ID, startFakeSmartsheet } from '../fakes/smartsheet.js';

type Cell = { columnId: number; value: unknown };

/**
 * Smartsheet's API 2.0 against its local fake (test/connectors/fakes/smartsheet.ts), written from
 * https://smartsheet.redoc.ly/: sheets listed with `modifiedSince` (inclusive) and `page`/`pageSize`
 * or `includeAll`; the rows of one sheet (the connection's `sheetId`) read from `GET
 * /2.0/sheets/{sheetId}` with `rowsModifiedSince`, their values in `cells: [{columnId, value}]`
 * (named `cells.<columnId>` here), described by the sheet's columns. A deleted sheet goes to
 * Deleted Items, which the API does not list; a deleted row is gone: neither reveals deletions.
 */
export const spec: ConformanceSpec = {
  provider: 'smartsheet',
  reference: 'https://smartsheet.redoc.ly/',
  templateVars: { sheetId: String(SMARTSHEET_SHEET_ID) },
  start: () => startFakeSmartsheet(),
  objects: [
    {
      name: 'sheets',
      revealsDeletions: false,
      fields: { selected: 'name' },
      write: {
        create: { name: 'Launch plan', columns: [{ title: 'Task', type: 'TEXT_NUMBER', primary: true }] },
        update: { name: 'Launch plan 2027' },
        check: (stored) => stored.name,
        delete: true,
      },
    },
    {
      name: 'rows',
      revealsDeletions: false,
      fields: { selected: 'rowNumber' },
      write: {
        create: { 'cells.1001': 'Write the plan' },
        update: { 'cells.1002': 'Ask Ada first' },
        check: (stored) => (stored.cells as Cell[]).find((cell) => cell.columnId === 1002)?.value,
        delete: true,
      },
      metadata: {
        'cells.1001': { displayName: 'Task', valueType: 'string' },
        'cells.1003': {
          displayName: 'Status',
          valueType: 'singleSelect',
          values: [
            { value: 'Not started', displayValue: 'Not started' },
            { value: 'Done', displayValue: 'Done' },
          ],
        },
      },
    },
  ],
};

import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  asConformanceFake,
  bearerCredential,
  FakeHttpError,
  FakeProvider,
  RecordStore,
  type StoredRecord,
  RequestWindow,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for Smartsheet's API 2.0 (https://smartsheet.redoc.ly/: sheets, rows, columns,
 * paging, error codes, rate limiting), under the catalog's base `https://api.smartsheet.com`
 * (methods at `/2.0/...`):
 *
 * - OAuth 2.0 bearer tokens. Errors `{errorCode, message, refId}` (1002 invalid token 401, 1006 not
 *   found 404, 1008 unparsable request 400, 4003 rate limit 429 with `Retry-After`); 300 requests
 *   a minute per token.
 * - `GET /2.0/sheets`: `{pageNumber, pageSize, totalPages, totalCount, data: [{id, name,
 *   accessLevel, permalink, createdAt, modifiedAt}]}`, paged by `page` (from 1) and `pageSize`
 *   (default 100, at most 10000: verify), or everything at once with `includeAll=true`;
 *   `modifiedSince` keeps sheets modified at or after it (to the second). Sheets in id order.
 * - `GET /2.0/sheets/{sheetId}`: the sheet with `columns` and `rows` (`{id, rowNumber, createdAt,
 *   modifiedAt, cells: [{columnId, value, displayValue}]}`) in sheet order; `rowsModifiedSince`
 *   keeps rows modified at or after it; `page`/`pageSize` page the rows (all of them without),
 *   `totalRowCount` counts what the filter keeps; `columnIds=a,b` keeps only those cells.
 * - Rows: `POST /2.0/sheets/{sheetId}/rows` and `PUT` take a list of rows (`toBottom`, `cells:
 *   [{columnId, value}]`; an update names each row's `id` and changes only the cells sent),
 *   `DELETE /2.0/sheets/{sheetId}/rows?ids=1,2`; they answer `{message: "SUCCESS", resultCode: 0,
 *   result}`. A deleted row is gone.
 * - Sheets: `POST /2.0/sheets` (`name` and `columns`, exactly one `primary`), `PUT
 *   /2.0/sheets/{id}` (`name`), `DELETE` (to Deleted Items, which the API does not list).
 * - `GET /2.0/sheets/{sheetId}/columns`: `{data: [{id, index, title, type, primary, options}]}`
 *   (types `TEXT_NUMBER`, `DATE`, `PICKLIST`, `CHECKBOX`, `CONTACT_LIST`…).
 * - Times `2024-01-15T10:30:00Z`, to the second; ids large integers.
 */

type SmartsheetRecord = Record<string, unknown> & { id: number };
type Row = StoredRecord<SmartsheetRecord>;
type Cell = { columnId: number; value: unknown; displayValue?: string };

const PAGE_MAX = 10_000;
const PAGE_DEFAULT = 100;
const PER_MINUTE = 300;
export const SMARTSHEET_SHEET_ID = 4583173393803140;
export const smartsheetColumns = [
  { id: 1001, index: 0, title: 'Task', type: 'TEXT_NUMBER', primary: true },
  { id: 1002, index: 1, title: 'Owner note', type: 'TEXT_NUMBER' },
  { id: 1003, index: 2, title: 'Status', type: 'PICKLIST', options: ['Not started', 'Done'] },
  { id: 1004, index: 3, title: 'Due', type: 'DATE' },
];

const wholeSecond = (ms: number) => Math.floor(ms / 1000) * 1000;
const smartsheetTime = (ms: number) => new Date(wholeSecond(ms)).toISOString().replace('.000Z', 'Z');

export async function startFakeSmartsheet(): Promise<ConformanceFake> {
  const sheets = new RecordStore<SmartsheetRecord>();
  const rows = new RecordStore<SmartsheetRecord>();
  let nextId = 7_000_000_000_001;
  const budget = new RequestWindow(PER_MINUTE, 60_000);

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => ({
      errorCode:
        error.status === 401
          ? 1002
          : error.status === 429
            ? 4003
            : error.status === 404
              ? 1006
              : error.status >= 500
                ? 4000
                : Number(error.code ?? 1008),
      message: error.message,
      refId: `ref-${Math.random().toString(36).slice(2, 10)}`,
    }),
    rateLimitHeaders: () => ({ 'Retry-After': '1' }),
  });
  const now = () => fake.now();
  const router = fake.router;

  router.use(budget.refusing((headers) => new FakeHttpError(429, 'Rate limit exceeded.', '4003', headers)));

  const timeParameter = (ctx: Context, name: string): number | undefined => {
    const text = ctx.query[name];
    if (text === undefined) return undefined;
    const value = Date.parse(String(text));
    if (Number.isNaN(value)) throw new FakeHttpError(400, `Invalid value for ${name}.`, '1018');
    return value;
  };
  const visible = (row: Row) => (row.visibleFromMs ?? row.modifiedMs) <= now();

  /** `page`/`pageSize`/`includeAll`, logged as the listing's page size. */
  const paging = (ctx: Context, object: string, withoutPaging: 'all' | 'default') => {
    const includeAll = ctx.query.includeAll === 'true';
    const sizeText = ctx.query.pageSize;
    const pageText = ctx.query.page;
    const all = includeAll || (withoutPaging === 'all' && sizeText === undefined && pageText === undefined);
    const pageSize = all ? Infinity : sizeText === undefined ? PAGE_DEFAULT : Number(sizeText);
    const page = pageText === undefined ? 1 : Number(pageText);
    if (!all && (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > PAGE_MAX))
      throw new FakeHttpError(400, `pageSize must be between 1 and ${PAGE_MAX}.`, '1018');
    if (!Number.isInteger(page) || page < 1) throw new FakeHttpError(400, 'page must be 1 or more.', '1018');
    fake.logListing(ctx, { object, pageSize: all ? PAGE_MAX : pageSize, maxPageSize: PAGE_MAX });
    return <T>(items: T[]) => {
      const size = all ? Math.max(items.length, 1) : pageSize;
      const totalPages = Math.max(1, Math.ceil(items.length / size));
      // Smartsheet answers a page past the end with the last page.
      const number = Math.min(page, totalPages);
      return { number, size, totalPages, items: items.slice((number - 1) * size, number * size) };
    };
  };

  router.get('/2.0/sheets', (ctx) => {
    const since = timeParameter(ctx, 'modifiedSince');
    const found = sheets
      .live()
      .filter((row) => visible(row) && (since === undefined || row.modifiedMs >= wholeSecond(since)));
    const page = paging(ctx, 'sheets', 'default')(found);
    ctx.body = {
      pageNumber: page.number,
      pageSize: page.size,
      totalPages: page.totalPages,
      totalCount: found.length,
      data: page.items.map((row) => row.record),
    };
  });

  const sheetOf = (id: string): Row => {
    const sheet = sheets.get(id);
    if (!sheet) throw new FakeHttpError(404, 'Not Found', '1006');
    return sheet;
  };
  const rowsOf = (sheetId: number) =>
    rows
      .live()
      .filter((row) => row.record.sheetId === sheetId)
      .sort((a, b) => (a.record.rowNumber as number) - (b.record.rowNumber as number));
  const renumber = (sheetId: number) =>
    rowsOf(sheetId).forEach((row, index) => (row.record.rowNumber = index + 1));
  const presentRow = (row: Row, columnIds?: number[]) => {
    const { sheetId: _sheet, ...record } = row.record;
    const cells = (record.cells as Cell[]).filter((cell) => !columnIds || columnIds.includes(cell.columnId));
    return { ...record, cells };
  };

  router.get('/2.0/sheets/:sheetId', (ctx) => {
    const sheet = sheetOf(ctx.params.sheetId);
    const since = timeParameter(ctx, 'rowsModifiedSince');
    const columnIds =
      ctx.query.columnIds === undefined ? undefined : String(ctx.query.columnIds).split(',').map(Number);
    const found = rowsOf(sheet.record.id).filter(
      (row) => visible(row) && (since === undefined || row.modifiedMs >= wholeSecond(since)),
    );
    const page = paging(ctx, 'rows', 'all')(found);
    ctx.body = {
      ...sheet.record,
      columns: smartsheetColumns,
      totalRowCount: found.length,
      rows: page.items.map((row) => presentRow(row, columnIds)),
    };
  });

  router.get('/2.0/sheets/:sheetId/columns', (ctx) => {
    sheetOf(ctx.params.sheetId);
    ctx.body = {
      pageNumber: 1,
      pageSize: 100,
      totalPages: 1,
      totalCount: smartsheetColumns.length,
      data: smartsheetColumns,
    };
  });

  router.get('/2.0/sheets/:sheetId/rows/:rowId', (ctx) => {
    const sheet = sheetOf(ctx.params.sheetId);
    const row = rows.get(ctx.params.rowId);
    if (!row || row.record.sheetId !== sheet.record.id) throw new FakeHttpError(404, 'Not Found', '1006');
    ctx.body = presentRow(row);
  });

  const cellsOf = (raw: unknown): Cell[] => {
    if (!Array.isArray(raw))
      throw new FakeHttpError(
        400,
        'Required object attribute(s) are missing from your request: row.cells.',
        '1012',
      );
    return raw.map((cell: { columnId?: unknown; value?: unknown }) => {
      const column = smartsheetColumns.find((candidate) => candidate.id === Number(cell?.columnId));
      if (!column) throw new FakeHttpError(400, `Invalid column ID ${String(cell?.columnId)}.`, '1036');
      if (column.type === 'PICKLIST' && cell.value !== null && !column.options!.includes(String(cell.value)))
        throw new FakeHttpError(
          400,
          `The value for cell in column ${column.id} did not conform to the strict requirements.`,
          '1042',
        );
      return {
        columnId: column.id,
        value: cell.value ?? null,
        displayValue: cell.value == null ? undefined : String(cell.value),
      };
    });
  };
  const listBody = (ctx: Context): Record<string, unknown>[] => {
    const body = ctx.request.body;
    const list = Array.isArray(body) ? body : body && typeof body === 'object' ? [body] : undefined;
    if (!list) throw new FakeHttpError(400, 'Unable to parse request.', '1008');
    return list as Record<string, unknown>[];
  };
  const success = (result: unknown) => ({ message: 'SUCCESS', resultCode: 0, result });

  const addRow = (sheetId: number, cells: Cell[], ms: number): Row => {
    const id = nextId++;
    const record: SmartsheetRecord = {
      id,
      sheetId,
      rowNumber: rowsOf(sheetId).length + 1,
      createdAt: smartsheetTime(ms),
      modifiedAt: smartsheetTime(ms),
      cells: smartsheetColumns.map(
        (column) => cells.find((cell) => cell.columnId === column.id) ?? { columnId: column.id, value: null },
      ),
    };
    rows.put(String(id), record, wholeSecond(ms));
    return rows.get(String(id))!;
  };
  const stampRow = (row: Row, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = wholeSecond(ms);
    row.visibleFromMs = visibleFromMs;
    row.record.modifiedAt = smartsheetTime(ms);
  };

  router.post('/2.0/sheets/:sheetId/rows', (ctx) => {
    const sheet = sheetOf(ctx.params.sheetId);
    const added = listBody(ctx).map((item) => addRow(sheet.record.id, cellsOf(item.cells), now()));
    ctx.body = success(added.map((row) => presentRow(row)));
  });

  router.put('/2.0/sheets/:sheetId/rows', (ctx) => {
    const sheet = sheetOf(ctx.params.sheetId);
    const updated = listBody(ctx).map((item) => {
      const row = rows.get(String(item.id));
      if (!row || row.record.sheetId !== sheet.record.id)
        throw new FakeHttpError(404, `Row ${String(item.id)} not found.`, '1006');
      for (const cell of cellsOf(item.cells ?? [])) {
        const index = (row.record.cells as Cell[]).findIndex(
          (existing) => existing.columnId === cell.columnId,
        );
        (row.record.cells as Cell[])[index] = cell;
      }
      stampRow(row, now());
      return row;
    });
    ctx.body = success(updated.map((row) => presentRow(row)));
  });

  router.delete('/2.0/sheets/:sheetId/rows', (ctx) => {
    const sheet = sheetOf(ctx.params.sheetId);
    const ids = String(ctx.query.ids ?? '')
      .split(',')
      .filter(Boolean);
    if (!ids.length) throw new FakeHttpError(400, 'Required query parameter ids is missing.', '1011');
    for (const id of ids) {
      const row = rows.get(id);
      if (!row || row.record.sheetId !== sheet.record.id)
        throw new FakeHttpError(404, `Row ${id} not found.`, '1006');
    }
    for (const id of ids) rows.rows.delete(id);
    renumber(sheet.record.id);
    ctx.body = success(ids.map(Number));
  });

  const addSheet = (name: string, ms: number): Row => {
    const id = nextId++;
    const record: SmartsheetRecord = {
      id,
      name,
      accessLevel: 'OWNER',
      permalink: `https://app.smartsheet.com/sheets/${id.toString(36)}`,
      createdAt: smartsheetTime(ms),
      modifiedAt: smartsheetTime(ms),
    };
    sheets.put(String(id), record, wholeSecond(ms));
    return sheets.get(String(id))!;
  };
  const stampSheet = (row: Row, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = wholeSecond(ms);
    row.visibleFromMs = visibleFromMs;
    row.record.modifiedAt = smartsheetTime(ms);
  };

  router.post('/2.0/sheets', (ctx) => {
    const body = (ctx.request.body ?? {}) as { name?: unknown; columns?: { primary?: boolean }[] };
    if (typeof body.name !== 'string' || !body.name)
      throw new FakeHttpError(
        400,
        'Required object attribute(s) are missing from your request: sheet.name.',
        '1012',
      );
    if (!Array.isArray(body.columns) || body.columns.filter((column) => column?.primary).length !== 1)
      throw new FakeHttpError(400, 'A sheet needs its columns, exactly one of them primary.', '1061');
    ctx.body = success(addSheet(body.name, now()).record);
  });

  router.put('/2.0/sheets/:sheetId', (ctx) => {
    const sheet = sheetOf(ctx.params.sheetId);
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    for (const name of Object.keys(body))
      if (name !== 'name')
        throw new FakeHttpError(400, `Attribute ${name} is not allowed for this operation.`, '1032');
    if (typeof body.name === 'string') sheet.record.name = body.name;
    stampSheet(sheet, now());
    ctx.body = success(sheet.record);
  });

  router.delete('/2.0/sheets/:sheetId', (ctx) => {
    const sheet = sheetOf(ctx.params.sheetId);
    sheets.remove(String(sheet.record.id), now());
    ctx.body = { message: 'SUCCESS', resultCode: 0 };
  });

  await fake.start();

  // The sheet whose rows the spec reads, made long ago.
  sheets.put(
    String(SMARTSHEET_SHEET_ID),
    {
      id: SMARTSHEET_SHEET_ID,
      name: 'Project plan',
      accessLevel: 'OWNER',
      permalink: 'https://app.smartsheet.com/sheets/plan',
      createdAt: smartsheetTime(Date.UTC(2020, 0, 1)),
      modifiedAt: smartsheetTime(Date.UTC(2020, 0, 1)),
    },
    Date.UTC(2020, 0, 1),
  );

  const storeOf = (object: string) => {
    if (object === 'sheets') return sheets;
    if (object === 'rows') return rows;
    throw new Error(`no smartsheet object ${object}`);
  };

  return asConformanceFake(fake, {
    seed: (object, times) =>
      times.map((ms) => {
        const n = nextId;
        if (object === 'sheets') return String(addSheet(`Sheet ${n}`, ms).record.id);
        storeOf(object);
        return String(
          addRow(
            SMARTSHEET_SHEET_ID,
            [
              { columnId: 1001, value: `Task ${n}` },
              { columnId: 1002, value: `Note ${n}` },
              { columnId: 1003, value: 'Not started' },
              { columnId: 1004, value: '2026-12-31' },
            ],
            ms,
          ).record.id,
        );
      }),
    touch(object, id, modifiedMs, options) {
      const row = storeOf(object).get(id);
      if (!row) throw new Error(`no ${object} ${id}`);
      if (object === 'sheets') stampSheet(row, modifiedMs, options?.visibleFromMs);
      else stampRow(row, modifiedMs, options?.visibleFromMs);
    },
    remove(object, id, atMs) {
      if (object === 'sheets') sheets.remove(id, atMs);
      else {
        const row = rows.get(id);
        if (!row) return;
        rows.rows.delete(id);
        renumber(row.record.sheetId as number);
      }
    },
    stored: (object, id) => storeOf(object).get(id)?.record,
  });
}

import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { FakeHttpError, FakeProvider } from '../kit/fake-provider.js';
import { GraphqlFieldError, GraphqlSyntaxError, parseGraphql, project } from './graphql-lite.js';

/**
 * A local stand-in for monday.com's platform API (version 2025-04) as its public reference
 * describes it: one endpoint, `POST https://api.monday.com/v2`, the token as the whole
 * `Authorization` header, an `API-Version` header; `boards(ids:)` with `columns` and
 * `items_page(limit ≤ 500, query_params: {rules, operator})` answering `{cursor, items}`, then
 * `next_items_page(cursor:, limit:)` (a cursor cannot be sent with `query_params`); rules on
 * `__last_updated__` (`compare_attribute: "UPDATED_AT"`, `compare_value: ["EXACT", "YYYY-MM-DD"]`,
 * day by day); `items(ids:)`; `create_item`, `change_multiple_column_values` (cells as a JSON
 * string keyed by column id) and `delete_item`. Application errors answer 200 with
 * `{errors: [{message, extensions: {code, status_code}}]}` (the unified format of 2025-01), an
 * exhausted complexity budget included; a stale token answers 401 and a rate limit 429, both with
 * that body. Only what Ferry uses.
 */

export const MONDAY_BOARD_ID = '4820193756';

interface Column {
  id: string;
  title: string;
  type: string;
  description: string | null;
  labels?: string[];
  /** A dropdown's options, as its settings list them. */
  options?: { id: number; name: string }[];
}
const columns: Column[] = [
  { id: 'name', title: 'Name', type: 'name', description: null },
  {
    id: 'status',
    title: 'Status',
    type: 'status',
    description: null,
    labels: ['Working on it', 'Done', 'Stuck'],
  },
  { id: 'text', title: 'Notes', type: 'text', description: 'Free text' },
  {
    id: 'dropdown',
    title: 'Platforms',
    type: 'dropdown',
    description: null,
    options: [
      { id: 1, name: 'Web' },
      { id: 2, name: 'Mobile' },
    ],
  },
  { id: 'numbers', title: 'Budget', type: 'numbers', description: null },
  { id: 'date4', title: 'Due date', type: 'date', description: null },
  { id: 'last_updated', title: 'Last updated', type: 'last_updated', description: null },
];

interface Cell {
  text: string;
  value: string | null;
}
interface Item {
  id: string;
  name: string;
  created: number;
  updated: number;
  cells: Map<string, Cell>;
}

/** monday writes times to the second, with a `Z`. */
function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function appError(message: string, code: string, statusCode = 200): GraphqlFieldError {
  const error = new GraphqlFieldError(message, code);
  (error as GraphqlFieldError & { statusCode?: number }).statusCode = statusCode;
  return error;
}

export interface FakeMonday extends ConformanceFake {
  /** The next requests answer 200 with an exhausted complexity budget, as monday throttles queries. */
  throttleNext(count: number): void;
}

export async function startFakeMonday(): Promise<FakeMonday> {
  const items = new Map<string, Item>();
  const cursors = new Map<string, { ids: string[]; at: number }>();
  let nextId = 9_000_000_001;
  let throttled = 0;

  const errorBody = (message: string, code: string, statusCode: number) => ({
    errors: [{ message, extensions: { code, status_code: statusCode } }],
    account_id: 1,
  });
  const fake = new FakeProvider({
    credentialOf: (ctx: Context) => ctx.get('authorization').replace(/^Bearer\s+/i, '') || undefined,
    errorBody: (error) =>
      error.status === 401
        ? errorBody('Not Authenticated', 'UNAUTHENTICATED', 401)
        : error.status === 429
          ? errorBody('Rate limit exceeded for the account', 'RATE_LIMIT_EXCEEDED', 429)
          : errorBody(
              error.message,
              error.status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST',
              error.status,
            ),
  });

  const checkBoard = (id: unknown) => {
    if (String(id) !== MONDAY_BOARD_ID)
      throw appError(`Board ${String(id)} not found`, 'InvalidBoardIdException');
  };

  const view = (item: Item) => ({
    __typename: 'Item',
    id: item.id,
    name: item.name,
    state: 'active',
    created_at: iso(item.created),
    updated_at: iso(item.updated),
    group: { id: 'topics', title: 'Group Title' },
    column_values: columns
      .filter((column) => column.type !== 'name')
      .map((column) => {
        const cell =
          column.type === 'last_updated'
            ? { text: iso(item.updated).replace('T', ' ').replace('Z', ' UTC'), value: null }
            : (item.cells.get(column.id) ?? { text: '', value: null });
        return { id: column.id, type: column.type, text: cell.text, value: cell.value };
      }),
  });

  /** A cell as written (a string, or the column type's object) → the cell monday keeps. */
  const cellOf = (column: Column, written: unknown): Cell => {
    if (column.type === 'last_updated')
      throw appError(`Column ${column.id} cannot be changed`, 'ColumnValueException');
    if (written === null || written === '') return { text: '', value: null };
    if (column.type === 'status') {
      const label =
        typeof written === 'string' ? written : (written as { label?: unknown; index?: unknown }).label;
      const index = typeof written === 'object' ? (written as { index?: unknown }).index : undefined;
      const at = typeof index === 'number' ? index : column.labels!.indexOf(String(label));
      if (at < 0 || at >= column.labels!.length)
        throw appError(
          `This status label doesn't exist, possible statuses are: ${column.labels!.join(', ')}`,
          'ColumnValueException',
        );
      return { text: column.labels![at], value: JSON.stringify({ index: at }) };
    }
    if (column.type === 'dropdown') {
      const names = (written as { labels?: unknown }).labels;
      const chosen = (Array.isArray(names) ? names : String(written).split(',')).map((name) =>
        column.options!.find((o) => o.name === String(name).trim()),
      );
      if (chosen.some((o) => !o))
        throw appError('This dropdown label does not exist', 'ColumnValueException');
      return {
        text: chosen.map((o) => o!.name).join(', '),
        value: JSON.stringify({ ids: chosen.map((o) => o!.id) }),
      };
    }
    if (column.type === 'date') {
      const date = typeof written === 'string' ? written : (written as { date?: unknown }).date;
      if (typeof date !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(date))
        throw appError('Invalid date format, expected YYYY-MM-DD', 'ColumnValueException');
      return { text: date, value: JSON.stringify({ date }) };
    }
    if (column.type === 'numbers') {
      const number = Number(written);
      if (Number.isNaN(number)) throw appError('Invalid value for a numbers column', 'ColumnValueException');
      return { text: String(written), value: JSON.stringify(String(written)) };
    }
    if (typeof written !== 'string')
      throw appError(`Invalid value for column ${column.id}`, 'ColumnValueException');
    return { text: written, value: JSON.stringify(written) };
  };

  /** `column_values`: a JSON-encoded string keyed by column id. */
  const setCells = (item: Item, encoded: unknown) => {
    if (encoded === undefined || encoded === null) return;
    if (typeof encoded !== 'string')
      throw appError('column_values must be a JSON string', 'InvalidArgumentException');
    let values: Record<string, unknown>;
    try {
      values = JSON.parse(encoded) as Record<string, unknown>;
    } catch {
      throw appError('column_values is not valid JSON', 'InvalidArgumentException');
    }
    const cells = new Map(item.cells);
    let name = item.name;
    for (const [id, written] of Object.entries(values)) {
      const column = columns.find((c) => c.id === id);
      if (!column) throw appError(`This column ID doesn't exist for the board`, 'InvalidColumnIdException');
      if (column.type === 'name') name = String(written);
      else cells.set(id, cellOf(column, written));
    }
    item.cells = cells;
    item.name = name;
    item.updated = Date.now();
  };

  /** The `__last_updated__` rules, compared day by day; other rules are not served by the fake. */
  const ruleTest = (rule: Record<string, unknown>): ((item: Item) => boolean) => {
    if (rule.column_id !== '__last_updated__' || rule.compare_attribute !== 'UPDATED_AT')
      throw appError('The fake filters on __last_updated__ (UPDATED_AT) only', 'InvalidArgumentException');
    const value = rule.compare_value;
    if (!Array.isArray(value) || value[0] !== 'EXACT' || !/^\d{4}-\d{2}-\d{2}$/.test(String(value[1])))
      throw appError('compare_value must be ["EXACT", "YYYY-MM-DD"]', 'InvalidArgumentException');
    const day = String(value[1]);
    const dayOf = (item: Item) => iso(item.updated).slice(0, 10);
    const compare: Record<string, (d: string) => boolean> = {
      greater_than_or_equals: (d) => d >= day,
      greater_than: (d) => d > day,
      lower_than_or_equal: (d) => d <= day,
      lower_than: (d) => d < day,
    };
    const test = compare[String(rule.operator)];
    if (!test) throw appError(`Unsupported operator ${String(rule.operator)}`, 'InvalidArgumentException');
    return (item) => test(dayOf(item));
  };

  const page = (ids: string[], at: number, limit: number) => {
    const slice = ids.slice(at, at + limit);
    let cursor: string | null = null;
    if (at + limit < ids.length) {
      cursor = randomUUID();
      cursors.set(cursor, { ids, at: at + limit });
    }
    return { cursor, items: slice.map((id) => view(items.get(id)!)) };
  };

  const checkLimit = (limit: unknown) => {
    const value = limit === undefined || limit === null ? 25 : Number(limit);
    if (!Number.isInteger(value) || value < 1 || value > 500)
      throw appError('limit must be between 1 and 500', 'InvalidArgumentException');
    return value;
  };

  const board = {
    __typename: 'Board',
    id: MONDAY_BOARD_ID,
    name: 'Projects',
    columns: columns.map(({ labels, options, ...column }) => ({
      ...column,
      settings_str: JSON.stringify(
        labels
          ? { labels: Object.fromEntries(labels.map((label, index) => [String(index), label])) }
          : options
            ? { labels: options }
            : {},
      ),
    })),
    items_page: (args: Record<string, unknown>) => {
      const limit = checkLimit(args.limit);
      if (args.cursor !== undefined && args.cursor !== null) {
        if (args.query_params)
          throw appError("You can't use query_params together with a cursor", 'InvalidArgumentException');
        return nextPage(args.cursor, limit);
      }
      const query = (args.query_params ?? {}) as { rules?: Record<string, unknown>[]; operator?: string };
      if (query.operator !== undefined && query.operator !== 'and')
        throw appError('The fake joins rules with and only', 'InvalidArgumentException');
      const tests = (query.rules ?? []).map(ruleTest);
      const ids = [...items.values()]
        .filter((item) => tests.every((test) => test(item)))
        .map((item) => item.id);
      return page(ids, 0, limit);
    },
  };

  const nextPage = (cursor: unknown, limit: number) => {
    const state = cursors.get(String(cursor));
    if (!state) throw appError('CursorException: cursor has expired or is invalid', 'CursorException');
    cursors.delete(String(cursor));
    return page(state.ids, state.at, limit);
  };

  const itemOf = (id: unknown) => {
    const item = items.get(String(id));
    if (!item) throw appError(`Item ${String(id)} not found`, 'InvalidItemIdException');
    return item;
  };

  const queryRoot = {
    __typename: 'Query',
    boards: (args: Record<string, unknown>) => {
      const ids = (Array.isArray(args.ids) ? args.ids : [args.ids]).map(String);
      return ids.includes(MONDAY_BOARD_ID) ? [board] : [];
    },
    next_items_page: (args: Record<string, unknown>) => nextPage(args.cursor, checkLimit(args.limit)),
    items: (args: Record<string, unknown>) =>
      (Array.isArray(args.ids) ? args.ids : [args.ids])
        .map((id) => items.get(String(id)))
        .filter((item): item is Item => item !== undefined)
        .map(view),
  };

  const make = (name: string, ms: number): Item => {
    const item: Item = { id: String(nextId++), name, created: ms, updated: ms, cells: new Map() };
    items.set(item.id, item);
    return item;
  };

  const mutationRoot = {
    __typename: 'Mutation',
    create_item: (args: Record<string, unknown>) => {
      checkBoard(args.board_id);
      if (typeof args.item_name !== 'string' || !args.item_name)
        throw appError('item_name is required', 'InvalidArgumentException');
      const item = make(args.item_name, Date.now());
      try {
        setCells(item, args.column_values);
      } catch (error) {
        items.delete(item.id);
        throw error;
      }
      return view(item);
    },
    change_multiple_column_values: (args: Record<string, unknown>) => {
      checkBoard(args.board_id);
      const item = itemOf(args.item_id);
      setCells(item, args.column_values);
      return view(item);
    },
    delete_item: (args: Record<string, unknown>) => {
      const item = itemOf(args.item_id);
      items.delete(item.id);
      return view(item);
    },
  };

  fake.router.post('/v2', (ctx) => {
    if (throttled > 0) {
      throttled--;
      ctx.set('retry-after', '1');
      ctx.body = {
        errors: [
          {
            message:
              'Complexity budget exhausted, query cost 30001 budget remaining 1 out of 1000000 reset in 1 seconds',
            extensions: { code: 'COMPLEXITY_BUDGET_EXHAUSTED', status_code: 429, retry_in_seconds: 1 },
          },
        ],
        account_id: 1,
      };
      return;
    }
    const body = (ctx.request.body ?? {}) as { query?: unknown; variables?: unknown };
    if (typeof body.query !== 'string') throw new FakeHttpError(400, 'No query string was present');
    const variables = (body.variables ?? {}) as Record<string, unknown>;
    try {
      const document = parseGraphql(body.query);
      const root = document.operation === 'mutation' ? mutationRoot : queryRoot;
      ctx.body = { data: project(root, document.selections, variables), account_id: 1 };
    } catch (error) {
      if (!(error instanceof GraphqlFieldError || error instanceof GraphqlSyntaxError)) throw error;
      const code =
        error instanceof GraphqlFieldError ? (error.code ?? 'BAD_REQUEST') : 'GRAPHQL_PARSE_FAILED';
      const statusCode = (error as { statusCode?: number }).statusCode ?? 400;
      ctx.body = { data: null, ...errorBody(error.message, code, statusCode) };
    }
  });

  await fake.start();

  const stored = (id: string) => {
    const item = items.get(id);
    if (!item) return undefined;
    const record = view(item);
    return { ...record, ...Object.fromEntries(record.column_values.map((cell) => [cell.id, cell.text])) };
  };

  return {
    url: fake.url,
    tokenUrl: fake.tokenUrl,
    get credential() {
      return fake.credential;
    },
    rotateCredential: () => fake.rotateCredential(),
    refuseRefresh: () => fake.refuseRefresh(),
    requests: fake.requests,
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    throttleNext(count) {
      throttled += count;
    },
    seed(_object, modifiedTimes) {
      return modifiedTimes.map((ms, index) => make(`Item ${index + 1}`, ms).id);
    },
    touch(_object, id, modifiedMs) {
      itemOf(id).updated = modifiedMs;
    },
    stored: (_object, id) => stored(id),
    stop: () => fake.stop(),
  };
}

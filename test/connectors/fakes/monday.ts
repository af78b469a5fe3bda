import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { FakeHttpError, FakeProvider } from '../kit/fake-provider.js';
import { GraphqlFieldError, GraphqlSyntaxError, parseGraphql, project } from './graphql-lite.js';
import { VersionedStore } from './versions.js';

/**
 * A local stand-in for monday.com's platform API (version 2025-04) as its public reference
 * (developer.monday.com/api-reference) and the published types (github.com/mondaycom/
 * monday-graphql-api `packages/api-types`) describe it:
 *
 * - One endpoint, `POST https://api.monday.com/v2`, the token as the whole `Authorization` header,
 *   an `API-Version` header.
 * - `boards(ids:)` with `columns` and `items_page(limit 1–500, default 25; query_params: {rules,
 *   operator, order_by, ids})` answering `{cursor, items}`, then `next_items_page(cursor:, limit:)`;
 *   a cursor cannot be sent with `query_params`, and expires 60 minutes after it was handed out.
 *   `items_page` lists active items only.
 * - Rules on `__last_updated__` (`compare_attribute: "UPDATED_AT"`, `compare_value:
 *   ["EXACT", "YYYY-MM-DD"]`, day by day in UTC; `between` takes two dates); items carry
 *   `updated_at` to the second.
 * - Deleting an item (`delete_item`) sends it to the trash: gone from `items_page`, still answered
 *   by `items(ids:)` with `state: "deleted"` unless `exclude_nonactive: true`; `archive_item`
 *   likewise with `state: "archived"`. Both are logged in the board's `activity_logs(from, to,
 *   limit, page)` (newest first, `delete_pulse`, `archive_pulse`, `create_pulse`,
 *   `update_column_value`, `update_name`; `data` a JSON string; `created_at` in units of 100 ns).
 * - `create_item`, `change_multiple_column_values` (cells as a JSON string keyed by column id);
 *   typed column values (`... on StatusValue { label }`…).
 * - Application errors answer 200 with `{errors: [{message, extensions: {code, status_code}}]}`
 *   (2025-01 and later, no `account_id`), an exhausted complexity budget included (with
 *   `retry_in_seconds` and `Retry-After`); a stale token answers 401 and the minute rate limit
 *   429, both with that body and `Retry-After`.
 */

export const MONDAY_BOARD_ID = '4820193756';

/** Cursors "expire after 60 minutes". */
const CURSOR_TTL_MS = 60 * 60_000;
const MAX_LIMIT = 500;
const DEFAULT_LIMIT = 25;
/** Deleted items stay in the trash this long. */
const TRASH_MS = 30 * 86_400_000;

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

/** The GraphQL type of each column type's values. */
const valueTypes: Record<string, string> = {
  status: 'StatusValue',
  text: 'TextValue',
  dropdown: 'DropdownValue',
  numbers: 'NumbersValue',
  date: 'DateValue',
  last_updated: 'LastUpdatedValue',
};

interface Cell {
  text: string;
  value: string | null;
}
interface Item {
  id: string;
  name: string;
  created: number;
  updated: number;
  state: 'active' | 'archived' | 'deleted';
  stateMs?: number;
  cells: Map<string, Cell>;
}

/** monday writes times to the second, with a `Z`. */
function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** An application error: monday answers these 200, `status_code` 200 inside (JsonParseException 400). */
function appError(message: string, code: string, statusCode = 200): GraphqlFieldError {
  const error = new GraphqlFieldError(message, code);
  (error as GraphqlFieldError & { statusCode?: number }).statusCode = statusCode;
  return error;
}

export interface FakeMonday extends ConformanceFake {
  /** The next requests answer 200 with an exhausted complexity budget, as monday throttles queries. */
  throttleNext(count: number): void;
}

interface ActivityLog {
  id: string;
  atMs: number;
  event: string;
  itemId: string;
  data: Record<string, unknown>;
}

export async function startFakeMonday(): Promise<FakeMonday> {
  const items = new VersionedStore<Item>((item) => ({ ...item, cells: new Map(item.cells) }));
  const cursors = new Map<string, { ids: string[]; at: number; issuedMs: number }>();
  const logs: ActivityLog[] = [];
  let nextId = 9_000_000_001;
  let throttled = 0;

  const errorBody = (
    message: string,
    code: string,
    statusCode: number,
    extra: Record<string, unknown> = {},
  ) => ({
    errors: [{ message, extensions: { code, status_code: statusCode, ...extra } }],
  });
  const fake = new FakeProvider({
    credentialOf: (ctx: Context) => ctx.get('authorization').replace(/^Bearer\s+/i, '') || undefined,
    errorBody: (error) =>
      error.status === 401
        ? errorBody('Not Authenticated', 'UNAUTHENTICATED', 401)
        : error.status === 429
          ? errorBody('Rate Limit Exceeded', 'RATE_LIMIT_EXCEEDED', 429, { retry_in_seconds: 30 })
          : errorBody(
              error.message,
              error.status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST',
              error.status,
            ),
    // "Errors will include the Retry-After header"; a test's own value replaces this one.
    rateLimitHeaders: () => ({ 'retry-after': '30' }),
  });
  const now = () => fake.now();

  const log = (event: string, item: Item, atMs: number, data: Record<string, unknown> = {}) => {
    logs.push({
      id: randomUUID(),
      atMs,
      event,
      itemId: item.id,
      data: {
        board_id: Number(MONDAY_BOARD_ID),
        group_id: 'topics',
        group_name: 'Group Title',
        pulse_id: Number(item.id),
        pulse_name: item.name,
        ...data,
      },
    });
  };

  const checkBoard = (id: unknown) => {
    if (String(id) !== MONDAY_BOARD_ID)
      throw appError(`Board ${String(id)} not found`, 'InvalidBoardIdException');
  };

  const cellView = (item: Item, column: Column) => {
    if (column.type === 'last_updated') {
      return {
        __typename: 'LastUpdatedValue',
        id: column.id,
        type: column.type,
        column: { __typename: 'Column', id: column.id, title: column.title },
        text: iso(item.updated).replace('T', ' ').replace('Z', ' UTC'),
        value: JSON.stringify({ updated_at: iso(item.updated), updater_id: 1 }),
        updated_at: iso(item.updated),
        updater_id: '1',
      };
    }
    const cell = item.cells.get(column.id) ?? { text: '', value: null };
    const parsed = cell.value ? (JSON.parse(cell.value) as Record<string, unknown>) : null;
    const typed: Record<string, Record<string, unknown>> = {
      status: {
        label: cell.text || null,
        index: parsed?.index ?? null,
        is_done: cell.text === 'Done',
      },
      text: {},
      dropdown: {
        values: ((parsed?.ids as number[] | undefined) ?? []).map((id) => ({
          __typename: 'DropdownValueOption',
          id,
          label: column.options!.find((o) => o.id === id)!.name,
        })),
      },
      numbers: { number: cell.text === '' ? null : Number(cell.text), symbol: '', direction: 'left' },
      date: { date: (parsed?.date as string | undefined) ?? null, time: null },
    };
    return {
      __typename: valueTypes[column.type],
      id: column.id,
      type: column.type,
      column: { __typename: 'Column', id: column.id, title: column.title },
      text: cell.text,
      value: cell.value,
      ...typed[column.type],
    };
  };

  const view = (item: Item) => ({
    __typename: 'Item',
    id: item.id,
    name: item.name,
    state: item.state,
    created_at: iso(item.created),
    updated_at: iso(item.updated),
    creator_id: '1',
    email: `pulse-${item.id}@acme.monday.com`,
    url: `https://acme.monday.com/boards/${MONDAY_BOARD_ID}/pulses/${item.id}`,
    relative_link: `/boards/${MONDAY_BOARD_ID}/pulses/${item.id}`,
    board: { __typename: 'Board', id: MONDAY_BOARD_ID, name: 'Projects' },
    group: { __typename: 'Group', id: 'topics', title: 'Group Title' },
    parent_item: null,
    subitems: [],
    column_values: (args: Record<string, unknown> = {}) => {
      const ids = args.ids as string[] | undefined;
      const types = args.types as string[] | undefined;
      return columns
        .filter(
          (column) =>
            column.type !== 'name' &&
            (!ids || ids.includes(column.id)) &&
            (!types || types.includes(column.type)),
        )
        .map((column) => cellView(item, column));
    },
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

  /** `column_values`: a JSON-encoded string keyed by column id → the cells and name it sets. */
  const parseCells = (item: Item, encoded: unknown) => {
    const cells = new Map(item.cells);
    let name = item.name;
    const changed: string[] = [];
    if (encoded === undefined || encoded === null) return { cells, name, changed };
    if (typeof encoded !== 'string')
      throw appError('column_values must be a JSON string', 'InvalidArgumentException');
    let values: Record<string, unknown>;
    try {
      values = JSON.parse(encoded) as Record<string, unknown>;
    } catch {
      throw appError('Syntax error in JSON input', 'JsonParseException', 400);
    }
    for (const [id, written] of Object.entries(values)) {
      const column = columns.find((c) => c.id === id);
      if (!column) throw appError(`This column ID doesn't exist for the board`, 'InvalidColumnIdException');
      if (column.type === 'name') name = String(written);
      else cells.set(id, cellOf(column, written));
      changed.push(id);
    }
    return { cells, name, changed };
  };

  /** One rule on `__last_updated__`, compared day by day (UTC); other rules are not served by the fake. */
  const ruleTest = (rule: Record<string, unknown>): ((item: Item) => boolean) => {
    if (rule.column_id !== '__last_updated__' || rule.compare_attribute !== 'UPDATED_AT')
      throw appError('The fake filters on __last_updated__ (UPDATED_AT) only', 'InvalidArgumentException');
    const value = rule.compare_value;
    const dayOf = (item: Item) => iso(item.updated).slice(0, 10);
    const isDay = (text: unknown) => /^\d{4}-\d{2}-\d{2}$/.test(String(text));
    if (rule.operator === 'between') {
      if (!Array.isArray(value) || value.length !== 2 || !value.every(isDay))
        throw appError('compare_value must be ["YYYY-MM-DD", "YYYY-MM-DD"]', 'InvalidArgumentException');
      return (item) => dayOf(item) >= String(value[0]) && dayOf(item) <= String(value[1]);
    }
    if (!Array.isArray(value) || value[0] !== 'EXACT' || !isDay(value[1]))
      throw appError('compare_value must be ["EXACT", "YYYY-MM-DD"]', 'InvalidArgumentException');
    const day = String(value[1]);
    const compare: Record<string, (d: string) => boolean> = {
      greater_than_or_equals: (d) => d >= day,
      greater_than: (d) => d > day,
      lower_than_or_equal: (d) => d <= day,
      lower_than: (d) => d < day,
      any_of: (d) => d === day,
      not_any_of: (d) => d !== day,
    };
    const test = compare[String(rule.operator ?? 'any_of')];
    if (!test) throw appError(`Unsupported operator ${String(rule.operator)}`, 'InvalidArgumentException');
    return (item) => test(dayOf(item));
  };

  const page = (ids: string[], at: number, limit: number, issuedMs: number) => {
    // A cursor keeps the list it was made from; items deleted since are passed over.
    const rest = ids.slice(at).filter((id) => items.get(id)?.state === 'active');
    const slice = rest.slice(0, limit);
    let cursor: string | null = null;
    if (rest.length > limit) {
      cursor = Buffer.from(`${randomUUID()}|${MONDAY_BOARD_ID}`).toString('base64url');
      cursors.set(cursor, { ids: rest, at: limit, issuedMs });
    }
    return {
      __typename: 'ItemsResponse',
      cursor,
      items: slice.map((id) => view(items.get(id)!)),
    };
  };

  const checkLimit = (limit: unknown) => {
    const value = limit === undefined || limit === null ? DEFAULT_LIMIT : Number(limit);
    if (!Number.isInteger(value) || value < 1 || value > MAX_LIMIT)
      throw appError(`limit must be between 1 and ${MAX_LIMIT}`, 'InvalidArgumentException');
    return value;
  };

  let listingCtx: Context | undefined;
  const logListing = (limit: number) => {
    if (listingCtx)
      fake.logListing(listingCtx, { object: MONDAY_BOARD_ID, pageSize: limit, maxPageSize: MAX_LIMIT });
  };

  const nextPage = (cursor: unknown, limit: number) => {
    const state = cursors.get(String(cursor));
    if (!state || now() - state.issuedMs > CURSOR_TTL_MS)
      throw appError('CursorException: cursor has expired or is invalid', 'CursorException');
    cursors.delete(String(cursor));
    return page(state.ids, state.at, limit, state.issuedMs);
  };

  const activityLogs = (args: Record<string, unknown>) => {
    const from = args.from === undefined || args.from === null ? -Infinity : Date.parse(String(args.from));
    const to = args.to === undefined || args.to === null ? Infinity : Date.parse(String(args.to));
    if (Number.isNaN(from) || Number.isNaN(to))
      throw appError('from and to must be ISO 8601 date-times', 'InvalidArgumentException');
    const limit = args.limit === undefined || args.limit === null ? 25 : Number(args.limit);
    const pageNumber = args.page === undefined || args.page === null ? 1 : Number(args.page);
    const itemIds = (args.item_ids as unknown[] | undefined)?.map(String);
    const found = logs
      .filter(
        (entry) =>
          entry.atMs >= from &&
          entry.atMs <= to &&
          entry.atMs <= now() &&
          (!itemIds || itemIds.includes(entry.itemId)),
      )
      .sort((a, b) => b.atMs - a.atMs)
      // "Limit: up to 10,000 logs"
      .slice(0, 10_000);
    return found.slice((pageNumber - 1) * limit, pageNumber * limit).map((entry) => ({
      __typename: 'ActivityLogType',
      id: entry.id,
      event: entry.event,
      entity: 'pulse',
      account_id: '1',
      user_id: '1',
      created_at: String(BigInt(entry.atMs) * 10_000n),
      data: JSON.stringify(entry.data),
    }));
  };

  const board = {
    __typename: 'Board',
    id: MONDAY_BOARD_ID,
    name: 'Projects',
    state: 'active',
    board_kind: 'public',
    description: null,
    items_count: () => items.live().filter((row) => row.current.record.state === 'active').length,
    columns: columns.map(({ labels, options, ...column }) => ({
      __typename: 'Column',
      ...column,
      archived: false,
      width: null,
      settings_str: JSON.stringify(
        labels
          ? { labels: Object.fromEntries(labels.map((label, index) => [String(index), label])) }
          : options
            ? { labels: options }
            : {},
      ),
    })),
    activity_logs: activityLogs,
    items_page: (args: Record<string, unknown>) => {
      const limit = checkLimit(args.limit);
      logListing(limit);
      if (args.cursor !== undefined && args.cursor !== null) {
        if (args.query_params)
          throw appError("You can't use query_params together with a cursor", 'InvalidArgumentException');
        return nextPage(args.cursor, limit);
      }
      const query = (args.query_params ?? {}) as {
        rules?: Record<string, unknown>[];
        operator?: string;
        order_by?: { column_id?: string; direction?: string }[];
        ids?: unknown[];
      };
      const tests = (query.rules ?? []).map(ruleTest);
      const join = query.operator ?? 'and';
      if (join !== 'and' && join !== 'or')
        throw appError(`Unsupported operator ${join}`, 'InvalidArgumentException');
      const ids = query.ids?.map(String);
      if (ids && ids.length > 100) throw appError('ids: at most 100', 'InvalidArgumentException');
      const listed = items
        .listed(now())
        .map((version) => version.record)
        .filter(
          (item) =>
            item.state === 'active' &&
            (!ids || ids.includes(item.id)) &&
            (!tests.length || (join === 'and' ? tests.every((t) => t(item)) : tests.some((t) => t(item)))),
        );
      const order = query.order_by?.[0];
      if (order) {
        const key =
          order.column_id === '__last_updated__'
            ? (item: Item) => item.updated
            : order.column_id === '__creation_log__'
              ? (item: Item) => item.created
              : undefined;
        if (!key)
          throw appError(
            'The fake orders by __last_updated__ or __creation_log__',
            'InvalidArgumentException',
          );
        const sign = order.direction === 'desc' ? -1 : 1;
        listed.sort((a, b) => sign * (key(a) - key(b)));
      }
      return page(
        listed.map((item) => item.id),
        0,
        limit,
        now(),
      );
    },
  };

  const itemOf = (id: unknown) => {
    const item = items.get(String(id));
    if (!item || item.state !== 'active')
      throw appError(`Item ${String(id)} not found`, 'InvalidItemIdException');
    return item;
  };

  const queryRoot = {
    __typename: 'Query',
    boards: (args: Record<string, unknown>) => {
      const ids = (Array.isArray(args.ids) ? args.ids : [args.ids]).map(String);
      return ids.includes(MONDAY_BOARD_ID) ? [board] : [];
    },
    next_items_page: (args: Record<string, unknown>) => {
      const limit = checkLimit(args.limit);
      logListing(limit);
      return nextPage(args.cursor, limit);
    },
    items: (args: Record<string, unknown>) => {
      const ids = (Array.isArray(args.ids) ? args.ids : [args.ids]).map(String);
      if (ids.length > 100) throw appError('ids: at most 100', 'InvalidArgumentException');
      return ids
        .map((id) => items.get(id))
        .filter(
          (item): item is Item =>
            item !== undefined &&
            !(item.state === 'deleted' && now() >= (item.stateMs ?? 0) + TRASH_MS) &&
            (args.exclude_nonactive !== true || item.state === 'active'),
        )
        .map(view);
    },
    complexity: {
      __typename: 'Complexity',
      before: 5_000_000,
      after: 4_999_000,
      query: 1_000,
      reset_in_x_seconds: 60,
    },
  };

  const make = (name: string, ms: number): Item => {
    const item: Item = {
      id: String(nextId++),
      name,
      created: ms,
      updated: ms,
      state: 'active',
      cells: new Map(),
    };
    items.add(item.id, item, ms);
    log('create_pulse', item, ms);
    return item;
  };

  const setState = (item: Item, state: 'archived' | 'deleted', atMs: number) => {
    items.change(
      item.id,
      items.row(item.id)!.current.modifiedMs,
      (stored) => {
        stored.state = state;
        stored.stateMs = atMs;
      },
      { now: now() },
    );
    log(state === 'deleted' ? 'delete_pulse' : 'archive_pulse', item, atMs);
  };

  const mutationRoot = {
    __typename: 'Mutation',
    create_item: (args: Record<string, unknown>) => {
      checkBoard(args.board_id);
      if (typeof args.item_name !== 'string' || !args.item_name)
        throw appError('item_name is required', 'InvalidArgumentException');
      const probe: Item = {
        id: '',
        name: args.item_name,
        created: 0,
        updated: 0,
        state: 'active',
        cells: new Map(),
      };
      const { cells } = parseCells(probe, args.column_values);
      const item = make(args.item_name, now());
      item.cells = cells;
      return view(item);
    },
    change_multiple_column_values: (args: Record<string, unknown>) => {
      checkBoard(args.board_id);
      const item = itemOf(args.item_id);
      const { cells, name, changed } = parseCells(item, args.column_values);
      const at = now();
      items.change(
        item.id,
        at,
        (stored) => {
          stored.cells = cells;
          stored.name = name;
          stored.updated = at;
        },
        { now: at },
      );
      for (const id of changed)
        log(id === 'name' ? 'update_name' : 'update_column_value', item, at, { column_id: id });
      return view(item);
    },
    delete_item: (args: Record<string, unknown>) => {
      const item = itemOf(args.item_id);
      setState(item, 'deleted', now());
      return view(item);
    },
    archive_item: (args: Record<string, unknown>) => {
      const item = itemOf(args.item_id);
      setState(item, 'archived', now());
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
            message: 'Complexity budget exhausted',
            extensions: {
              code: 'COMPLEXITY_BUDGET_EXHAUSTED',
              complexity: 30001,
              complexity_budget_left: 1,
              complexity_budget_limit: 5_000_000,
              retry_in_seconds: 1,
              status_code: 429,
            },
          },
        ],
      };
      return;
    }
    const body = (ctx.request.body ?? {}) as { query?: unknown; variables?: unknown };
    if (typeof body.query !== 'string') throw new FakeHttpError(400, 'No query string was present');
    const variables = (body.variables ?? {}) as Record<string, unknown>;
    try {
      const document = parseGraphql(body.query);
      const root = document.operation === 'mutation' ? mutationRoot : queryRoot;
      listingCtx = ctx;
      ctx.body = { data: project(root, document.selections, variables) };
    } catch (error) {
      if (!(error instanceof GraphqlFieldError || error instanceof GraphqlSyntaxError)) throw error;
      const code =
        error instanceof GraphqlFieldError ? (error.code ?? 'BAD_REQUEST') : 'GRAPHQL_PARSE_FAILED';
      const statusCode = (error as { statusCode?: number }).statusCode ?? 400;
      ctx.body = { data: null, ...errorBody(error.message, code, statusCode) };
    } finally {
      listingCtx = undefined;
    }
  });

  await fake.start();

  const stored = (id: string) => {
    const item = items.get(id);
    if (!item || item.state !== 'active') return undefined;
    const record = view(item);
    const cells = record.column_values();
    return {
      ...record,
      column_values: cells,
      ...Object.fromEntries(cells.map((cell) => [cell.id, cell.text])),
    };
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
    setClock: (clock) => fake.setClock(clock),
    throttleNext(count) {
      throttled += count;
    },
    seed(_object, modifiedTimes) {
      return modifiedTimes.map((ms, index) => make(`Item ${index + 1}`, ms).id);
    },
    touch(_object, id, modifiedMs, options) {
      const item = itemOf(id);
      items.change(
        id,
        modifiedMs,
        (record) => {
          record.updated = modifiedMs;
        },
        { now: now(), visibleFromMs: options?.visibleFromMs },
      );
      log('update_column_value', item, modifiedMs, { column_id: 'text' });
    },
    remove(_object, id, atMs) {
      setState(itemOf(id), 'deleted', atMs);
    },
    stored: (_object, id) => stored(id),
    stop: () => fake.stop(),
  };
}

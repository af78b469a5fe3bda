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
 * A local stand-in for Wrike's API v4 (https://developers.wrike.com/overview,
 * https://developers.wrike.com/api/v4/tasks/, …/folders-projects/, …/contacts/, …/custom-fields/,
 * …/errors/), under the catalog's base `https://www.wrike.com/api` (methods at `/v4/...`):
 *
 * - OAuth 2.0 bearer tokens. Every answer is `{kind, data: [...]}`; errors `{errorDescription,
 *   error}` (`not_authorized` 401, `invalid_parameter` 400, `resource_not_found` 404,
 *   `rate_limit_exceeded` 429 with `Retry-After`).
 * - `GET /v4/tasks` and `GET /v4/folders`: `updatedDate={"start":"…","end":"…"}` (either end may be
 *   left out; both ends inclusive; `yyyy-MM-dd'T'HH:mm:ss'Z'`, to the second), `pageSize` (at most
 *   1000; without it everything at once), `nextPageToken` (from the previous answer, with the same
 *   query; keeps its place in the order, so a change during the walk does not shift it),
 *   `sortField` (`CreatedDate`, `UpdatedDate`, `Title`) and `sortOrder` (`Asc`/`Desc`), `fields`
 *   (a JSON list of optional fields: a task's `description` and `briefDescription` only when
 *   named). Tasks also take `status`; folders list projects and folders alike.
 * - A deleted task or folder goes to the Recycle Bin: still listed, `scope` `RbTask`/`RbFolder`
 *   instead of `WsTask`/`WsFolder`, `updatedDate` at the deletion; `GET /v4/tasks/{id}` still
 *   answers it.
 * - Writes as form or JSON parameters: `POST /v4/folders/{folderId}/tasks` (`title` required),
 *   `POST /v4/folders/{folderId}/folders`, `PUT /v4/tasks/{id}`, `PUT /v4/folders/{id}` (only the
 *   parameters sent change; `customFields` a list of `{id, value}` merged by id), `DELETE` (to the
 *   Recycle Bin), each answering `{kind, data: [record]}`.
 * - `GET /v4/contacts`: every user and group at once (no paging, no time filter), deleted users
 *   with `deleted: true` unless `deleted=false`. `GET /v4/customfields`: `{id, title, type,
 *   settings: {values}}`; records carry `customFields: [{id, value}]`.
 * - Times to the second; ids opaque (`IEAAAAAAKQAAAAAB`); 400 requests a minute per user.
 */

type WrikeRecord = Record<string, unknown> & { id: string; scope?: string };
type Row = StoredRecord<WrikeRecord>;
const kinds = ['tasks', 'folders', 'contacts'] as const;
type Kind = (typeof kinds)[number];

const PAGE_MAX = 1000;
const ACCOUNT = 'IEAAAAAA';
const ROOT_FOLDER = 'IEAAAAAAI7777777';
const PER_MINUTE = 400;
const customFields = [
  { id: 'IEAAAAAAJUAAAAAB', title: 'Cost center', type: 'Text', settings: { inheritanceType: 'All' } },
  {
    id: 'IEAAAAAAJUAAAAAC',
    title: 'Phase',
    type: 'DropDown',
    settings: { values: ['Design', 'Build'], allowOtherValues: false, inheritanceType: 'All' },
  },
];
const optionalTaskFields = ['description', 'briefDescription'];

const wholeSecond = (ms: number) => Math.floor(ms / 1000) * 1000;
const wrikeTime = (ms: number) => new Date(wholeSecond(ms)).toISOString().replace('.000Z', 'Z');

export async function startFakeWrike(): Promise<ConformanceFake> {
  const stores = Object.fromEntries(kinds.map((kind) => [kind, new RecordStore<WrikeRecord>()])) as Record<
    Kind,
    RecordStore<WrikeRecord>
  >;
  let serial = 1;
  const newId = (letter: string) => `${ACCOUNT}${letter}${String(serial++).padStart(7, 'A')}`;
  const budget = new RequestWindow(PER_MINUTE, 60_000);

  const fake = new FakeProvider({
    prefix: '/api',
    credentialOf: bearerCredential,
    errorBody: (error) => ({
      errorDescription: error.message,
      error:
        error.status === 401
          ? 'not_authorized'
          : error.status === 429
            ? 'rate_limit_exceeded'
            : error.status === 404
              ? 'resource_not_found'
              : error.status >= 500
                ? 'server_error'
                : (error.code ?? 'invalid_parameter'),
    }),
    rateLimitHeaders: () => ({ 'Retry-After': '1' }),
  });
  const now = () => fake.now();
  const router = fake.router;

  router.use(
    budget.refusing(
      (headers) =>
        new FakeHttpError(429, 'Rate limit exceeded, please try again later', 'rate_limit_exceeded', headers),
    ),
  );

  const rowOf = (kind: Kind, id: string): Row => {
    const row = stores[kind].rows.get(id);
    if (!row || (row.deleted && kind === 'contacts'))
      throw new FakeHttpError(404, `Resource '${id}' not found`);
    return row;
  };

  /** A JSON parameter (`updatedDate`, `fields`), refused as Wrike does when it is not JSON. */
  const jsonParameter = (ctx: Context, name: string): unknown => {
    const text = ctx.query[name];
    if (text === undefined) return undefined;
    try {
      return JSON.parse(String(text));
    } catch {
      throw new FakeHttpError(400, `Parameter '${name}' value is invalid`, 'invalid_parameter');
    }
  };

  const timeOf = (text: unknown, name: string): number => {
    const value = Date.parse(String(text));
    if (typeof text !== 'string' || Number.isNaN(value))
      throw new FakeHttpError(400, `Parameter '${name}' value is invalid`, 'invalid_parameter');
    return value;
  };

  const present = (kind: Kind, row: Row, fields: string[]) => {
    if (kind !== 'tasks') return row.record;
    return Object.fromEntries(
      Object.entries(row.record).filter(
        ([name]) => !optionalTaskFields.includes(name) || fields.includes(name),
      ),
    );
  };

  const list = (ctx: Context, kind: 'tasks' | 'folders') => {
    const range = jsonParameter(ctx, 'updatedDate') as { start?: unknown; end?: unknown } | undefined;
    const start = range?.start === undefined ? undefined : timeOf(range.start, 'updatedDate');
    const end = range?.end === undefined ? undefined : timeOf(range.end, 'updatedDate');
    const fields = (jsonParameter(ctx, 'fields') ?? []) as string[];
    if (!Array.isArray(fields)) throw new FakeHttpError(400, "Parameter 'fields' value is invalid");
    const sizeText = ctx.query.pageSize;
    const pageSize = sizeText === undefined ? undefined : Number(sizeText);
    if (pageSize !== undefined && (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > PAGE_MAX))
      throw new FakeHttpError(400, `Parameter 'pageSize' value is invalid (1..${PAGE_MAX})`);
    fake.logListing(ctx, { object: kind, pageSize: pageSize ?? PAGE_MAX, maxPageSize: PAGE_MAX });
    const sortField = String(ctx.query.sortField ?? 'CreatedDate');
    if (!['CreatedDate', 'UpdatedDate', 'Title'].includes(sortField))
      throw new FakeHttpError(400, "Parameter 'sortField' value is invalid");
    const descending = ctx.query.sortOrder === 'Desc';
    type Key = [number | string, string];
    const keyOf = (row: Row): Key => [
      sortField === 'UpdatedDate'
        ? row.modifiedMs
        : sortField === 'Title'
          ? String(row.record.title)
          : Date.parse(String(row.record.createdDate)),
      row.record.id,
    ];
    const compare = (a: Key, b: Key) =>
      ((a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0) || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0)) *
      (descending ? -1 : 1);
    const status = ctx.query.status === undefined ? undefined : String(ctx.query.status);
    let after: Key | undefined;
    if (ctx.query.nextPageToken !== undefined) {
      try {
        after = JSON.parse(Buffer.from(String(ctx.query.nextPageToken), 'base64url').toString('utf8')) as Key;
      } catch {
        throw new FakeHttpError(400, "Parameter 'nextPageToken' value is invalid");
      }
    }
    const found = [...stores[kind].rows.values()]
      .filter((row) => (row.visibleFromMs ?? row.modifiedMs) <= now())
      .filter(
        (row) =>
          (start === undefined || row.modifiedMs >= start) && (end === undefined || row.modifiedMs <= end),
      )
      .filter((row) => status === undefined || row.record.status === status)
      .map((row) => ({ row, key: keyOf(row) }))
      .sort((a, b) => compare(a.key, b.key))
      .filter(({ key }) => !after || compare(key, after) > 0);
    const page = pageSize === undefined ? found : found.slice(0, pageSize);
    ctx.body = {
      kind,
      ...(pageSize !== undefined &&
        found.length > pageSize && {
          nextPageToken: Buffer.from(JSON.stringify(page.at(-1)!.key)).toString('base64url'),
        }),
      responseSize: found.length,
      data: page.map(({ row }) => present(kind, row, fields)),
    };
  };

  router.get('/v4/tasks', (ctx) => list(ctx, 'tasks'));
  router.get('/v4/folders', (ctx) => list(ctx, 'folders'));

  router.get('/v4/contacts', (ctx) => {
    fake.logListing(ctx, { object: 'contacts', pageSize: Infinity, maxPageSize: Infinity });
    const withDeleted = ctx.query.deleted !== 'false';
    ctx.body = {
      kind: 'contacts',
      data: [...stores.contacts.rows.values()]
        .filter((row) => withDeleted || !row.deleted)
        .map((row) => ({ ...row.record, deleted: row.deleted === true })),
    };
  });

  router.get('/v4/customfields', (ctx) => {
    ctx.body = {
      kind: 'customfields',
      data: customFields.map((field) => ({ ...field, accountId: ACCOUNT, sharedIds: [] })),
    };
  });

  router.get('/v4/:kind/:id', (ctx) => {
    const kind = ctx.params.kind as Kind;
    if (!kinds.includes(kind)) throw new FakeHttpError(404, 'Method not found');
    ctx.body = { kind, data: [rowOf(kind, ctx.params.id).record] };
  });

  const writable: Record<'tasks' | 'folders', string[]> = {
    tasks: ['title', 'description', 'status', 'importance', 'customFields', 'customStatusId'],
    folders: ['title', 'description', 'customFields'],
  };
  const parametersOf = (ctx: Context, kind: 'tasks' | 'folders'): Record<string, unknown> => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const values: Record<string, unknown> = {};
    for (const [name, raw] of Object.entries(body)) {
      if (!writable[kind].includes(name))
        throw new FakeHttpError(400, `Parameter '${name}' is not supported`, 'invalid_parameter');
      let value = raw;
      if (name === 'customFields' && typeof raw === 'string') {
        try {
          value = JSON.parse(raw);
        } catch {
          throw new FakeHttpError(400, "Parameter 'customFields' value is invalid");
        }
      }
      if (name === 'customFields') {
        if (!Array.isArray(value)) throw new FakeHttpError(400, "Parameter 'customFields' value is invalid");
        for (const entry of value as { id?: unknown }[])
          if (!customFields.some((field) => field.id === entry.id))
            throw new FakeHttpError(400, `Custom field '${String(entry.id)}' not found`, 'invalid_parameter');
      }
      values[name] = value;
    }
    return values;
  };
  const apply = (row: Row, values: Record<string, unknown>) => {
    const { customFields: custom, ...rest } = values;
    Object.assign(row.record, rest);
    if (custom) {
      const current = row.record.customFields as { id: string; value: unknown }[];
      for (const entry of custom as { id: string; value: unknown }[]) {
        const existing = current.find((item) => item.id === entry.id);
        if (existing) existing.value = entry.value;
        else current.push({ id: entry.id, value: entry.value });
      }
    }
  };
  const stamp = (row: Row, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = wholeSecond(ms);
    row.visibleFromMs = visibleFromMs;
    row.record.updatedDate = wrikeTime(ms);
  };

  const create = (kind: Kind, values: Record<string, unknown>, ms: number, parent = ROOT_FOLDER): Row => {
    const id = newId(kind === 'tasks' ? 'K' : kind === 'folders' ? 'I' : 'U');
    const common = { id, accountId: ACCOUNT, createdDate: wrikeTime(ms), updatedDate: wrikeTime(ms) };
    const record: WrikeRecord =
      kind === 'tasks'
        ? {
            ...common,
            title: null,
            description: '',
            briefDescription: '',
            parentIds: [parent],
            superParentIds: [],
            sharedIds: [],
            responsibleIds: [],
            status: 'Active',
            importance: 'Normal',
            dates: { type: 'Backlog' },
            scope: 'WsTask',
            customFields: [],
            permalink: `https://www.wrike.com/open.htm?id=${serial}`,
          }
        : kind === 'folders'
          ? {
              ...common,
              title: null,
              description: '',
              parentIds: [parent],
              childIds: [],
              sharedIds: [],
              scope: 'WsFolder',
              customFields: [],
              permalink: `https://www.wrike.com/open.htm?id=${serial}`,
            }
          : {
              id,
              firstName: null,
              lastName: null,
              type: 'Person',
              profiles: [],
              avatarUrl: null,
              timezone: 'Europe/London',
              locale: 'en',
              deleted: false,
              title: null,
              companyName: null,
            };
    const row = { record: record, modifiedMs: wholeSecond(ms) } as Row;
    stores[kind].rows.set(id, row);
    apply(row, values);
    if (kind === 'tasks' && typeof values.description === 'string')
      row.record.briefDescription = values.description.slice(0, 100);
    return row;
  };

  const createIn = (kind: 'tasks' | 'folders') => (ctx: Context) => {
    const parent = ctx.params.folderId;
    if (parent !== ROOT_FOLDER && !stores.folders.get(parent))
      throw new FakeHttpError(404, `Folder '${parent}' not found`);
    const values = parametersOf(ctx, kind);
    if (typeof values.title !== 'string' || !values.title)
      throw new FakeHttpError(400, "Parameter 'title' is required", 'invalid_parameter');
    ctx.body = { kind, data: [create(kind, values, now(), parent).record] };
  };
  router.post('/v4/folders/:folderId/tasks', createIn('tasks'));
  router.post('/v4/folders/:folderId/folders', createIn('folders'));

  const recycle = (kind: 'tasks' | 'folders', id: string, atMs: number) => {
    const row = stores[kind].get(id);
    if (!row) return;
    row.record.scope = kind === 'tasks' ? 'RbTask' : 'RbFolder';
    stamp(row, atMs);
  };

  for (const kind of ['tasks', 'folders'] as const) {
    router.put(`/v4/${kind}/:id`, (ctx) => {
      const row = stores[kind].get(ctx.params.id);
      if (!row) throw new FakeHttpError(404, `Resource '${ctx.params.id}' not found`);
      apply(row, parametersOf(ctx, kind));
      stamp(row, now());
      ctx.body = { kind, data: [row.record] };
    });
    router.delete(`/v4/${kind}/:id`, (ctx) => {
      const row = stores[kind].get(ctx.params.id);
      if (!row || String(row.record.scope).startsWith('Rb'))
        throw new FakeHttpError(404, `Resource '${ctx.params.id}' not found`);
      recycle(kind, ctx.params.id, now());
      ctx.body = { kind, data: [row.record] };
    });
  }

  await fake.start();

  const kindOf = (object: string): Kind => {
    if (!kinds.includes(object as Kind)) throw new Error(`no wrike object ${object}`);
    return object as Kind;
  };

  return asConformanceFake(fake, {
    seed: (object, times) =>
      times.map((ms) => {
        const kind = kindOf(object);
        const n = serial;
        const values: Record<string, unknown> =
          kind === 'tasks'
            ? {
                title: `Task ${n}`,
                description: `Do thing ${n}`,
                customFields: [
                  { id: 'IEAAAAAAJUAAAAAB', value: `CC-${n}` },
                  { id: 'IEAAAAAAJUAAAAAC', value: 'Design' },
                ],
              }
            : kind === 'folders'
              ? { title: `Folder ${n}`, description: `Folder ${n}` }
              : { firstName: `First${n}`, lastName: `Last${n}`, title: 'Engineer' };
        return create(kind, values, ms).record.id;
      }),
    touch(object, id, modifiedMs, options) {
      const kind = kindOf(object);
      const row = rowOf(kind, id);
      if (kind === 'contacts') {
        row.modifiedMs = modifiedMs;
        row.record.title = `Engineer ${modifiedMs}`;
        return;
      }
      stamp(row, modifiedMs, options?.visibleFromMs);
    },
    remove(object, id, atMs) {
      const kind = kindOf(object);
      if (kind === 'contacts') {
        // A user removed from the account stays, marked deleted.
        const row = stores.contacts.rows.get(id);
        if (row) Object.assign(row, { deleted: true, deletedMs: atMs });
        return;
      }
      recycle(kind, id, atMs);
    },
    stored(object, id) {
      const kind = kindOf(object);
      const row = stores[kind].rows.get(id);
      if (!row || row.deleted || String(row.record.scope ?? '').startsWith('Rb')) return undefined;
      return row.record;
    },
  });
}

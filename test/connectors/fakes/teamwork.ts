import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  asConformanceFake,
  bearerCredential,
  FakeHttpError,
  FakeProvider,
  RecordStore,
  type StoredRecord,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for Teamwork.com's Projects API v3 (https://apidocs.teamwork.com/docs/teamwork/v3/,
 * the projects, tasks and people endpoints; the guides "How does paging work" and "Rate limiting"),
 * written from that reference and amp-labs/connectors' recorded answers (providers/teamwork/test):
 *
 * - OAuth 2 bearer tokens. Errors `{errors: [{id, title, detail, meta?}]}`; a bad or missing token
 *   401 `{message}`. Every answer carries `X-RateLimit-Limit` (150 requests a minute),
 *   `X-RateLimit-Remaining`, `X-RateLimit-Reset`; a 429 adds `Retry-After`.
 * - `GET /projects/api/v3/{projects|tasks|people}.json`: `page` (from 1), `pageSize` (default 50,
 *   at most 500), the answer `{<object>: [...], meta: {page: {pageOffset, pageSize, count, hasMore}},
 *   included: {}}` (`pageOffset` the 0-based page). Ordered by id unless `orderBy` names `updatedAt`
 *   (ties by id; `orderMode` `asc`/`desc`). `updatedAfter` keeps records updated strictly after it
 *   (verify: the reference says only "updated after"); tasks also take `updatedBefore` (strictly
 *   before). Times are RFC 3339 UTC to the second (`2024-05-20T23:21:06Z`).
 * - Tasks: completed ones are listed only with `includeCompletedTasks=true`; deleted ones only with
 *   `showDeleted=true`, then with `status: "deleted"` and `updatedAt` the deletion (verify).
 *   Deleted projects and people are gone from every listing.
 * - Projects are written at `/projects/api/v3/projects[/{id}].json`: `POST` (201) and `PATCH` with
 *   `{project: {...}}`, answering `{project}`; `DELETE` 204. A project needs a `name`, unique
 *   (409 `conflict`). Fields a project does not have are refused (400 `invalid payload`).
 * - Tasks and people are read here (a task is created inside a task list; people are invited
 *   through another API).
 */

type Row = StoredRecord<Record<string, unknown>>;

const PREFIX = '/projects/api/v3';
const PAGE_DEFAULT = 50;
const PAGE_MAX = 500;
const PER_MINUTE = 150;

const wholeSecond = (ms: number) => Math.floor(ms / 1000) * 1000;
const twTime = (ms: number) => new Date(wholeSecond(ms)).toISOString().replace('.000Z', 'Z');

const objects = ['projects', 'tasks', 'people'] as const;
type ObjectName = (typeof objects)[number];

const projectWritable = new Set([
  'name',
  'description',
  'startAt',
  'endAt',
  'companyId',
  'categoryId',
  'ownedBy',
  'tagIds',
  'status',
]);

function invalid(detail: string, status = 400, title = 'invalid payload'): FakeHttpError {
  return new FakeHttpError(status, detail, title);
}

export async function startFakeTeamwork(): Promise<ConformanceFake> {
  const stores: Record<ObjectName, RecordStore<Record<string, unknown>>> = {
    projects: new RecordStore(),
    tasks: new RecordStore(),
    people: new RecordStore(),
  };

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) =>
      error.status === 401
        ? { message: 'Unauthorized: invalid or expired token' }
        : {
            errors: [
              {
                id: `1-${Date.now().toString(16)}`,
                title:
                  error.status === 429
                    ? 'too many requests'
                    : error.status >= 500
                      ? 'internal error'
                      : (error.code ?? (error.status === 404 ? 'not found' : 'invalid payload')),
                detail: error.message,
              },
            ],
          },
    rateLimitHeaders: () => ({
      'X-RateLimit-Limit': String(PER_MINUTE),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '1',
      'Retry-After': '1',
    }),
  });
  const router = fake.router;
  const now = () => fake.now();

  // The limit's headers on every answer. The limit itself (150 requests a minute) is not enforced
  // here: the suite's own bursts would spend it, and a queued 429 (`failNext`) proves the retry.
  router.use(async (ctx, next) => {
    ctx.set('X-RateLimit-Limit', String(PER_MINUTE));
    ctx.set('X-RateLimit-Remaining', String(PER_MINUTE - 1));
    ctx.set('X-RateLimit-Reset', '60');
    await next();
  });

  const objectOf = (ctx: Context): ObjectName => {
    const name = String(ctx.params.object) as ObjectName;
    if (!objects.includes(name)) throw new FakeHttpError(404, `Unknown resource ${name}`, 'not found');
    return name;
  };
  const singular: Record<ObjectName, string> = { projects: 'project', tasks: 'task', people: 'person' };

  const timeArg = (ctx: Context, name: string): number | undefined => {
    const text = ctx.query[name];
    if (text === undefined || text === '') return undefined;
    const ms = Date.parse(String(text));
    if (Number.isNaN(ms)) throw invalid(`${name} is not a valid date-time`, 400, 'bad request');
    return wholeSecond(ms);
  };

  router.get(`${PREFIX}/:file`, (ctx) => {
    const match = /^([a-z]+)\.json$/.exec(String(ctx.params.file));
    if (!match) throw new FakeHttpError(404, 'Not found', 'not found');
    ctx.params.object = match[1];
    const object = objectOf(ctx);
    const page = ctx.query.page === undefined ? 1 : Number(ctx.query.page);
    const pageSize = ctx.query.pageSize === undefined ? PAGE_DEFAULT : Number(ctx.query.pageSize);
    if (!Number.isInteger(page) || page < 1)
      throw invalid('page must be a positive integer', 400, 'bad request');
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > PAGE_MAX)
      throw invalid(`pageSize must be between 1 and ${PAGE_MAX}`, 400, 'bad request');
    fake.logListing(ctx, { object, pageSize, maxPageSize: PAGE_MAX });
    const after = timeArg(ctx, 'updatedAfter');
    const before = object === 'tasks' ? timeArg(ctx, 'updatedBefore') : undefined;
    const showDeleted = object === 'tasks' && ctx.query.showDeleted === 'true';
    const withCompleted = ctx.query.includeCompletedTasks === 'true';
    const orderBy = ctx.query.orderBy === undefined ? 'id' : String(ctx.query.orderBy).toLowerCase();
    if (!['id', 'updatedat', 'updated'].includes(orderBy) && !['name', 'createdat'].includes(orderBy))
      throw invalid(`orderBy '${String(ctx.query.orderBy)}' is not supported`, 400, 'bad request');
    const sign = String(ctx.query.orderMode ?? 'asc').toLowerCase() === 'desc' ? -1 : 1;
    const key = (row: Row): number | string =>
      orderBy === 'id'
        ? Number(row.record.id)
        : orderBy === 'name'
          ? String(row.record.name ?? '')
          : orderBy === 'createdat'
            ? Date.parse(String(row.record.createdAt))
            : row.modifiedMs;
    const rows = [...stores[object].rows.values()]
      .filter((row) => (row.visibleFromMs ?? row.modifiedMs) <= now())
      .filter((row) => (row.deleted ? showDeleted : true))
      .filter((row) => object !== 'tasks' || withCompleted || row.record.status !== 'completed')
      .filter((row) => after === undefined || row.modifiedMs > after)
      .filter((row) => before === undefined || row.modifiedMs < before)
      .sort((a, b) => {
        const x = key(a);
        const y = key(b);
        return ((x < y ? -1 : x > y ? 1 : 0) || Number(a.record.id) - Number(b.record.id)) * sign;
      });
    const start = (page - 1) * pageSize;
    const slice = rows.slice(start, start + pageSize);
    ctx.body = {
      [object]: slice.map((row) => row.record),
      meta: {
        page: { pageOffset: page - 1, pageSize, count: rows.length, hasMore: start + pageSize < rows.length },
      },
      included: {},
    };
  });

  const rowOf = (object: ObjectName, file: string): Row => {
    const id = /^(\d+)\.json$/.exec(file)?.[1];
    const row = id === undefined ? undefined : stores[object].get(id);
    if (!row) throw new FakeHttpError(404, `${singular[object]} not found`, 'not found');
    return row;
  };

  router.get(`${PREFIX}/:object/:file`, (ctx) => {
    const object = objectOf(ctx);
    ctx.body = { [singular[object]]: rowOf(object, ctx.params.file).record, included: {} };
  });

  const stamp = (row: Row, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = wholeSecond(ms);
    row.visibleFromMs = visibleFromMs;
    row.record.updatedAt = twTime(ms);
  };

  const projectValues = (ctx: Context, exceptId?: number): Record<string, unknown> => {
    const project = (ctx.request.body as { project?: unknown } | undefined)?.project;
    if (!project || typeof project !== 'object' || Array.isArray(project))
      throw invalid('the body must hold a project object');
    const values = project as Record<string, unknown>;
    for (const name of Object.keys(values))
      if (!projectWritable.has(name)) throw invalid(`unknown field ${name}`);
    if (values.name !== undefined) {
      const taken = stores.projects
        .live()
        .some((row) => row.record.name === values.name && row.record.id !== exceptId);
      if (taken) throw invalid('Project name already in use', 409, 'conflict');
    }
    return values;
  };

  const create = (object: ObjectName, values: Record<string, unknown>, ms: number): Row => {
    const id = 400_000 + stores[object].nextId();
    const base: Record<ObjectName, Record<string, unknown>> = {
      projects: {
        name: null,
        description: '',
        status: 'active',
        subStatus: 'current',
        companyId: 0,
        startAt: null,
        endAt: null,
        tagIds: [],
      },
      tasks: {
        name: null,
        description: '',
        status: 'new',
        priority: null,
        progress: 0,
        tasklistId: 1,
        parentTaskId: null,
        startDate: null,
        dueDate: null,
        assigneeUserIds: [],
      },
      people: {
        firstName: null,
        lastName: null,
        email: null,
        title: '',
        company: { id: 1, type: 'companies' },
        isAdmin: false,
        userType: 'account',
      },
    };
    const record = { id, ...base[object], ...values, createdAt: twTime(ms), updatedAt: twTime(ms) };
    return stores[object].put(String(id), record, wholeSecond(ms)) && stores[object].get(String(id))!;
  };

  router.post(`${PREFIX}/projects.json`, (ctx) => {
    const values = projectValues(ctx);
    if (typeof values.name !== 'string' || !values.name) throw invalid('name is required');
    const row = create('projects', values, now());
    ctx.status = 201;
    ctx.body = { project: row.record };
  });

  router.patch(`${PREFIX}/projects/:file`, (ctx) => {
    const row = rowOf('projects', ctx.params.file);
    Object.assign(row.record, projectValues(ctx, Number(row.record.id)));
    stamp(row, now());
    ctx.body = { project: row.record };
  });

  const remove = (object: ObjectName, id: string, ms: number) => {
    const row = stores[object].get(id);
    if (!row) throw new FakeHttpError(404, `${singular[object]} not found`, 'not found');
    if (object === 'tasks') {
      // In the trash: listed with showDeleted=true.
      stores.tasks.remove(id, wholeSecond(ms));
      row.record.status = 'deleted';
      row.record.updatedAt = twTime(ms);
    } else stores[object].rows.delete(id);
  };

  router.delete(`${PREFIX}/projects/:file`, (ctx) => {
    const row = rowOf('projects', ctx.params.file);
    remove('projects', String(row.record.id), now());
    ctx.status = 204;
  });

  await fake.start();

  let n = 0;
  return asConformanceFake(fake, {
    seed: (object, times) =>
      times.map((ms) => {
        n += 1;
        const values: Record<ObjectName, Record<string, unknown>> = {
          projects: { name: `Project ${n}`, description: 'Seeded' },
          tasks: { name: `Task ${n}`, description: 'Seeded', priority: 'low' },
          people: { firstName: `First${n}`, lastName: `Last${n}`, email: `p${n}@example.com` },
        };
        return String(create(object as ObjectName, values[object as ObjectName], ms).record.id);
      }),
    touch(object, id, modifiedMs, options) {
      const row = stores[object as ObjectName].get(id);
      if (!row) throw new Error(`no ${object} ${id}`);
      stamp(row, modifiedMs, options?.visibleFromMs);
    },
    remove: (object, id, atMs) => remove(object as ObjectName, id, atMs),
    stored: (object, id) => stores[object as ObjectName]?.get(id)?.record,
  });
}

import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { FakeHttpError, FakeProvider } from '../kit/fake-provider.js';
import { VersionedStore, type Row } from './versions.js';

/**
 * A local stand-in for ClickUp's API v2 (https://clickup.com/api, https://developer.clickup.com/reference),
 * written from its reference for one Workspace's spaces and one List's tasks:
 *
 * - Auth: `Authorization: <token>` (a personal token `pk_…` or an OAuth access token; `Bearer <token>`
 *   is taken too); a bad token answers 401 `{"err": "Token invalid", "ECODE": "OAUTH_025"}`.
 * - Times are Unix milliseconds written as strings (`"date_updated": "1567780450202"`).
 * - `GET /api/v2/list/{list_id}/task`: `page` (from 0), 100 tasks a page and no page-size
 *   parameter, `{tasks, last_page}`; `order_by` (`created` by default, `updated`, `id`, `due_date`),
 *   newest first unless `reverse=true`; `date_updated_gt`/`_lt`, `date_created_gt`/`_lt` (Unix ms,
 *   strictly greater / less); `include_closed` (false by default: closed tasks are left out),
 *   `archived` (false by default: archived tasks are left out; true lists the archived ones),
 *   `subtasks` (false by default), `statuses[]`, `tags[]`.
 * - `POST /api/v2/list/{list_id}/task` (`name` required), `PUT /api/v2/task/{task_id}` (`name`,
 *   `description`, `markdown_content`, `status`, `priority` 1–4 or null, `due_date`, `start_date`,
 *   `time_estimate`, `points`, `archived`, `assignees: {add, rem}`), `DELETE /api/v2/task/{task_id}`
 *   (204; the task goes to the trash, out of every listing, and reads answer 404): no listing
 *   reveals it. Custom field values are set one at a time, `POST /api/v2/task/{task_id}/field/{field_id}`
 *   `{value}`, or in a create's `custom_fields: [{id, value}]`.
 * - `GET /api/v2/list/{list_id}/field`: the List's custom fields `{fields: [{id, name, type,
 *   type_config, required}]}`; tasks carry them in `custom_fields`, with `value` once set.
 * - `GET /api/v2/team/{team_id}/space` (`archived`): `{spaces: [...]}`, no paging, no times.
 * - Errors `{err, ECODE}`; every answer carries `X-RateLimit-Limit`, `X-RateLimit-Remaining` and
 *   `X-RateLimit-Reset` (Unix seconds); a 429 (`APP_002`) says when to come back only there.
 */

export const CLICKUP_TEAM_ID = '9011234567';
export const CLICKUP_LIST_ID = '901100200300';
const TASKS_PER_PAGE = 100;
const LIMIT_PER_MINUTE = 100;

type ClickupRecord = Record<string, unknown> & { id: string };

const error = (status: number, err: string, code: string) =>
  new FakeHttpError(status, JSON.stringify({ err, ECODE: code }), 'clickup');

const STATUSES = [
  { id: 'sc901_to_do', status: 'to do', color: '#87909e', orderindex: 0, type: 'open' },
  { id: 'sc901_in_progress', status: 'in progress', color: '#5f55ee', orderindex: 1, type: 'custom' },
  { id: 'sc901_complete', status: 'complete', color: '#008844', orderindex: 2, type: 'closed' },
];
const PRIORITIES = ['urgent', 'high', 'normal', 'low'].map((priority, index) => ({
  id: String(index + 1),
  priority,
  color: ['#f50000', '#f8ae00', '#6fddff', '#d8d8d8'][index],
  orderindex: String(index + 1),
}));
const CUSTOM_FIELDS = [
  {
    id: '5dc86497-098d-4bb0-87d6-cf28e43812e7',
    name: 'Customer',
    type: 'short_text',
    type_config: {},
    date_created: '1566400407303',
    hide_from_guests: false,
    required: false,
  },
  {
    id: '0a52c486-5f05-403b-b4fd-c512ff05131c',
    name: 'Effort',
    type: 'number',
    type_config: {},
    date_created: '1566400407303',
    hide_from_guests: false,
    required: false,
  },
  {
    id: '03efda77-c7a0-42d3-8afd-fd546353c2f5',
    name: 'Plan',
    type: 'drop_down',
    type_config: {
      default: 0,
      placeholder: null,
      options: [
        { id: 'a8a0c2d4-0001', name: 'Free', color: null, orderindex: 0 },
        { id: 'a8a0c2d4-0002', name: 'Pro', color: null, orderindex: 1 },
      ],
    },
    date_created: '1566400407303',
    hide_from_guests: false,
    required: false,
  },
];
const creator = {
  id: 183,
  username: 'Mia Krystof',
  color: '#827718',
  email: 'mia@example.com',
  profilePicture: null,
};

export async function startFakeClickup(): Promise<ConformanceFake> {
  const tasks = new VersionedStore<ClickupRecord>();
  const deletedTasks = new Set<string>();
  let nextTask = 1;
  let used = 0;

  const fake = new FakeProvider({
    credentialOf: (ctx) => ctx.get('authorization').replace(/^Bearer\s+/i, '') || undefined,
    errorBody: (failure) => {
      if (failure.code === 'clickup') return JSON.parse(failure.message) as unknown;
      if (failure.status === 401) return { err: 'Token invalid', ECODE: 'OAUTH_025' };
      if (failure.status === 429) return { err: 'Rate limit reached', ECODE: 'APP_002' };
      if (failure.status === 404) return { err: 'Route not found', ECODE: 'APP_001' };
      return { err: failure.message, ECODE: 'APP_000' };
    },
    rateLimitHeaders: () => ({ ...rateHeaders(), 'X-RateLimit-Remaining': '0' }),
  });
  const now = () => fake.now();
  const router = fake.router;

  function rateHeaders(): Record<string, string> {
    return {
      'X-RateLimit-Limit': String(LIMIT_PER_MINUTE),
      'X-RateLimit-Remaining': String(LIMIT_PER_MINUTE - (used % LIMIT_PER_MINUTE)),
      'X-RateLimit-Reset': String(Math.ceil(Date.now() / 60_000) * 60),
    };
  }
  router.use(async (ctx, next) => {
    used += 1;
    for (const [name, value] of Object.entries(rateHeaders())) ctx.set(name, value);
    await next();
  });

  const listOf = (ctx: Context) => {
    if (ctx.params.list !== CLICKUP_LIST_ID) throw error(404, 'List not found', 'ITEM_015');
  };
  const taskRow = (id: string): Row<ClickupRecord> => {
    const row = tasks.row(id);
    if (!row)
      throw error(404, deletedTasks.has(id) ? 'Task not found, deleted' : 'Task not found', 'ITEM_013');
    return row;
  };
  const bool = (ctx: Context, name: string) => ctx.query[name] === 'true';
  const ms = (ctx: Context, name: string): number | undefined => {
    const raw = ctx.query[name];
    if (raw === undefined) return undefined;
    if (typeof raw !== 'string' || !/^\d+$/.test(raw))
      throw error(400, `${name} must be a number`, 'INPUT_005');
    return Number(raw);
  };
  const arrayParam = (ctx: Context, name: string): string[] => {
    const raw = ctx.query[`${name}[]`] ?? ctx.query[name];
    return raw === undefined ? [] : (Array.isArray(raw) ? raw : [raw]).map(String);
  };

  /** A field's value as a create or update sets it, checked against its type. */
  function fieldValue(field: (typeof CUSTOM_FIELDS)[number], value: unknown): unknown {
    if (value === null) return undefined;
    if (field.type === 'number') {
      if (typeof value !== 'number' && !/^-?\d+(\.\d+)?$/.test(String(value)))
        throw error(400, 'Value must be a number', 'FIELD_012');
      return Number(value);
    }
    if (field.type === 'drop_down') {
      const options = field.type_config.options ?? [];
      const option = options.find((o) => o.id === value || o.orderindex === value || o.name === value);
      if (!option) throw error(400, 'Value is not a valid option', 'FIELD_015');
      return option.orderindex;
    }
    if (typeof value !== 'string') throw error(400, 'Value must be a string', 'FIELD_011');
    return value;
  }

  function setField(record: ClickupRecord, fieldId: string, value: unknown) {
    const field = CUSTOM_FIELDS.find((candidate) => candidate.id === fieldId);
    if (!field) throw error(400, 'Custom field not found', 'FIELD_033');
    const stored = fieldValue(field, value);
    record.custom_fields = (record.custom_fields as Record<string, unknown>[]).map((entry) => {
      if (entry.id !== fieldId) return entry;
      const { value: _old, ...rest } = entry;
      return stored === undefined ? rest : { ...rest, value: stored };
    });
  }

  /** The members of a create or update, checked as ClickUp checks them; others are ignored. */
  function taskValues(body: Record<string, unknown>, creating: boolean): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (creating || 'name' in body) {
      if (typeof body.name !== 'string' || !body.name.trim())
        throw error(400, 'Task name invalid', 'INPUT_005');
      out.name = body.name;
    }
    if ('description' in body) {
      out.description = body.description === null ? '' : String(body.description);
      out.text_content = out.description;
    }
    if ('markdown_content' in body) {
      out.description = String(body.markdown_content ?? '');
      out.text_content = out.description;
    }
    if ('status' in body) {
      const status = STATUSES.find((s) => s.status === String(body.status).toLowerCase());
      if (!status) throw error(400, 'Status does not exist', 'ITEM_114');
      out.status = status;
    }
    if ('priority' in body) {
      if (body.priority === null) out.priority = null;
      else {
        const priority = PRIORITIES.find((p) => p.id === String(body.priority));
        if (!priority) throw error(400, 'Priority invalid', 'INPUT_003');
        out.priority = priority;
      }
    }
    for (const name of ['due_date', 'start_date']) {
      if (name in body) {
        if (body[name] !== null && !Number.isInteger(Number(body[name])))
          throw error(400, `${name} invalid`, 'INPUT_005');
        out[name] = body[name] === null ? null : String(body[name]);
      }
    }
    for (const name of ['time_estimate', 'points']) {
      if (name in body) {
        if (body[name] !== null && typeof body[name] !== 'number')
          throw error(400, `${name} invalid`, 'INPUT_005');
        out[name] = body[name];
      }
    }
    if ('tags' in body) {
      if (!Array.isArray(body.tags)) throw error(400, 'Tags invalid', 'INPUT_005');
      out.tags = body.tags.map((name) => ({
        name: String(name),
        tag_fg: '#800000',
        tag_bg: '#2ecd6f',
        creator: creator.id,
      }));
    }
    if ('archived' in body) out.archived = body.archived === true;
    return out;
  }

  function apply(record: ClickupRecord, values: Record<string, unknown>, at: number) {
    Object.assign(record, values);
    const status = record.status as (typeof STATUSES)[number];
    if (status.type === 'closed') {
      record.date_closed ??= String(at);
      record.date_done ??= String(at);
    } else {
      record.date_closed = null;
      record.date_done = null;
    }
    record.date_updated = String(at);
  }

  function newTask(values: Record<string, unknown>, at: number): Row<ClickupRecord> {
    const id = `86${(nextTask++).toString(36).padStart(6, '0')}`;
    const record: ClickupRecord = {
      id,
      custom_id: null,
      custom_item_id: 0,
      name: '',
      text_content: '',
      description: '',
      status: STATUSES[0],
      orderindex: `${nextTask}.00000000000000000000000000000000`,
      date_created: String(at),
      date_updated: String(at),
      date_closed: null,
      date_done: null,
      archived: false,
      creator,
      assignees: [],
      group_assignees: [],
      watchers: [creator],
      checklists: [],
      tags: [],
      parent: null,
      top_level_parent: null,
      priority: null,
      due_date: null,
      start_date: null,
      points: null,
      time_estimate: null,
      custom_fields: CUSTOM_FIELDS.map((field) => ({ ...field })),
      dependencies: [],
      linked_tasks: [],
      locations: [],
      team_id: CLICKUP_TEAM_ID,
      url: `https://app.clickup.com/t/${id}`,
      sharing: { public: false },
      permission_level: 'create',
      list: { id: CLICKUP_LIST_ID, name: 'Roadmap', access: true },
      project: { id: '901100100', name: 'Product', hidden: false, access: true },
      folder: { id: '901100100', name: 'Product', hidden: false, access: true },
      space: { id: '90110010' },
    };
    apply(record, values, at);
    return tasks.add(id, record, at);
  }

  router.get('/api/v2/team/:team/space', (ctx) => {
    if (ctx.params.team !== CLICKUP_TEAM_ID) throw error(401, 'Team not authorized', 'OAUTH_027');
    const archived = bool(ctx, 'archived');
    ctx.body = {
      spaces: [
        {
          id: '90110010',
          name: 'Product',
          private: false,
          color: '#7B68EE',
          avatar: null,
          admin_can_manage: true,
          archived: false,
          members: [{ user: creator }],
          statuses: STATUSES,
          multiple_assignees: true,
          features: {
            due_dates: { enabled: true },
            time_tracking: { enabled: true },
            tags: { enabled: true },
            custom_fields: { enabled: true },
          },
        },
        {
          id: '90110020',
          name: 'Marketing',
          private: false,
          color: '#FF7FAB',
          avatar: null,
          admin_can_manage: true,
          archived: true,
          members: [{ user: creator }],
          statuses: STATUSES,
          multiple_assignees: true,
          features: { due_dates: { enabled: true } },
        },
      ].filter((space) => space.archived === archived),
    };
  });

  router.get('/api/v2/list/:list/field', (ctx) => {
    listOf(ctx);
    ctx.body = { fields: CUSTOM_FIELDS };
  });

  router.get('/api/v2/list/:list/task', (ctx) => {
    listOf(ctx);
    const page = ctx.query.page === undefined ? 0 : Number(ctx.query.page);
    if (!Number.isInteger(page) || page < 0) throw error(400, 'Page invalid', 'INPUT_005');
    fake.logListing(ctx, { object: 'tasks', pageSize: TASKS_PER_PAGE, maxPageSize: TASKS_PER_PAGE });
    const orderBy = String(ctx.query.order_by ?? 'created');
    if (!['id', 'created', 'updated', 'due_date'].includes(orderBy))
      throw error(400, 'Order by invalid', 'INPUT_005');
    const updatedGt = ms(ctx, 'date_updated_gt');
    const updatedLt = ms(ctx, 'date_updated_lt');
    const createdGt = ms(ctx, 'date_created_gt');
    const createdLt = ms(ctx, 'date_created_lt');
    const includeClosed = bool(ctx, 'include_closed');
    const archived = bool(ctx, 'archived');
    const statuses = arrayParam(ctx, 'statuses').map((s) => s.toLowerCase());
    const tags = arrayParam(ctx, 'tags');
    const listed = tasks.listed(now()).filter(({ record, modifiedMs }) => {
      const status = record.status as (typeof STATUSES)[number];
      const created = Number(record.date_created);
      return (
        Boolean(record.archived) === archived &&
        (includeClosed || status.type !== 'closed' || statuses.includes(status.status)) &&
        (!statuses.length || statuses.includes(status.status)) &&
        tags.every((tag) => (record.tags as { name: string }[]).some((t) => t.name === tag)) &&
        (record.parent === null || bool(ctx, 'subtasks')) &&
        (updatedGt === undefined || modifiedMs > updatedGt) &&
        (updatedLt === undefined || modifiedMs < updatedLt) &&
        (createdGt === undefined || created > createdGt) &&
        (createdLt === undefined || created < createdLt)
      );
    });
    const key = (version: (typeof listed)[number]): number =>
      orderBy === 'updated'
        ? version.modifiedMs
        : orderBy === 'due_date'
          ? Number(version.record.due_date ?? Number.MAX_SAFE_INTEGER)
          : orderBy === 'id'
            ? version.row.order
            : Number(version.record.date_created);
    // Newest first; `reverse` turns it round.
    const direction = bool(ctx, 'reverse') ? 1 : -1;
    listed.sort((a, b) => (key(a) - key(b) || a.row.order - b.row.order) * direction);
    const slice = listed.slice(page * TASKS_PER_PAGE, (page + 1) * TASKS_PER_PAGE);
    ctx.body = {
      tasks: slice.map((version) => version.record),
      last_page: (page + 1) * TASKS_PER_PAGE >= listed.length,
    };
  });

  router.get('/api/v2/task/:task', (ctx) => {
    ctx.body = taskRow(ctx.params.task).current.record;
  });

  router.post('/api/v2/list/:list/task', (ctx) => {
    listOf(ctx);
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const values = taskValues(body, true);
    const at = now();
    const row = newTask(values, at);
    if (body.custom_fields !== undefined) {
      if (!Array.isArray(body.custom_fields)) throw error(400, 'Custom fields invalid', 'FIELD_001');
      for (const entry of body.custom_fields as { id?: unknown; value?: unknown }[])
        setField(row.current.record, String(entry?.id), entry?.value);
    }
    ctx.body = row.current.record;
  });

  router.put('/api/v2/task/:task', (ctx) => {
    const row = taskRow(ctx.params.task);
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const values = taskValues(body, false);
    const at = now();
    tasks.change(row.id, at, (record) => apply(record, values, at), { now: at });
    ctx.body = row.current.record;
  });

  router.post('/api/v2/task/:task/field/:field', (ctx) => {
    const row = taskRow(ctx.params.task);
    const body = (ctx.request.body ?? {}) as { value?: unknown };
    const at = now();
    tasks.change(
      row.id,
      at,
      (record) => {
        setField(record, ctx.params.field, body.value);
        record.date_updated = String(at);
      },
      { now: at },
    );
    ctx.body = {};
  });

  router.delete('/api/v2/task/:task', (ctx) => {
    const row = taskRow(ctx.params.task);
    tasks.remove(row.id, now());
    tasks.rows.delete(row.id);
    deletedTasks.add(row.id);
    ctx.status = 204;
  });

  await fake.start();

  let seeded = 0;
  return {
    url: fake.url,
    tokenUrl: fake.tokenUrl,
    get credential() {
      return fake.credential;
    },
    rotateCredential: () => fake.rotateCredential(),
    refuseRefresh: () => fake.refuseRefresh(),
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    requests: fake.requests,
    setClock: (clock) => fake.setClock(clock),
    seed(object, times) {
      if (object !== 'tasks') throw new Error(`the ClickUp fake seeds tasks, not ${object}`);
      return times.map((at) => {
        seeded += 1;
        // Every third task complete (closed): listings leave those out unless include_closed.
        const row = newTask(
          {
            name: `Task ${seeded}`,
            description: `Seeded ${seeded}`,
            text_content: `Seeded ${seeded}`,
            status: STATUSES[seeded % 3 === 0 ? 2 : seeded % 3 === 1 ? 0 : 1],
          },
          at,
        );
        row.current.record.date_updated = String(at);
        setField(row.current.record, CUSTOM_FIELDS[0].id, `Customer ${seeded}`);
        return row.id;
      });
    },
    touch(object, id, modifiedMs, options) {
      tasks.change(
        id,
        modifiedMs,
        (record) => {
          record.date_updated = String(modifiedMs);
          record.text_content = `Edited at ${modifiedMs}`;
        },
        { now: now(), ...(options?.visibleFromMs !== undefined && { visibleFromMs: options.visibleFromMs }) },
      );
    },
    remove(object, id, atMs) {
      tasks.remove(id, atMs);
      tasks.rows.delete(id);
      deletedTasks.add(id);
    },
    stored: (object, id) => tasks.get(id),
    stop: () => fake.stop(),
  };
}

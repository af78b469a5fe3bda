import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  asConformanceFake,
  basicUserCredential,
  FakeHttpError,
  FakeProvider,
  RecordStore,
  type StoredRecord,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for Freshservice's API v2 (https://api.freshservice.com/, the Tickets, Requesters
 * and Assets sections, Ticket form fields, Pagination, Rate limits, Error codes), written from that
 * reference:
 *
 * - Basic authentication with the API key as the user name (any password). Errors: 401
 *   `{code: "invalid_credentials", message}`, 404 `{code: "access_denied", message}`, 400
 *   `{description: "Validation failed", errors: [{field, message, code}]}`, 429 with `Retry-After`;
 *   every answer carries `X-RateLimit-Total`, `X-RateLimit-Remaining`.
 * - Lists take `page` and `per_page` (default 30, at most 100) and say `Link: <…>; rel="next"` while
 *   more follow. Times are ISO 8601 UTC to the second (`2024-01-15T10:30:00Z`).
 * - `GET /api/v2/tickets` answers `{tickets}`: without `updated_since` only tickets created in the
 *   past 30 days; `updated_since` keeps tickets updated at or after it (inclusive: verify);
 *   `order_type` `asc`/`desc` sorts by `created_at` (default `desc`), ties by id; `filter=deleted`
 *   lists the tickets in the trash instead (`deleted: true`), which `updated_since` narrows too.
 *   Deleting a ticket moves it to the trash and stamps `updated_at`. Custom values sit under
 *   `custom_fields: {<name>: value}`. `POST` (201) and `PUT` answer `{ticket}`; a create needs
 *   `subject`, `description`, `status`, `priority` and `email` or `requester_id`.
 *   `GET /api/v2/ticket_form_fields` describes fields `{id, name, label, field_type, required,
 *   default_field, choices}`: default fields are named as the form names them (`requester`, `group`,
 *   `agent`), not as tickets carry them (`requester_id`, `group_id`, `responder_id`).
 * - `GET /api/v2/requesters` answers `{requesters}`, ordered by id, active and deactivated ones
 *   alike unless `active=true|false` narrows them; it takes no time filter. `DELETE` deactivates
 *   (`active: false`, `updated_at` stamped); `PUT` changes the fields sent; `POST` needs `first_name`
 *   and `primary_email`.
 * - `GET /api/v2/assets` answers `{assets}`, ordered by id, no time filter; an asset is addressed by
 *   its `display_id` (`/api/v2/assets/{display_id}`), not its `id`. `DELETE` moves it to the trash,
 *   listed only with `trashed=true`. `POST` needs `name` and `asset_type_id`.
 */

type Row = StoredRecord<Record<string, unknown>>;

const PER_PAGE_DEFAULT = 30;
const PER_PAGE_MAX = 100;
const DAY = 86_400_000;
const RATE_LIMIT_TOTAL = 200;

const wholeSecond = (ms: number) => Math.floor(ms / 1000) * 1000;
const fsTime = (ms: number) => new Date(wholeSecond(ms)).toISOString().replace('.000Z', 'Z');

const ticketFormFields = [
  {
    id: 1,
    name: 'requester',
    label: 'Requester',
    field_type: 'default_requester',
    required: true,
    default_field: true,
    choices: [],
  },
  {
    id: 2,
    name: 'subject',
    label: 'Subject',
    field_type: 'default_subject',
    required: true,
    default_field: true,
    choices: [],
  },
  {
    id: 3,
    name: 'status',
    label: 'Status',
    field_type: 'default_status',
    required: true,
    default_field: true,
    choices: [
      { id: 2, value: 'Open' },
      { id: 3, value: 'Pending' },
      { id: 4, value: 'Resolved' },
      { id: 5, value: 'Closed' },
    ],
  },
  {
    id: 4,
    name: 'priority',
    label: 'Priority',
    field_type: 'default_priority',
    required: true,
    default_field: true,
    choices: [
      { id: 1, value: 'Low' },
      { id: 2, value: 'Medium' },
      { id: 3, value: 'High' },
      { id: 4, value: 'Urgent' },
    ],
  },
  {
    id: 5,
    name: 'group',
    label: 'Group',
    field_type: 'default_group',
    required: false,
    default_field: true,
    choices: [],
  },
  {
    id: 6,
    name: 'agent',
    label: 'Agent',
    field_type: 'default_agent',
    required: false,
    default_field: true,
    choices: [],
  },
  {
    id: 7,
    name: 'description',
    label: 'Description',
    field_type: 'default_description',
    required: true,
    default_field: true,
    choices: [],
  },
  {
    id: 8,
    name: 'category',
    label: 'Category',
    field_type: 'custom_dropdown',
    required: false,
    default_field: false,
    choices: [
      { id: 81, value: 'Hardware' },
      { id: 82, value: 'Software' },
    ],
  },
  {
    id: 9,
    name: 'reference_code',
    label: 'Reference code',
    field_type: 'custom_text',
    required: false,
    default_field: false,
    choices: [],
  },
];
const customNames = ticketFormFields.filter((field) => !field.default_field).map((field) => field.name);

const ticketWritable = new Set([
  'subject',
  'description',
  'status',
  'priority',
  'email',
  'requester_id',
  'group_id',
  'responder_id',
  'type',
  'source',
  'due_by',
  'fr_due_by',
  'tags',
  'cc_emails',
  'department_id',
  'category',
  'sub_category',
  'urgency',
  'impact',
  'custom_fields',
]);
const requesterWritable = new Set([
  'first_name',
  'last_name',
  'job_title',
  'primary_email',
  'secondary_emails',
  'work_phone_number',
  'mobile_phone_number',
  'department_ids',
  'reporting_manager_id',
  'address',
  'time_zone',
  'language',
  'location_id',
  'background_information',
  'custom_fields',
]);
const assetWritable = new Set([
  'name',
  'asset_type_id',
  'asset_tag',
  'impact',
  'usage_type',
  'description',
  'user_id',
  'location_id',
  'department_id',
  'agent_id',
  'group_id',
  'assigned_on',
  'type_fields',
]);

function validation(field: string, message: string, code = 'invalid_value'): FakeHttpError {
  return Object.assign(new FakeHttpError(400, 'Validation failed', 'validation'), {
    errors: [{ field, message, code }],
  });
}

export async function startFakeFreshservice(): Promise<ConformanceFake> {
  const stores = {
    tickets: new RecordStore<Record<string, unknown>>(),
    requesters: new RecordStore<Record<string, unknown>>(),
    assets: new RecordStore<Record<string, unknown>>(),
  };
  type ObjectName = keyof typeof stores;
  /** Assets by display_id, which is how the API addresses them. */
  let nextDisplayId = 1;

  const fake = new FakeProvider({
    credentialOf: basicUserCredential,
    errorBody: (error) => {
      const errors = (error as { errors?: unknown }).errors;
      if (errors) return { description: error.message, errors };
      if (error.status === 401)
        return { code: 'invalid_credentials', message: 'You have to be logged in to perform this action.' };
      if (error.status === 404) return { code: 'access_denied', message: error.message };
      if (error.status === 429)
        return { code: 'too_many_requests', message: 'You have exceeded the limit of requests per minute' };
      return { code: error.code ?? 'internal_error', message: error.message };
    },
    rateLimitHeaders: () => ({
      'X-RateLimit-Total': String(RATE_LIMIT_TOTAL),
      'X-RateLimit-Remaining': '0',
      'Retry-After': '1',
    }),
  });
  const router = fake.router;
  const now = () => fake.now();

  router.use(async (ctx, next) => {
    ctx.set('X-RateLimit-Total', String(RATE_LIMIT_TOTAL));
    ctx.set('X-RateLimit-Remaining', String(RATE_LIMIT_TOTAL - 1));
    ctx.set('X-RateLimit-Used-CurrentRequest', '1');
    await next();
  });

  const pageArgs = (ctx: Context) => {
    const page = ctx.query.page === undefined ? 1 : Number(ctx.query.page);
    const perPage = ctx.query.per_page === undefined ? PER_PAGE_DEFAULT : Number(ctx.query.per_page);
    if (!Number.isInteger(page) || page < 1) throw validation('page', 'It should be a positive integer');
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > PER_PAGE_MAX)
      throw validation('per_page', `Has to be between 1 and ${PER_PAGE_MAX}`);
    return { page, perPage };
  };

  const paged = (ctx: Context, object: ObjectName, rows: Row[]) => {
    const { page, perPage } = pageArgs(ctx);
    fake.logListing(ctx, { object, pageSize: perPage, maxPageSize: PER_PAGE_MAX });
    const start = (page - 1) * perPage;
    if (start + perPage < rows.length) {
      const next = new URL(ctx.href);
      next.searchParams.set('page', String(page + 1));
      ctx.set('Link', `<${next.toString()}>; rel="next"`);
    }
    return rows.slice(start, start + perPage).map((row) => row.record);
  };

  const visible = (row: Row) => (row.visibleFromMs ?? row.modifiedMs) <= now();
  const byId = (a: Row, b: Row) => Number(a.record.id) - Number(b.record.id);

  const timeArg = (ctx: Context, name: string): number | undefined => {
    const text = ctx.query[name];
    if (text === undefined) return undefined;
    const ms = Date.parse(String(text));
    if (Number.isNaN(ms))
      throw validation(name, 'It should be a valid date time in ISO 8601 format', 'invalid_date');
    return wholeSecond(ms);
  };

  router.get('/api/v2/tickets', (ctx) => {
    const filter = ctx.query.filter === undefined ? undefined : String(ctx.query.filter);
    if (filter !== undefined && !['new_and_my_open', 'watching', 'spam', 'deleted'].includes(filter))
      throw validation('filter', "It should be one of these values: 'new_and_my_open,watching,spam,deleted'");
    const orderType = ctx.query.order_type === undefined ? 'desc' : String(ctx.query.order_type);
    if (!['asc', 'desc'].includes(orderType))
      throw validation('order_type', "It should be one of these values: 'asc,desc'");
    const since = timeArg(ctx, 'updated_since');
    let rows = [...stores.tickets.rows.values()].filter(
      (row) => visible(row) && (filter === 'deleted' ? Boolean(row.deleted) : !row.deleted),
    );
    rows =
      since === undefined
        ? rows.filter((row) => Date.parse(String(row.record.created_at)) >= now() - 30 * DAY)
        : rows.filter((row) => row.modifiedMs >= since);
    const sign = orderType === 'asc' ? 1 : -1;
    rows.sort(
      (a, b) =>
        (Date.parse(String(a.record.created_at)) - Date.parse(String(b.record.created_at)) || byId(a, b)) *
        sign,
    );
    ctx.body = { tickets: paged(ctx, 'tickets', rows) };
  });

  router.get('/api/v2/requesters', (ctx) => {
    const active = ctx.query.active === undefined ? undefined : ctx.query.active === 'true';
    const rows = [...stores.requesters.rows.values()]
      .filter((row) => visible(row) && (active === undefined || row.record.active === active))
      .sort(byId);
    ctx.body = { requesters: paged(ctx, 'requesters', rows) };
  });

  router.get('/api/v2/assets', (ctx) => {
    const trashed = ctx.query.trashed === 'true';
    const rows = [...stores.assets.rows.values()]
      .filter((row) => visible(row) && Boolean(row.deleted) === trashed)
      .sort(byId);
    ctx.body = { assets: paged(ctx, 'assets', rows) };
  });

  router.get('/api/v2/ticket_form_fields', (ctx) => {
    ctx.body = { ticket_fields: ticketFormFields };
  });

  const singular: Record<ObjectName, string> = {
    tickets: 'ticket',
    requesters: 'requester',
    assets: 'asset',
  };
  const rowOf = (object: ObjectName, id: string, withTrashed = false): Row => {
    const row = stores[object].rows.get(id);
    if (!row || (row.deleted && !withTrashed))
      throw new FakeHttpError(404, 'You are not authorized to perform this action.');
    return row;
  };
  const objectOf = (ctx: Context): ObjectName => {
    const object = ctx.params.object as ObjectName;
    if (!(object in stores)) throw new FakeHttpError(404, `No route for ${ctx.path}`);
    return object;
  };

  router.get('/api/v2/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    ctx.body = { [singular[object]]: rowOf(object, ctx.params.id).record };
  });

  const bodyOf = (ctx: Context, allowed: Set<string>): Record<string, unknown> => {
    const body = ctx.request.body as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw validation('body', 'The request body must be a JSON object', 'invalid_json');
    for (const name of Object.keys(body))
      if (!allowed.has(name)) throw validation(name, 'Unexpected/invalid field in request', 'invalid_field');
    return body;
  };

  const stamp = (row: Row, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = wholeSecond(ms);
    row.visibleFromMs = visibleFromMs;
    row.record.updated_at = fsTime(ms);
  };

  const mergeCustom = (record: Record<string, unknown>, values: Record<string, unknown>) => {
    const { custom_fields: custom, ...rest } = values;
    if (custom !== undefined) {
      if (typeof custom !== 'object' || custom === null || Array.isArray(custom))
        throw validation('custom_fields', 'It should be a key/value pair');
      for (const name of Object.keys(custom))
        if (!customNames.includes(name))
          throw validation(name, 'Unexpected/invalid field in request', 'invalid_field');
      record.custom_fields = { ...(record.custom_fields as object), ...custom };
    }
    Object.assign(record, rest);
  };

  const createTicket = (values: Record<string, unknown>, ms: number): Row => {
    const id = stores.tickets.nextId();
    const record: Record<string, unknown> = {
      id,
      subject: null,
      description: null,
      description_text: null,
      status: 2,
      priority: 1,
      requester_id: 1000 + id,
      responder_id: null,
      group_id: null,
      type: 'Incident',
      source: 2,
      tags: [],
      deleted: false,
      custom_fields: Object.fromEntries(customNames.map((name) => [name, null])),
      created_at: fsTime(ms),
      updated_at: fsTime(ms),
    };
    const { email: _email, ...rest } = values;
    mergeCustom(record, rest);
    if (typeof record.description === 'string')
      record.description_text = String(record.description).replace(/<[^>]*>/g, '');
    return { record, modifiedMs: wholeSecond(ms) } as Row;
  };

  const createRequester = (values: Record<string, unknown>, ms: number): Row => {
    const id = stores.requesters.nextId();
    const record: Record<string, unknown> = {
      id,
      first_name: null,
      last_name: null,
      job_title: null,
      primary_email: null,
      secondary_emails: [],
      work_phone_number: null,
      mobile_phone_number: null,
      department_ids: [],
      active: true,
      is_agent: false,
      custom_fields: {},
      created_at: fsTime(ms),
      updated_at: fsTime(ms),
    };
    mergeCustom(record, values);
    return { record, modifiedMs: wholeSecond(ms) } as Row;
  };

  const createAsset = (values: Record<string, unknown>, ms: number): Row => {
    const id = 90_000 + stores.assets.nextId();
    const displayId = nextDisplayId++;
    const record: Record<string, unknown> = {
      id,
      display_id: displayId,
      name: null,
      description: null,
      asset_type_id: null,
      asset_tag: `ASSET-${displayId}`,
      impact: 'low',
      author_type: 'User',
      usage_type: 'permanent',
      user_id: null,
      location_id: null,
      department_id: null,
      agent_id: null,
      group_id: null,
      assigned_on: null,
      created_at: fsTime(ms),
      updated_at: fsTime(ms),
    };
    Object.assign(record, values);
    return { record, modifiedMs: wholeSecond(ms) } as Row;
  };

  const keyOf = (object: ObjectName, record: Record<string, unknown>) =>
    String(object === 'assets' ? record.display_id : record.id);
  const put = (object: ObjectName, row: Row) => {
    stores[object].rows.set(keyOf(object, row.record), row);
    return row;
  };

  router.post('/api/v2/:object', (ctx) => {
    const object = objectOf(ctx);
    let row: Row;
    if (object === 'tickets') {
      const body = bodyOf(ctx, ticketWritable);
      for (const name of ['subject', 'description', 'status', 'priority'])
        if (body[name] === undefined)
          throw validation(name, 'It should not be blank as this is a mandatory field', 'missing_field');
      if (body.email === undefined && body.requester_id === undefined)
        throw validation(
          'requester_id',
          'Please fill at least 1 of requester_id, phone, email fields as they are mandatory.',
          'missing_field',
        );
      row = createTicket(body, now());
    } else if (object === 'requesters') {
      const body = bodyOf(ctx, requesterWritable);
      for (const name of ['first_name', 'primary_email'])
        if (body[name] === undefined)
          throw validation(name, 'It should not be blank as this is a mandatory field', 'missing_field');
      row = createRequester(body, now());
    } else {
      const body = bodyOf(ctx, assetWritable);
      for (const name of ['name', 'asset_type_id'])
        if (body[name] === undefined)
          throw validation(name, 'It should not be blank as this is a mandatory field', 'missing_field');
      row = createAsset(body, now());
    }
    put(object, row);
    ctx.status = 201;
    ctx.body = { [singular[object]]: row.record };
  });

  router.put('/api/v2/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = rowOf(object, ctx.params.id);
    const allowed =
      object === 'tickets' ? ticketWritable : object === 'requesters' ? requesterWritable : assetWritable;
    const body = bodyOf(ctx, allowed);
    if (object === 'assets') Object.assign(row.record, body);
    else mergeCustom(row.record, body);
    stamp(row, now());
    ctx.body = { [singular[object]]: row.record };
  });

  const remove = (object: ObjectName, id: string, ms: number) => {
    const row = rowOf(object, id);
    if (object === 'requesters') {
      // Deactivated, not gone: listed with `active: false`.
      row.record.active = false;
      stamp(row, ms);
      return;
    }
    stores[object].remove(id, wholeSecond(ms));
    if (object === 'tickets') row.record.deleted = true;
    row.record.updated_at = fsTime(ms);
  };

  router.delete('/api/v2/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    remove(object, ctx.params.id, now());
    ctx.status = 204;
  });

  await fake.start();

  let n = 0;
  return asConformanceFake(fake, {
    seed: (object, times) =>
      times.map((ms) => {
        n += 1;
        const name = object as ObjectName;
        const row =
          name === 'tickets'
            ? createTicket(
                {
                  subject: `Printer ${n} jammed`,
                  description: `<div>Ticket ${n}</div>`,
                  status: 2,
                  priority: 1,
                  custom_fields: { category: 'Hardware', reference_code: `REF-${n}` },
                },
                ms,
              )
            : name === 'requesters'
              ? createRequester(
                  {
                    first_name: `First${n}`,
                    last_name: `Last${n}`,
                    primary_email: `r${n}@example.com`,
                    job_title: 'Analyst',
                  },
                  ms,
                )
              : createAsset({ name: `Laptop ${n}`, asset_type_id: 7, description: 'Seeded' }, ms);
        return keyOf(name, put(name, row).record);
      }),
    touch(object, id, modifiedMs, options) {
      stamp(rowOf(object as ObjectName, id), modifiedMs, options?.visibleFromMs);
    },
    remove: (object, id, atMs) => remove(object as ObjectName, id, atMs),
    stored: (object, id) => {
      const row = stores[object as ObjectName]?.rows.get(id);
      if (!row || row.deleted) return undefined;
      // A deactivated requester is kept, but deleted as far as the suite is concerned.
      if (object === 'requesters' && row.record.active === false) return undefined;
      return row.record;
    },
  });
}

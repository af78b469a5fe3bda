import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';

/**
 * A local stand-in for the Zendesk Support (Ticketing) API v2 as its reference describes it:
 * `GET /api/v2/{tickets,users,organizations}.json` with cursor pagination (`page[size]` ≤ 100,
 * `page[after]`, answering `{<resource>, meta: {has_more, after_cursor, before_cursor}, links}`);
 * cursor-based incremental exports `GET /api/v2/incremental/{tickets,users}/cursor.json` (first
 * `start_time` in Unix seconds, items changed at or after it, then `cursor`; `per_page` ≤ 1000;
 * `{<resource>, after_url, after_cursor, before_url, before_cursor, end_of_stream}`, `after_url`
 * given even at the end of the stream; items changed within the last minute left out; closed
 * tickets archived after 120 days, then missing from the ticket list but not the export; deleted
 * tickets listed with status `deleted`, deleted users with `active: false`); records wrapped in
 * their singular name for reads and writes (`{"ticket": {...}}`), create 201, update `PUT` 200,
 * delete 204 (a user's delete is soft and answers 200 with the user); `ticket_fields`,
 * `user_fields`, `organization_fields` lists (offset pagination, `next_page`); errors as
 * `{error, description}` (401: `{error: "Couldn't authenticate you"}`, 422 `RecordInvalid` with
 * `details`); `X-Rate-Limit`/`X-Rate-Limit-Remaining` on answers, `Retry-After` on a 429.
 */

const resources = { tickets: 'ticket', users: 'user', organizations: 'organization' } as const;
type Resource = keyof typeof resources;
type ZendeskRecord = Record<string, unknown> & { id: number };
interface Row {
  record: ZendeskRecord;
  modifiedMs: number;
  deleted?: boolean;
}

/** A 422 `RecordInvalid`, with the per-field `details` Zendesk gives. */
class RecordInvalid extends FakeHttpError {
  constructor(
    readonly field: string,
    readonly description: string,
  ) {
    super(422, 'Record validation errors', 'RecordInvalid');
  }
}

const zendeskTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const options = (...pairs: [string, string][]) =>
  pairs.map(([value, name], i) => ({ id: 1000 + i, name, raw_name: name, value, default: false }));

const fieldLists: Record<string, Record<string, unknown>[]> = {
  ticket_fields: [
    { id: 1, type: 'subject', title: 'Subject', active: true, required: false, removable: false },
    { id: 2, type: 'description', title: 'Description', active: true, required: true, removable: false },
    { id: 3, type: 'status', title: 'Status', active: true, required: false, removable: false },
    { id: 4, type: 'tickettype', title: 'Type', active: true, required: false, removable: false },
    { id: 5, type: 'priority', title: 'Priority', active: true, required: false, removable: false },
    { id: 6, type: 'assignee', title: 'Assignee', active: true, required: true, removable: false },
    {
      id: 360001,
      type: 'tagger',
      title: 'Plan',
      active: true,
      required: false,
      removable: true,
      custom_field_options: options(['plan_gold', 'Gold'], ['plan_silver', 'Silver']),
    },
    { id: 360002, type: 'checkbox', title: 'VIP', active: true, required: false, removable: true },
    { id: 360003, type: 'decimal', title: 'Contract value', active: true, required: true, removable: true },
  ],
  user_fields: [
    {
      id: 7001,
      key: 'plan_tier',
      type: 'dropdown',
      title: 'Plan tier',
      active: true,
      system: false,
      custom_field_options: options(['gold', 'Gold'], ['silver', 'Silver']),
    },
    { id: 7002, key: 'renewal_date', type: 'date', title: 'Renewal date', active: true, system: false },
  ],
  organization_fields: [
    { id: 8001, key: 'seats', type: 'integer', title: 'Seats', active: true, system: false },
    { id: 8002, key: 'notes_long', type: 'textarea', title: 'Long notes', active: true, system: false },
  ],
};

const encodeCursor = (row: Row) => Buffer.from(`${row.modifiedMs}:${row.record.id}`).toString('base64url');
function decodeCursor(cursor: string): [number, number] {
  const [ms, id] = Buffer.from(cursor, 'base64url').toString('utf8').split(':').map(Number);
  if (!Number.isFinite(ms) || !Number.isFinite(id)) {
    throw new FakeHttpError(400, 'The cursor is not valid', 'InvalidPaginationParameter');
  }
  return [ms, id];
}

export async function startFakeZendesk(): Promise<ConformanceFake> {
  const rows: Record<Resource, Map<number, Row>> = {
    tickets: new Map(),
    users: new Map(),
    organizations: new Map(),
  };
  let nextId = 1;

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) =>
      error.status === 401
        ? { error: "Couldn't authenticate you" }
        : error.status === 429
          ? {
              error: 'APIRateLimitExceeded',
              description: 'Number of allowed API requests per minute exceeded',
            }
          : {
              error: error.code ?? (error.status === 404 ? 'RecordNotFound' : 'InvalidValue'),
              description: error.message,
              ...(error instanceof RecordInvalid && {
                details: { [error.field]: [{ description: error.description, error: 'BlankValue' }] },
              }),
            },
    rateLimitHeaders: () => ({ 'X-Rate-Limit': '700', 'X-Rate-Limit-Remaining': '0' }),
  });

  const router = fake.router;
  router.use(async (ctx, next) => {
    ctx.set('X-Rate-Limit', '700');
    ctx.set('X-Rate-Limit-Remaining', '699');
    await next();
  });

  const resourceOf = (name: string): Resource => {
    if (!Object.hasOwn(resources, name)) throw new FakeHttpError(404, 'Not found', 'InvalidEndpoint');
    return name as Resource;
  };
  const rowOf = (resource: Resource, id: string): Row => {
    const row = rows[resource].get(Number(id));
    if (!row || (row.deleted && resource !== 'users'))
      throw new FakeHttpError(404, 'Not found', 'RecordNotFound');
    return row;
  };
  const origin = (ctx: Context) => `${ctx.protocol}://${ctx.host}`;
  const shaped = (row: Row): ZendeskRecord => ({ ...row.record, updated_at: zendeskTime(row.modifiedMs) });
  const stamp = (row: Row, ms: number) => {
    row.modifiedMs = ms;
    row.record.updated_at = zendeskTime(ms);
  };

  function created(resource: Resource, values: Record<string, unknown>, ms: number, origin: string): Row {
    const id = nextId++;
    const common = {
      id,
      url: `${origin}/api/v2/${resource}/${id}.json`,
      external_id: null,
      created_at: zendeskTime(ms),
      updated_at: zendeskTime(ms),
    };
    const defaults: Record<Resource, Record<string, unknown>> = {
      tickets: {
        type: null,
        subject: null,
        description: null,
        priority: null,
        status: 'new',
        requester_id: 9001,
        submitter_id: 9001,
        assignee_id: null,
        organization_id: null,
        group_id: null,
        tags: [],
        custom_fields: [],
      },
      users: { name: null, email: null, role: 'end-user', active: true, user_fields: {}, tags: [] },
      organizations: {
        name: null,
        domain_names: [],
        details: null,
        notes: null,
        organization_fields: {},
        tags: [],
      },
    };
    const record = { ...defaults[resource], ...values, ...common } as ZendeskRecord;
    const row = { record, modifiedMs: ms };
    rows[resource].set(id, row);
    return row;
  }

  /** A write's body: the record under its singular name, checked as Zendesk validates it. */
  function writeBody(resource: Resource, body: unknown, creating: boolean): Record<string, unknown> {
    const one = resources[resource];
    const values = (body as Record<string, unknown> | undefined)?.[one];
    if (!values || typeof values !== 'object' || Array.isArray(values)) {
      throw new FakeHttpError(400, `Parameter ${one} is required`, 'InvalidValue');
    }
    const record = { ...(values as Record<string, unknown>) };
    const blank = (name: string) =>
      record[name] === undefined || record[name] === null || record[name] === '';
    const invalid = (field: string, description: string) => new RecordInvalid(field, description);
    if (creating && resource === 'tickets') {
      const comment = record.comment as { body?: unknown; html_body?: unknown } | undefined;
      if (!comment?.body && !comment?.html_body) throw invalid('description', 'Description: cannot be blank');
    }
    if (creating && resource !== 'tickets' && blank('name')) throw invalid('name', 'Name: cannot be blank');
    if (resource === 'organizations' && !blank('name')) {
      for (const row of rows.organizations.values()) {
        if (!row.deleted && row.record.name === record.name)
          throw invalid('name', 'Name: has already been taken');
      }
    }
    for (const readOnly of ['id', 'url', 'created_at', 'updated_at']) delete record[readOnly];
    if (resource === 'tickets' && record.comment) {
      const comment = record.comment as { body?: string; html_body?: string };
      if (creating) record.description = comment.body ?? comment.html_body;
      delete record.comment;
    }
    return record;
  }

  // Cursor-based incremental exports (tickets and users).
  router.get('/api/v2/incremental/:resource/cursor.json', (ctx) => {
    const resource = resourceOf(ctx.params.resource);
    if (resource === 'organizations') throw new FakeHttpError(404, 'Not found', 'InvalidEndpoint');
    const perPage = ctx.query.per_page === undefined ? 1000 : Number(ctx.query.per_page);
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > 1000) {
      throw new FakeHttpError(400, 'per_page must be between 1 and 1000', 'InvalidPaginationParameter');
    }
    let after: (row: Row) => boolean;
    if (typeof ctx.query.cursor === 'string') {
      const [ms, id] = decodeCursor(ctx.query.cursor);
      after = (row) => row.modifiedMs > ms || (row.modifiedMs === ms && row.record.id > id);
    } else if (typeof ctx.query.start_time === 'string' && /^\d+$/.test(ctx.query.start_time)) {
      const start = Number(ctx.query.start_time) * 1000;
      if (start > Date.now() - 60_000) {
        throw new FakeHttpError(
          400,
          'Too recent start_time. Use a start_time older than 1 minute',
          'InvalidValue',
        );
      }
      after = (row) => row.modifiedMs >= start;
    } else {
      throw new FakeHttpError(400, 'start_time or cursor is required', 'InvalidValue');
    }
    const horizon = Date.now() - 60_000;
    const listed = [...rows[resource].values()]
      .filter((row) => after(row) && row.modifiedMs <= horizon)
      .sort((a, b) => a.modifiedMs - b.modifiedMs || a.record.id - b.record.id);
    const page = listed.slice(0, perPage);
    const last = page.at(-1);
    const cursor =
      last !== undefined
        ? encodeCursor(last)
        : typeof ctx.query.cursor === 'string'
          ? ctx.query.cursor
          : Buffer.from(`${Number(ctx.query.start_time) * 1000 - 1}:0`).toString('base64url');
    const base = `${origin(ctx)}/api/v2/incremental/${resource}/cursor.json`;
    ctx.body = {
      [resource]: page.map((row) =>
        row.deleted && resource === 'tickets' ? { ...shaped(row), status: 'deleted' } : shaped(row),
      ),
      after_url: `${base}?cursor=${cursor}&per_page=${perPage}`,
      after_cursor: cursor,
      before_url: null,
      before_cursor: null,
      end_of_stream: listed.length <= perPage,
    };
  });

  router.get('/api/v2/:file', (ctx) => {
    const name = /^(\w+)\.json$/.exec(ctx.params.file)?.[1] ?? '';
    if (Object.hasOwn(fieldLists, name)) {
      ctx.body = {
        [name]: fieldLists[name],
        next_page: null,
        previous_page: null,
        count: fieldLists[name].length,
      };
      return;
    }
    const resource = resourceOf(name);
    // Closed tickets are archived 120 days after their last change: lists leave them out.
    const archived = (row: Row) =>
      resource === 'tickets' &&
      row.record.status === 'closed' &&
      row.modifiedMs < Date.now() - 120 * 86_400_000;
    const live = [...rows[resource].values()]
      .filter((row) => !row.deleted && !archived(row))
      .sort((a, b) => a.record.id - b.record.id);
    const size = ctx.query['page[size]'];
    if (size === undefined) {
      // Offset pagination, 100 a page, when no page[size] asks for cursors.
      const pageNumber = Number(ctx.query.page ?? 1);
      const page = live.slice((pageNumber - 1) * 100, pageNumber * 100);
      ctx.body = {
        [resource]: page.map(shaped),
        next_page:
          pageNumber * 100 < live.length
            ? `${origin(ctx)}/api/v2/${resource}.json?page=${pageNumber + 1}`
            : null,
        previous_page:
          pageNumber > 1 ? `${origin(ctx)}/api/v2/${resource}.json?page=${pageNumber - 1}` : null,
        count: live.length,
      };
      return;
    }
    const pageSize = Number(size);
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100) {
      throw new FakeHttpError(400, 'page[size] must be between 1 and 100', 'InvalidPaginationParameter');
    }
    const afterId =
      typeof ctx.query['page[after]'] === 'string' ? decodeCursor(ctx.query['page[after]'])[1] : undefined;
    const following = live.filter((row) => afterId === undefined || row.record.id > afterId);
    const page = following.slice(0, pageSize);
    const hasMore = following.length > page.length;
    const after = page.length ? encodeCursor(page.at(-1)!) : null;
    const before = page.length ? encodeCursor(page[0]) : null;
    ctx.body = {
      [resource]: page.map(shaped),
      meta: { has_more: hasMore, after_cursor: after, before_cursor: before },
      links: {
        prev: before
          ? `${origin(ctx)}/api/v2/${resource}.json?page[size]=${pageSize}&page[before]=${before}`
          : null,
        next: hasMore
          ? `${origin(ctx)}/api/v2/${resource}.json?page[size]=${pageSize}&page[after]=${after}`
          : null,
      },
    };
  });

  router.get('/api/v2/:resource/:file', (ctx) => {
    const resource = resourceOf(ctx.params.resource);
    const id = /^(\d+)\.json$/.exec(ctx.params.file)?.[1];
    if (!id) throw new FakeHttpError(404, 'Not found', 'InvalidEndpoint');
    ctx.body = { [resources[resource]]: shaped(rowOf(resource, id)) };
  });

  router.post('/api/v2/:file', (ctx) => {
    const resource = resourceOf(/^(\w+)\.json$/.exec(ctx.params.file)?.[1] ?? '');
    const row = created(resource, writeBody(resource, ctx.request.body, true), Date.now(), origin(ctx));
    ctx.status = 201;
    ctx.body = {
      [resources[resource]]: shaped(row),
      ...(resource === 'tickets' && { audit: { id: nextId++, ticket_id: row.record.id, events: [] } }),
    };
  });

  router.put('/api/v2/:resource/:file', (ctx) => {
    const resource = resourceOf(ctx.params.resource);
    const id = /^(\d+)\.json$/.exec(ctx.params.file)?.[1];
    if (!id) throw new FakeHttpError(404, 'Not found', 'InvalidEndpoint');
    const row = rowOf(resource, id);
    if (row.deleted) throw new FakeHttpError(404, 'Not found', 'RecordNotFound');
    Object.assign(row.record, writeBody(resource, ctx.request.body, false));
    stamp(row, Date.now());
    ctx.body = {
      [resources[resource]]: shaped(row),
      ...(resource === 'tickets' && { audit: { id: nextId++, ticket_id: row.record.id, events: [] } }),
    };
  });

  router.delete('/api/v2/:resource/:file', (ctx) => {
    const resource = resourceOf(ctx.params.resource);
    const id = /^(\d+)\.json$/.exec(ctx.params.file)?.[1];
    if (!id) throw new FakeHttpError(404, 'Not found', 'InvalidEndpoint');
    const row = rowOf(resource, id);
    if (row.deleted) throw new FakeHttpError(404, 'Not found', 'RecordNotFound');
    row.deleted = true;
    stamp(row, Date.now());
    if (resource === 'users') {
      // A user's delete is soft: the user stays, inactive.
      row.record.active = false;
      ctx.body = { user: shaped(row) };
      return;
    }
    ctx.status = 204;
  });

  await fake.start();

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
    seed(object, modifiedTimes) {
      const resource = resourceOf(object);
      return modifiedTimes.map((ms) => {
        const values: Record<string, unknown> =
          resource === 'tickets'
            ? { subject: `Ticket ${nextId}`, description: 'Seeded', status: 'open' }
            : { name: `${resources[resource]} ${nextId}` };
        return String(created(resource, values, ms, fake.url).record.id);
      });
    },
    touch(object, id, modifiedMs) {
      // Deleted rows too: a deletion can be dated like any change.
      const row = rows[resourceOf(object)].get(Number(id));
      if (!row) throw new Error(`no ${object} ${id}`);
      stamp(row, modifiedMs);
    },
    stored(object, id) {
      const row = rows[resourceOf(object)].get(Number(id));
      return row && !row.deleted ? row.record : undefined;
    },
    stop: () => fake.stop(),
  };
}

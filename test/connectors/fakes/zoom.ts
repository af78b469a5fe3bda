import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  asConformanceFake,
  bearerCredential,
  FakeHttpError,
  FakeProvider,
  RecordStore,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for Zoom's REST API v2 (https://developers.zoom.us/docs/api/), written from its
 * reference (users, meetings and webinars; pagination https://developers.zoom.us/docs/api/pagination;
 * rate limits https://developers.zoom.us/docs/api/rate-limits; errors
 * https://developers.zoom.us/docs/api/errors):
 *
 * - Under `/v2` of https://api.zoom.us (the fake's `url` is the origin, as the catalog's base URL),
 *   OAuth access tokens as `Authorization: Bearer`. `me` stands for the token's user
 *   wherever a `{userId}` goes (a user's id or email address work too).
 * - `GET /v2/users?status=active&page_size=&next_page_token=`, `GET /v2/users/{userId}/meetings?
 *   type=scheduled&page_size=&next_page_token=`, `GET /v2/users/{userId}/webinars?page_size=&
 *   next_page_token=`: `page_size` defaults to 30, at most 300 (a larger one is served as 300); the
 *   answer carries `page_size`, `total_records` and `next_page_token`, an empty string on the last
 *   page; the token continues the same query. None of them filters or sorts by modification, and no
 *   user, meeting or webinar carries a modification time (`created_at` only): an edit is seen only
 *   by listing again. A deleted meeting, webinar or user is gone from the listing, listed nowhere.
 *   `from`/`to` (dates) on the meetings listing bound the meeting's `start_time`, not its changes.
 * - Times are ISO 8601 UTC to the second without milliseconds (`2024-01-01T10:00:00Z`). Meeting and
 *   webinar ids are integers; their `uuid` is an opaque string.
 * - `POST /v2/users/{userId}/meetings` (201, the meeting), `GET|PATCH|DELETE /v2/meetings/{id}`
 *   (`PATCH` and `DELETE` answer 204 with no body, `PATCH` changes only the members sent);
 *   the same for webinars under `/v2/users/{userId}/webinars` and `/v2/webinars/{id}`.
 *   Users are read here (creating one sends an invitation and takes a paid seat).
 * - Errors `{code, message}` (124 invalid access token, 1001 user does not exist, 3001 meeting or
 *   webinar does not exist, 300 validation failed with `errors: [{field, message}]`). Rate limits
 *   per second by API category on a Pro account (light 30, medium 20, heavy 10); a 429 answers
 *   `{code: 429, message}` with `X-RateLimit-Category` and `X-RateLimit-Type: QPS` and no
 *   `Retry-After` (the daily limits add one).
 */

type Record_ = Record<string, unknown> & { id: string | number };
type ZoomObject = 'users' | 'meetings' | 'webinars';

const PAGE_MAX = 300;
const PAGE_DEFAULT = 30;
const ME = { id: 'KDcuGIm1QgePTO8WbOqwIQ', email: 'owner@example.com' };
/** Requests a second per category on a Pro account. */
const PER_SECOND = { Light: 30, Medium: 20, Heavy: 10 } as const;
type Category = keyof typeof PER_SECOND;

const zoomTime = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

function zoomError(
  status: number,
  code: number,
  message: string,
  errors?: { field: string; message: string }[],
) {
  return Object.assign(new FakeHttpError(status, message, String(code)), { errors });
}

export async function startFakeZoom(): Promise<ConformanceFake> {
  const stores: Record<ZoomObject, RecordStore<Record_>> = {
    users: new RecordStore(),
    meetings: new RecordStore(),
    webinars: new RecordStore(),
  };
  /** The version a listing shows until a late edit becomes visible. */
  const shown: Record<ZoomObject, Map<string, Record_>> = {
    users: new Map(),
    meetings: new Map(),
    webinars: new Map(),
  };
  const calls: Record<Category, number[]> = { Light: [], Medium: [], Heavy: [] };
  let nextMeetingId = 81_234_567_890;
  /** Each record's place in creation order, which a page token remembers. */
  const ordinal = new Map<string, number>();
  let created = 0;

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => {
      if (error.status === 401) return { code: 124, message: 'Invalid access token.' };
      if (error.status === 429)
        return {
          code: 429,
          message: 'You have reached the maximum per-second rate limit for this API. Try again later.',
        };
      const errors = (error as { errors?: unknown }).errors;
      return {
        code: Number(error.code ?? error.status),
        message: error.message,
        ...(errors ? { errors } : {}),
      };
    },
    rateLimitHeaders: () => ({ 'X-RateLimit-Category': 'Medium', 'X-RateLimit-Type': 'QPS' }),
  });
  const now = () => fake.now();
  const router = fake.router;

  /** The per-second budget of the endpoint's category, counted on real time. */
  const limited =
    (category: Category) =>
    async (ctx: Context, next: () => Promise<unknown>): Promise<void> => {
      const at = Date.now();
      const log = calls[category];
      while (log.length && log[0] <= at - 1000) log.shift();
      log.push(at);
      if (log.length > PER_SECOND[category])
        throw new FakeHttpError(429, 'rate limited', '429', {
          'X-RateLimit-Category': category,
          'X-RateLimit-Type': 'QPS',
        });
      await next();
    };

  const userOf = (ctx: Context): Record_ => {
    const key = ctx.params.userId;
    if (key === 'me') return stores.users.get(ME.id)!.record;
    const user = stores.users.live().find((row) => row.record.id === key || row.record.email === key);
    if (!user) throw zoomError(404, 1001, `User does not exist: ${key}.`);
    return user.record;
  };

  const createUser = (ms: number, values: Record<string, unknown> = {}): Record_ => {
    const n = stores.users.nextId();
    const id = values.id ? String(values.id) : `u${String(n).padStart(6, '0')}Zm${n.toString(36)}Q`;
    const record: Record_ = {
      id,
      first_name: `First${n}`,
      last_name: `Last${n}`,
      display_name: `First${n} Last${n}`,
      email: `user${n}@example.com`,
      type: 1,
      pmi: 5_000_000_000 + n,
      timezone: 'UTC',
      verified: 1,
      dept: '',
      created_at: zoomTime(ms),
      user_created_at: zoomTime(ms),
      last_login_time: zoomTime(ms),
      last_client_version: '5.17.11.34827(mac)',
      language: 'en-US',
      phone_number: '',
      status: 'active',
      role_id: '2',
      ...values,
    };
    stores.users.put(id, record, ms);
    ordinal.set(id, created++);
    return record;
  };
  createUser(Date.UTC(2023, 0, 1), {
    id: ME.id,
    email: ME.email,
    first_name: 'Owner',
    last_name: 'Account',
    type: 2,
    role_id: '0',
  });

  const createEvent = (
    object: 'meetings' | 'webinars',
    hostId: string,
    values: Record<string, unknown>,
    ms: number,
  ): Record_ => {
    const id = nextMeetingId++;
    const webinar = object === 'webinars';
    const record: Record_ = {
      uuid: Buffer.from(`event-${id}`).toString('base64'),
      id,
      host_id: hostId,
      topic: webinar ? `Webinar ${id}` : `Meeting ${id}`,
      type: webinar ? 5 : 2,
      start_time: zoomTime(ms + 86_400_000),
      duration: 30,
      timezone: 'UTC',
      agenda: '',
      created_at: zoomTime(ms),
      join_url: `https://us02web.zoom.us/${webinar ? 'w' : 'j'}/${id}`,
      ...values,
    };
    stores[object].put(String(id), record, ms);
    ordinal.set(String(id), created++);
    return record;
  };

  /** One page of a listing: records in creation order after the token's position. */
  const list = (ctx: Context, object: ZoomObject, rows: Record_[]) => {
    const asked = ctx.query.page_size === undefined ? PAGE_DEFAULT : Number(ctx.query.page_size);
    if (!Number.isInteger(asked) || asked < 1)
      throw zoomError(400, 300, 'Validation Failed.', [{ field: 'page_size', message: 'Invalid field.' }]);
    fake.logListing(ctx, { object, pageSize: asked, maxPageSize: PAGE_MAX });
    const size = Math.min(asked, PAGE_MAX);
    let after = -1;
    const token = ctx.query.next_page_token;
    if (typeof token === 'string' && token !== '') {
      const position = /^zm([0-9a-z]+)$/.exec(token);
      if (!position) throw zoomError(400, 300, 'The next page token is invalid or expired.');
      after = parseInt(position[1], 36);
    }
    const rest = rows
      .filter((record) => ordinal.get(String(record.id))! > after)
      .sort((a, b) => ordinal.get(String(a.id))! - ordinal.get(String(b.id))!);
    const page = rest.slice(0, size);
    const last = page.at(-1);
    return {
      page_size: size,
      total_records: rows.length,
      next_page_token: rest.length > size && last ? `zm${ordinal.get(String(last.id))!.toString(36)}` : '',
      page,
    };
  };

  /** Live records as a listing shows them now (an edit not yet visible shows its earlier version). */
  const visible = (object: ZoomObject): Record_[] =>
    stores[object]
      .live()
      .map((row) =>
        (row.visibleFromMs ?? row.modifiedMs) <= now()
          ? row.record
          : shown[object].get(String(row.record.id)),
      )
      .filter((record): record is Record_ => record !== undefined);

  router.get('/v2/users', limited('Medium'), (ctx) => {
    const status = ctx.query.status === undefined ? 'active' : String(ctx.query.status);
    if (!['active', 'inactive', 'pending'].includes(status))
      throw zoomError(400, 300, 'Validation Failed.', [{ field: 'status', message: 'Invalid field.' }]);
    const { page, ...meta } = list(
      ctx,
      'users',
      visible('users').filter((user) => user.status === status),
    );
    ctx.body = {
      page_count: Math.max(1, Math.ceil(meta.total_records / meta.page_size)),
      page_number: 1,
      ...meta,
      users: page,
    };
  });
  router.get('/v2/users/:userId', limited('Light'), (ctx) => {
    ctx.body = userOf(ctx);
  });

  /** Members Zoom sets itself. */
  const readOnly = ['id', 'uuid', 'host_id', 'created_at', 'join_url', 'start_url'];

  const edit = (object: ZoomObject, id: string, record: Record_, ms: number, visibleFromMs?: number) => {
    const row = stores[object].get(id);
    if (!row) throw new Error(`no ${object} ${id}`);
    if (visibleFromMs !== undefined) shown[object].set(id, row.record);
    else shown[object].delete(id);
    stores[object].put(id, record, ms, visibleFromMs);
  };

  /** What a listing item of a meeting or webinar carries (the full object adds settings). */
  const listItem = (record: Record_) => {
    const { settings: _settings, password: _password, ...item } = record;
    return item;
  };

  for (const object of ['meetings', 'webinars'] as const) {
    const singular = object === 'meetings' ? 'Meeting' : 'Webinar';
    const eventOf = (id: string): Record_ => {
      const row = stores[object].get(id);
      if (!row) throw zoomError(404, 3001, `${singular} does not exist: ${id}.`);
      return row.record;
    };

    router.get(`/v2/users/:userId/${object}`, limited('Medium'), (ctx) => {
      const host = userOf(ctx);
      if (object === 'meetings') {
        const type = ctx.query.type === undefined ? 'scheduled' : String(ctx.query.type);
        if (!['scheduled', 'live', 'upcoming', 'upcoming_meetings', 'previous_meetings'].includes(type))
          throw zoomError(400, 300, 'Validation Failed.', [{ field: 'type', message: 'Invalid field.' }]);
      }
      // `from`/`to` bound the start time (dates, both inclusive), not a modification.
      const from = typeof ctx.query.from === 'string' ? ctx.query.from : undefined;
      const to = typeof ctx.query.to === 'string' ? ctx.query.to : undefined;
      const rows = visible(object).filter(
        (record) =>
          record.host_id === host.id &&
          (!from || String(record.start_time).slice(0, 10) >= from) &&
          (!to || String(record.start_time).slice(0, 10) <= to),
      );
      const { page, ...meta } = list(ctx, object, rows);
      ctx.body = { ...meta, ...(from && { from }), ...(to && { to }), [object]: page.map(listItem) };
    });

    router.post(`/v2/users/:userId/${object}`, limited('Light'), (ctx) => {
      const host = userOf(ctx);
      const body = (ctx.request.body ?? {}) as Record<string, unknown>;
      if (body.topic !== undefined && (typeof body.topic !== 'string' || body.topic.length > 200))
        throw zoomError(400, 300, 'Validation Failed.', [{ field: 'topic', message: 'Invalid field.' }]);
      const values = Object.fromEntries(Object.entries(body).filter(([name]) => !readOnly.includes(name)));
      const record = createEvent(object, String(host.id), { settings: {}, ...values }, now());
      ctx.status = 201;
      ctx.body = record;
    });

    router.get(`/v2/${object}/:id`, limited('Light'), (ctx) => {
      ctx.body = eventOf(ctx.params.id);
    });

    router.patch(`/v2/${object}/:id`, limited('Light'), (ctx) => {
      const record = eventOf(ctx.params.id);
      const body = (ctx.request.body ?? {}) as Record<string, unknown>;
      if (body.topic !== undefined && (typeof body.topic !== 'string' || body.topic.length > 200))
        throw zoomError(400, 300, 'Validation Failed.', [{ field: 'topic', message: 'Invalid field.' }]);
      // Read-only members sent back are ignored, as Zoom ignores what it does not take.
      const values = Object.fromEntries(Object.entries(body).filter(([name]) => !readOnly.includes(name)));
      edit(object, ctx.params.id, { ...record, ...values }, now());
      ctx.status = 204;
    });

    router.delete(`/v2/${object}/:id`, limited('Light'), (ctx) => {
      eventOf(ctx.params.id);
      stores[object].rows.delete(ctx.params.id);
      ctx.status = 204;
    });
  }

  await fake.start();

  return asConformanceFake(fake, {
    seed: (object, times) =>
      times.map((ms) =>
        object === 'users'
          ? String(createUser(ms).id)
          : String(createEvent(object as 'meetings' | 'webinars', ME.id, { settings: {} }, ms).id),
      ),
    touch(object, id, modifiedMs, options) {
      const row = stores[object as ZoomObject].get(id);
      if (!row) throw new Error(`no ${object} ${id}`);
      // An edit in Zoom's app: nothing in the record says when, only what changed.
      const change = object === 'users' ? { dept: `Dept ${modifiedMs}` } : { topic: `Edited ${modifiedMs}` };
      edit(object as ZoomObject, id, { ...row.record, ...change }, modifiedMs, options?.visibleFromMs);
    },
    remove(object, id) {
      // Deleted in Zoom: gone, listed nowhere.
      stores[object as ZoomObject].rows.delete(id);
    },
    stored: (object, id) => stores[object as ZoomObject].get(id)?.record,
  });
}

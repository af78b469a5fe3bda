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
 * A local stand-in for Calendly's API v2 (https://developer.calendly.com/api-docs: List Events,
 * Get Event, Cancel Event, List User's Event Types, Get Event Type, Create Event Type, Update Event
 * Type; errors; pagination), answering as it documents:
 *
 * - OAuth bearer tokens; a stale one answers 401 `{title: "Unauthenticated", message}`.
 * - Resources are named by `uri` (`https://api.calendly.com/scheduled_events/{uuid}`): there is no
 *   separate id field, and single-resource paths take the uuid (the URI's last segment).
 * - `GET /scheduled_events` needs `organization` (an organization URI, admin tokens), `user` or
 *   `group`; filters `status` (`active` | `canceled`), `min_start_time` (inclusive),
 *   `max_start_time` (exclusive), `invitee_email`; `sort=start_time:asc|desc` (default ascending).
 *   Nothing filters or sorts by modification time.
 * - `GET /event_types` needs `organization` or `user`; `active=true|false` (both when absent),
 *   `sort=name:asc|desc` (default name ascending). Deleted event types are left out.
 * - Lists answer `{collection, pagination: {count, next_page, previous_page, next_page_token,
 *   previous_page_token}}`; `count` 1 to 100 (default 20); `next_page` is the whole next URL on
 *   api.calendly.com, both null on the last page.
 * - Times are ISO 8601 UTC with microseconds (`2020-01-02T03:04:05.678123Z`); `updated_at` changes
 *   with any edit, and a cancellation sets `status: canceled` with a `cancellation` member.
 * - `POST /scheduled_events/{uuid}/cancellation {reason?}` (201 `{resource}`; 403 when already
 *   canceled). Scheduled events are not created or edited through the API (invitees book them).
 * - `POST /event_types {name, duration?, owner?, description?, color?, active?, locale?}` (201
 *   `{resource}`), `PATCH /event_types/{uuid}` (200 `{resource}`, one-on-one `solo` types only;
 *   omitted members keep their value; `description` is read back as `description_plain`). No
 *   endpoint deletes an event type.
 * - Errors `{title, message, details?: [{parameter, message}]}`; a 429 carries
 *   `X-RateLimit-Limit`, `-Remaining` and `-Reset` (seconds until the limit resets).
 */

type Json = Record<string, unknown>;
type Row = StoredRecord<Json>;

const API = 'https://api.calendly.com';
const ORGANIZATION = `${API}/organizations/ORGAAAAAAAAAAAA1`;
const USER = `${API}/users/USRAAAAAAAAAAAA1`;
const PAGE_DEFAULT = 20;
const PAGE_MAX = 100;

const titles: Record<number, string> = {
  400: 'Invalid Argument',
  401: 'Unauthenticated',
  403: 'Permission Denied',
  404: 'Resource Not Found',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Calendly writes microseconds; this fake keeps milliseconds and pads them. */
const calendlyTime = (ms: number) => `${new Date(ms).toISOString().slice(0, 23)}000Z`;

function invalid(parameter: string, message: string): FakeHttpError {
  return Object.assign(new FakeHttpError(400, 'The supplied parameters are invalid.'), {
    details: [{ parameter, message }],
  });
}

export { ORGANIZATION as CALENDLY_ORGANIZATION, USER as CALENDLY_USER };

export async function startFakeCalendly(): Promise<ConformanceFake> {
  const events = new RecordStore<Json>();
  const eventTypes = new RecordStore<Json>();
  let counter = 0;

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => ({
      title: titles[error.status] ?? 'Error',
      message:
        error.status === 401
          ? 'The access token is invalid'
          : error.status === 429
            ? 'Rate limit exceeded. Please retry after the time given in X-RateLimit-Reset.'
            : error.message,
      ...((error as { details?: unknown }).details !== undefined && {
        details: (error as { details?: unknown }).details,
      }),
    }),
    rateLimitHeaders: () => ({
      'X-RateLimit-Limit': '500',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '1',
    }),
  });
  const now = () => fake.now();
  const router = fake.router;

  const uuidOf = (prefix: string) => `${prefix}${String(++counter).padStart(13, '0')}`;
  const notFound = () => new FakeHttpError(404, 'The server could not find the requested resource.');
  const visible = (row: Row) => (row.visibleFromMs ?? row.modifiedMs) <= now();

  /** The scope every listing needs: this fake's organization or user. */
  const scopeOf = (ctx: Context, allowed: string[]) => {
    const given = allowed.filter((name) => ctx.query[name] !== undefined);
    if (!given.length) throw invalid(allowed.join(' or '), `one of ${allowed.join(', ')} is required`);
    for (const name of given) {
      const value = String(ctx.query[name]);
      const expected = name === 'organization' ? ORGANIZATION : name === 'user' ? USER : undefined;
      if (expected && value !== expected)
        throw new FakeHttpError(403, 'You do not have permission to access this resource.');
    }
  };

  const countOf = (ctx: Context, object: string) => {
    const text = ctx.query.count;
    const count = text === undefined ? PAGE_DEFAULT : Number(text);
    if (!Number.isInteger(count) || count < 1 || count > PAGE_MAX)
      throw invalid('count', `must be between 1 and ${PAGE_MAX}`);
    fake.logListing(ctx, { object, pageSize: count, maxPageSize: PAGE_MAX });
    return count;
  };

  /** One page of `rows`, sorted by `key` (then creation), after the position in `page_token`. */
  const page = (
    ctx: Context,
    path: string,
    rows: Row[],
    key: (row: Row) => string,
    descending: boolean,
    count: number,
  ) => {
    type Position = [string, number];
    let after: Position | undefined;
    if (ctx.query.page_token !== undefined) {
      try {
        after = JSON.parse(
          Buffer.from(String(ctx.query.page_token), 'base64url').toString('utf8'),
        ) as Position;
      } catch {
        throw invalid('page_token', 'is invalid');
      }
    }
    const order = (a: Position, b: Position) =>
      (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0) * (descending ? -1 : 1) || a[1] - b[1];
    const sorted = rows
      .map((row) => ({ row, at: [key(row), Number(row.record.position ?? 0)] as Position }))
      .sort((a, b) => order(a.at, b.at))
      .filter(({ at }) => !after || order(at, after) > 0);
    const shown = sorted.slice(0, count);
    const token =
      sorted.length > count ? Buffer.from(JSON.stringify(shown.at(-1)!.at)).toString('base64url') : null;
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(ctx.query))
      if (name !== 'page_token') for (const item of [value].flat()) query.append(name, String(item));
    if (token) query.set('page_token', token);
    return {
      collection: shown.map(({ row }) => {
        const { position: _position, ...record } = row.record;
        return record;
      }),
      pagination: {
        count: shown.length,
        next_page: token ? `${API}${path}?${query.toString()}` : null,
        previous_page: null,
        next_page_token: token,
        previous_page_token: null,
      },
    };
  };
  const present = (row: Row) => {
    const { position: _position, ...record } = row.record;
    return record;
  };

  // ---- scheduled events ----

  const newEvent = (ms: number): Row => {
    const uuid = uuidOf('EVT');
    const start = ms + 86_400_000;
    const record: Json = {
      uri: `${API}/scheduled_events/${uuid}`,
      name: `Intro call ${counter}`,
      meeting_notes_plain: null,
      meeting_notes_html: null,
      status: 'active',
      start_time: calendlyTime(start),
      end_time: calendlyTime(start + 1_800_000),
      event_type: `${API}/event_types/ETAAAAAAAAAAAAA1`,
      location: { type: 'google_conference', status: 'pushed', join_url: `https://meet.google.com/${uuid}` },
      invitees_counter: { total: 1, active: 1, limit: 1 },
      created_at: calendlyTime(ms),
      updated_at: calendlyTime(ms),
      event_memberships: [{ user: USER, user_email: 'ada@example.com', user_name: 'Ada Lovelace' }],
      event_guests: [],
      position: counter,
    };
    events.put(uuid, record, ms);
    return events.rows.get(uuid)!;
  };
  const stamp = (row: Row, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = ms;
    row.visibleFromMs = visibleFromMs;
    row.record.updated_at = calendlyTime(ms);
  };
  const cancel = (uuid: string, ms: number, reason: string) => {
    const row = events.rows.get(uuid);
    if (!row) throw notFound();
    if (row.record.status === 'canceled') throw new FakeHttpError(403, 'Event is already canceled.');
    row.record.status = 'canceled';
    row.record.invitees_counter = { total: 1, active: 0, limit: 1 };
    row.record.cancellation = {
      canceled_by: 'Ada Lovelace',
      reason,
      canceler_type: 'host',
      created_at: calendlyTime(ms),
    };
    stamp(row, ms);
    return row;
  };

  router.get('/scheduled_events', (ctx) => {
    scopeOf(ctx, ['organization', 'user', 'group']);
    const count = countOf(ctx, 'scheduled_events');
    const status = ctx.query.status === undefined ? undefined : String(ctx.query.status);
    if (status !== undefined && status !== 'active' && status !== 'canceled')
      throw invalid('status', 'must be one of active, canceled');
    const time = (name: string) => {
      const text = ctx.query[name];
      if (text === undefined) return undefined;
      const ms = Date.parse(String(text));
      if (Number.isNaN(ms)) throw invalid(name, 'must be a valid ISO 8601 time');
      return ms;
    };
    const min = time('min_start_time');
    const max = time('max_start_time');
    const sort = String(ctx.query.sort ?? 'start_time:asc');
    if (sort !== 'start_time:asc' && sort !== 'start_time:desc') throw invalid('sort', 'is invalid');
    const rows = [...events.rows.values()].filter((row) => {
      const start = Date.parse(String(row.record.start_time));
      return (
        visible(row) &&
        (status === undefined || row.record.status === status) &&
        (min === undefined || start >= min) &&
        (max === undefined || start < max)
      );
    });
    ctx.body = page(
      ctx,
      '/scheduled_events',
      rows,
      (row) => String(row.record.start_time),
      sort.endsWith(':desc'),
      count,
    );
  });

  router.get('/scheduled_events/:uuid', (ctx) => {
    const row = events.rows.get(ctx.params.uuid);
    if (!row) throw notFound();
    ctx.body = { resource: present(row) };
  });

  router.post('/scheduled_events/:uuid/cancellation', (ctx) => {
    const body = (ctx.request.body ?? {}) as Json;
    const row = cancel(ctx.params.uuid, now(), typeof body.reason === 'string' ? body.reason : '');
    ctx.status = 201;
    ctx.body = { resource: row.record.cancellation };
  });

  // ---- event types ----

  const writableTypeFields = [
    'name',
    'duration',
    'description',
    'color',
    'active',
    'locale',
    'duration_options',
  ];
  const newEventType = (values: Json, ms: number): Row => {
    const uuid = uuidOf('ETP');
    const name = String(values.name);
    const slug = `${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${counter}`;
    const record: Json = {
      uri: `${API}/event_types/${uuid}`,
      name,
      active: values.active ?? true,
      booking_method: 'instant',
      slug,
      scheduling_url: `https://calendly.com/ada/${slug}`,
      duration: values.duration ?? 30,
      duration_options: values.duration_options ?? null,
      kind: 'solo',
      pooling_type: null,
      type: 'StandardEventType',
      color: values.color ?? '#0069ff',
      created_at: calendlyTime(ms),
      updated_at: calendlyTime(ms),
      internal_note: null,
      description_plain: values.description ?? null,
      description_html: values.description ? `<p>${String(values.description)}</p>` : null,
      profile: { type: 'User', name: 'Ada Lovelace', owner: values.owner ?? USER },
      secret: false,
      deleted_at: null,
      admin_managed: false,
      locale: values.locale ?? 'en',
      custom_questions: [],
      position: counter,
    };
    eventTypes.put(uuid, record, ms);
    return eventTypes.rows.get(uuid)!;
  };
  const typeValues = (ctx: Context, creating: boolean): Json => {
    const body = ctx.request.body as Json | undefined;
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalid('body', 'must be an object');
    for (const name of Object.keys(body))
      if (!writableTypeFields.includes(name) && !(creating && name === 'owner'))
        throw invalid(name, 'is not allowed');
    if (creating && (typeof body.name !== 'string' || !body.name)) throw invalid('name', 'is required');
    if (body.name !== undefined && (typeof body.name !== 'string' || body.name.length > 55))
      throw invalid('name', 'must be a string of at most 55 characters');
    if (
      body.duration !== undefined &&
      (!Number.isInteger(body.duration) || Number(body.duration) < 1 || Number(body.duration) > 720)
    )
      throw invalid('duration', 'must be between 1 and 720');
    if (creating && body.owner !== undefined && body.owner !== USER)
      throw invalid('owner', 'must be a user of the organization');
    return body;
  };
  const liveType = (uuid: string): Row => {
    const row = eventTypes.get(uuid);
    if (!row) throw notFound();
    return row;
  };

  router.get('/event_types', (ctx) => {
    scopeOf(ctx, ['organization', 'user']);
    const count = countOf(ctx, 'event_types');
    const active = ctx.query.active === undefined ? undefined : ctx.query.active === 'true';
    const sort = String(ctx.query.sort ?? 'name:asc');
    if (!/^(name|position|created_at|updated_at):(asc|desc)$/.test(sort)) throw invalid('sort', 'is invalid');
    const field = sort.split(':')[0];
    const rows = eventTypes
      .live()
      .filter((row) => visible(row) && (active === undefined || row.record.active === active));
    ctx.body = page(
      ctx,
      '/event_types',
      rows,
      (row) =>
        field === 'position' ? String(row.record.position).padStart(12, '0') : String(row.record[field]),
      sort.endsWith(':desc'),
      count,
    );
  });

  router.get('/event_types/:uuid', (ctx) => {
    const row = eventTypes.rows.get(ctx.params.uuid);
    if (!row) throw notFound();
    ctx.body = { resource: present(row) };
  });

  router.post('/event_types', (ctx) => {
    ctx.status = 201;
    ctx.body = { resource: present(newEventType(typeValues(ctx, true), now())) };
  });

  router.patch('/event_types/:uuid', (ctx) => {
    const row = liveType(ctx.params.uuid);
    if (row.record.kind !== 'solo')
      throw new FakeHttpError(403, 'Only one-on-one event types can be updated.');
    const values = typeValues(ctx, false);
    for (const [name, value] of Object.entries(values)) {
      if (name === 'description') {
        row.record.description_plain = value;
        row.record.description_html = value ? `<p>${String(value)}</p>` : null;
      } else row.record[name] = value;
    }
    stamp(row, now());
    ctx.body = { resource: present(row) };
  });

  await fake.start();

  const storeOf = (object: string) => {
    if (object === 'scheduled_events') return events;
    if (object === 'event_types') return eventTypes;
    throw new Error(`no object ${object}`);
  };
  const uuidIn = (uri: string) => uri.slice(uri.lastIndexOf('/') + 1);

  return asConformanceFake(fake, {
    seed: (object, times) =>
      times.map((ms) =>
        String(
          (object === 'scheduled_events'
            ? newEvent(ms)
            : newEventType({ name: `Consultation ${counter + 1}`, description: `Seeded ${counter + 1}` }, ms)
          ).record.uri,
        ),
      ),
    touch(object, id, modifiedMs, options) {
      const row = storeOf(object).get(uuidIn(id));
      if (!row) throw new Error(`no ${object} ${id}`);
      // An edit the API cannot make (meeting notes added, the type renamed in the app).
      if (object === 'scheduled_events') row.record.meeting_notes_plain = `Notes at ${modifiedMs}`;
      else row.record.internal_note = `Edited at ${modifiedMs}`;
      stamp(row, modifiedMs, options?.visibleFromMs);
    },
    remove(object, id, atMs) {
      const uuid = uuidIn(id);
      if (object === 'scheduled_events') cancel(uuid, atMs, 'Canceled by the host');
      else {
        const row = eventTypes.remove(uuid, atMs);
        if (row) row.record.deleted_at = calendlyTime(atMs);
      }
    },
    stored: (object, id) => {
      const row = storeOf(object).get(uuidIn(id));
      // A canceled event is still there, but it is gone as far as the host is concerned.
      return row && row.record.status !== 'canceled' ? present(row) : undefined;
    },
  });
}

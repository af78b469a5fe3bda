import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { FakeHttpError, FakeProvider, RecordStore, type StoredRecord } from '../kit/fake-provider.js';

/**
 * A local stand-in for Gorgias's REST API (https://developers.gorgias.com/reference), written from
 * its reference; notes and sources in /work/notes/fakes/gorgias.md.
 *
 * - Auth: Basic `{email}:{api_key}`, or an OAuth `Bearer` token.
 * - Times: ISO 8601 with microseconds and an offset (`2024-01-01T00:00:00.123000+00:00`).
 * - Lists: `GET /api/tickets` and `GET /api/customers` with `order_by` (`created_datetime` or
 *   `updated_datetime`, `:asc`/`:desc`; `created_datetime:desc` by default), `limit` (default 30, at
 *   most 100) and an opaque `cursor` (`meta.next_cursor`, null on the last page; `meta.prev_cursor`)
 *   beside `data`, `object: "list"` and `uri`; no filter by time. The cursor keeps its place by the
 *   sort value and id of the last record, so records that move do not shift the pages. Tickets take
 *   `customer_id`, `external_id`, `ticket_ids` and `trashed` (trashed tickets only when `true`);
 *   customers `email`, `external_id`, `name`.
 * - Deletes: a ticket deleted in the helpdesk goes to the trash (`trashed_datetime` set, left out
 *   of lists unless `trashed=true`, still readable by id); `DELETE /api/tickets/{id}` and
 *   `DELETE /api/customers/{id}` delete for good (204).
 * - Writes: `POST` 201, `PUT` 202 for tickets and 200 for customers, with the record; a ticket is
 *   created from its `messages`, a customer from its `channels`; unknown members refused with 400;
 *   custom field values `[{id, value}]` checked against their definitions.
 * - `GET /api/custom-fields?object_type=` (cursor pages, `archived`); records carry the values in
 *   `custom_fields` keyed by field id, `{id, value}`.
 * - Events: `GET /api/events` lists what happened, newest first by default (`order_by`
 *   `created_datetime:asc|desc`), with `created_datetime[gt|gte|lt|lte]`, `object_type`, `object_id`,
 *   `types` (repeated) and `user_ids` filters, `limit` (default 30, at most 100) and cursors; each
 *   `{id, context, created_datetime, data, object_id, object_type, type, user_id}`. The fake records
 *   `ticket-created/updated/deleted` and `customer-created/updated/deleted`, so a deleted customer
 *   (gone from `/api/customers`) is revealed by its `customer-deleted` event.
 * - Errors `{error: {msg, data}}`; `X-Gorgias-Account-Api-Call-Limit` on every answer,
 *   `Retry-After` on a 429.
 */

type GorgiasRecord = Record<string, unknown> & { id: number; updated_datetime: string };
type Row = StoredRecord<GorgiasRecord>;

const objects = ['tickets', 'customers'] as const;
type GorgiasObject = (typeof objects)[number];
const orders = [
  'created_datetime:asc',
  'created_datetime:desc',
  'updated_datetime:asc',
  'updated_datetime:desc',
];
const LIMIT_MAX = 100;

/** Gorgias writes microseconds and an offset; the fake keeps milliseconds. */
const gorgiasTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000+00:00');

const ticketMembers = [
  'subject',
  'status',
  'priority',
  'channel',
  'via',
  'language',
  'spam',
  'from_agent',
  'is_unread',
  'customer',
  'assignee_user',
  'assignee_team',
  'tags',
  'messages',
  'external_id',
  'meta',
  'created_datetime',
  'opened_datetime',
  'closed_datetime',
  'snooze_datetime',
  'trashed_datetime',
  'last_message_datetime',
  'last_received_message_datetime',
  'updated_datetime',
  'custom_fields',
];
const customerMembers = [
  'name',
  'firstname',
  'lastname',
  'email',
  'channels',
  'language',
  'timezone',
  'external_id',
  'note',
  'data',
  'meta',
  'custom_fields',
];

const customFields: Record<'Ticket' | 'Customer', Record<string, unknown>[]> = {
  Ticket: [
    customField(11, 'Ticket', 'Contact reason', true, {
      data_type: 'text',
      input_settings: { input_type: 'dropdown', choices: ['Refund', 'Shipping'] },
    }),
    customField(12, 'Ticket', 'Order value', false, {
      data_type: 'number',
      input_settings: { input_type: 'input_number', min: 0, max: 100000 },
    }),
    customField(13, 'Ticket', 'VIP', false, {
      data_type: 'boolean',
      input_settings: { input_type: 'dropdown', choices: [true, false] },
    }),
    customField(
      14,
      'Ticket',
      'Old reason',
      false,
      { data_type: 'text', input_settings: { input_type: 'input' } },
      '2023-01-01T00:00:00.000000+00:00',
    ),
  ],
  Customer: [
    customField(21, 'Customer', 'Segment', false, {
      data_type: 'text',
      input_settings: { input_type: 'input', placeholder: 'Segment' },
    }),
  ],
};

function customField(
  id: number,
  objectType: string,
  label: string,
  required: boolean,
  definition: Record<string, unknown>,
  deactivated: string | null = null,
): Record<string, unknown> {
  return {
    id,
    object_type: objectType,
    label,
    description: null,
    priority: id,
    required,
    managed_type: null,
    definition,
    external_id: null,
    created_datetime: '2022-01-01T00:00:00.000000+00:00',
    updated_datetime: '2022-01-01T00:00:00.000000+00:00',
    deactivated_datetime: deactivated,
  };
}

const invalid = (field: string, message: string) =>
  new FakeHttpError(400, JSON.stringify({ [field]: [message] }), 'validation');

/** `Authorization: Bearer <token>`, or Basic `{email}:{api_key}` → the token or key. */
function gorgiasCredential(ctx: Context): string | undefined {
  const header = ctx.get('authorization');
  const bearer = /^Bearer\s+(.+)$/i.exec(header)?.[1];
  if (bearer) return bearer;
  const basic = /^Basic\s+(.+)$/i.exec(header)?.[1];
  if (!basic) return undefined;
  const decoded = Buffer.from(basic, 'base64').toString('utf8');
  return decoded.includes(':') ? decoded.slice(decoded.indexOf(':') + 1) : undefined;
}

interface Cursor {
  list: string;
  order: string;
  /** The sort value (ms) and id of the last record of the page it follows. */
  after: [number, number];
  /** Whether it pages backwards (a `prev_cursor`). */
  back?: boolean;
}

export async function startFakeGorgias(): Promise<ConformanceFake> {
  const stores: Record<GorgiasObject, RecordStore<GorgiasRecord>> = {
    tickets: new RecordStore(),
    customers: new RecordStore(),
  };
  let nextId = 1;
  let nextEventId = 1;
  interface EventRow {
    event: Record<string, unknown> & { id: number };
    atMs: number;
    visibleFromMs?: number;
  }
  const events: EventRow[] = [];
  const objectTypes = [
    'Account',
    'Macro',
    'Tag',
    'Customer',
    'Team',
    'View',
    'Widget',
    'User',
    'TicketMessage',
    'Ticket',
    'Rule',
    'Integration',
    'SatisfactionSurvey',
  ];
  /** Records what happened to a ticket or customer, as Gorgias's events API lists it. */
  function recordEvent(
    object: GorgiasObject,
    id: number,
    change: 'created' | 'updated' | 'deleted',
    ms: number,
    visibleFromMs?: number,
  ) {
    const eventId = nextEventId++;
    events.push({
      event: {
        id: eventId,
        context: `00000000-0000-4000-8000-${String(eventId).padStart(12, '0')}`,
        created_datetime: gorgiasTime(ms),
        data: null,
        object_id: id,
        object_type: object === 'tickets' ? 'Ticket' : 'Customer',
        type: `${object === 'tickets' ? 'ticket' : 'customer'}-${change}`,
        user_id: null,
      },
      atMs: ms,
      ...(visibleFromMs !== undefined && { visibleFromMs }),
    });
  }

  const fake: FakeProvider = new FakeProvider({
    credentialOf: gorgiasCredential,
    errorBody: (error) =>
      error.code === 'validation'
        ? { error: { msg: 'Invalid data', data: JSON.parse(error.message) as unknown } }
        : { error: { msg: error.status === 429 ? 'Too many requests' : error.message } },
    rateLimitHeaders: () => ({ 'retry-after': '20', 'x-gorgias-account-api-call-limit': '40/40' }),
  });
  const now = () => fake.now();

  const router = fake.router;
  router.use(async (ctx, next) => {
    ctx.set('x-gorgias-account-api-call-limit', '1/40');
    await next();
  });

  const objectOf = (ctx: Context): GorgiasObject => {
    const object = ctx.params.object as GorgiasObject;
    if (!objects.includes(object)) throw new FakeHttpError(404, `Page not found: ${ctx.path}`);
    return object;
  };
  const notFound = (object: GorgiasObject) =>
    new FakeHttpError(404, `${object === 'tickets' ? 'Ticket' : 'Customer'} not found`);
  const rowOf = (object: GorgiasObject, id: string): Row => {
    const row = stores[object].get(id);
    if (!row) throw notFound(object);
    return row;
  };

  const encode = (cursor: Cursor) => Buffer.from(JSON.stringify(cursor)).toString('base64url');
  const decode = (raw: string, list: string): Cursor => {
    try {
      const cursor = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Cursor;
      if (cursor.list === list && orders.includes(cursor.order) && Array.isArray(cursor.after)) return cursor;
    } catch {
      // Refused below.
    }
    throw invalid('cursor', 'Invalid cursor.');
  };

  /** One page of `items` in the order asked, `meta.next_cursor` standing for the rest. */
  function page(
    ctx: Context,
    list: string,
    items: GorgiasRecord[],
    orderable: boolean,
    object?: GorgiasObject,
  ) {
    const limit = ctx.query.limit === undefined ? 30 : Number(ctx.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > LIMIT_MAX)
      throw invalid('limit', `Must be greater than or equal to 1 and less than or equal to ${LIMIT_MAX}.`);
    if (object) fake.logListing(ctx, { object, pageSize: limit, maxPageSize: LIMIT_MAX });
    let order = (ctx.query.order_by as string | undefined) ?? 'created_datetime:desc';
    if (orderable && !orders.includes(order))
      throw invalid('order_by', `Must be one of: ${orders.join(', ')}.`);
    if (!orderable) order = 'created_datetime:asc';
    const cursor = typeof ctx.query.cursor === 'string' ? decode(ctx.query.cursor, list) : undefined;
    if (cursor) order = cursor.order;
    const [key, direction] = order.split(':');
    const sign = direction === 'desc' ? -1 : 1;
    const value = (record: GorgiasRecord) =>
      orderable ? Date.parse(String(record[key])) : Number(record.id);
    const compare = (a: [number, number], b: [number, number]) => (a[0] - b[0] || a[1] - b[1]) * sign;
    const sorted = items.map((record) => ({ record, at: [value(record), record.id] as [number, number] }));
    sorted.sort((a, b) => compare(a.at, b.at));
    let window: typeof sorted;
    if (cursor?.back) {
      const before = sorted.filter((item) => compare(item.at, cursor.after) < 0);
      window = before.slice(-limit);
    } else {
      const after = cursor ? sorted.filter((item) => compare(item.at, cursor.after) > 0) : sorted;
      window = after.slice(0, limit);
    }
    const last = window.at(-1);
    const first = window[0];
    const more = last !== undefined && sorted.some((item) => compare(item.at, last.at) > 0);
    const earlier = first !== undefined && sorted.some((item) => compare(item.at, first.at) < 0);
    ctx.body = {
      object: 'list',
      uri: ctx.url,
      data: window.map((item) => item.record),
      meta: {
        prev_cursor: earlier ? encode({ list, order, after: first.at, back: true }) : null,
        next_cursor: more ? encode({ list, order, after: last.at }) : null,
      },
    };
  }

  /** Custom field values: `[{id, value}]` on writes, kept keyed by id as `{id, value}`. */
  function customValues(objectType: 'Ticket' | 'Customer', raw: unknown): Record<string, unknown> {
    if (!Array.isArray(raw)) throw invalid('custom_fields', 'Not a valid list.');
    const values: Record<string, unknown> = {};
    raw.forEach((entry: { id?: unknown; value?: unknown }, i) => {
      const definition = customFields[objectType].find((field) => field.id === Number(entry?.id));
      if (!definition || definition.deactivated_datetime !== null)
        throw invalid(`custom_fields.${i}.id`, 'Custom field does not exist.');
      const choices = (definition.definition as { input_settings: { choices?: unknown[] } }).input_settings
        .choices;
      if (choices && entry.value !== null && !choices.includes(entry.value))
        throw invalid(`custom_fields.${i}.value`, `Must be one of: ${choices.join(', ')}.`);
      values[String(definition.id)] = { id: definition.id, value: entry.value ?? null };
    });
    return values;
  }

  function checkValues(object: GorgiasObject, body: unknown, creating: boolean): Record<string, unknown> {
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw invalid('_schema', 'Invalid input type.');
    const values = { ...(body as Record<string, unknown>) };
    const allowed = object === 'tickets' ? ticketMembers : customerMembers;
    for (const name of Object.keys(values)) {
      if (!allowed.includes(name) || (name === 'messages' && !creating))
        throw invalid(name, 'Unknown field.');
    }
    if (object === 'tickets' && creating) {
      const messages = values.messages;
      if (!Array.isArray(messages) || !messages.length)
        throw invalid('messages', 'Missing data for required field.');
      messages.forEach((message: Record<string, unknown>, i) => {
        for (const name of ['channel', 'via', 'from_agent', 'sender']) {
          if (message?.[name] === undefined)
            throw invalid(`messages.${i}.${name}`, 'Missing data for required field.');
        }
        if (!message.body_text && !message.body_html)
          throw invalid(`messages.${i}.body_text`, 'A message needs body_text or body_html.');
      });
    }
    if (
      object === 'tickets' &&
      values.status !== undefined &&
      !['open', 'closed'].includes(values.status as string)
    )
      throw invalid('status', 'Must be one of: open, closed.');
    if (object === 'customers') {
      if (creating && !Array.isArray(values.channels))
        throw invalid('channels', 'Missing data for required field.');
      const email = values.email;
      if (typeof email === 'string' && stores.customers.live().some((row) => row.record.email === email))
        throw new FakeHttpError(409, 'A customer with this email already exists.');
    }
    if (values.custom_fields !== undefined)
      values.custom_fields = customValues(object === 'tickets' ? 'Ticket' : 'Customer', values.custom_fields);
    return values;
  }

  function build(object: GorgiasObject, values: Record<string, unknown>, ms: number): Row {
    const id = nextId++;
    const at = gorgiasTime(ms);
    let record: GorgiasRecord;
    if (object === 'tickets') {
      const { messages = [], ...rest } = values as { messages?: Record<string, unknown>[] };
      const first = messages[0] ?? {};
      record = {
        id,
        uri: `/api/tickets/${id}/`,
        external_id: null,
        language: null,
        status: 'open',
        priority: 'normal',
        channel: first.channel ?? 'api',
        via: first.via ?? 'api',
        from_agent: first.from_agent ?? false,
        customer: first.sender ?? null,
        assignee_user: null,
        assignee_team: null,
        subject: first.subject ?? null,
        excerpt: String(first.body_text ?? '').slice(0, 100),
        integrations: [],
        meta: null,
        tags: [],
        messages_count: messages.length,
        is_unread: true,
        spam: false,
        satisfaction_survey: null,
        reply_options: {},
        custom_fields: {},
        created_datetime: at,
        opened_datetime: null,
        last_received_message_datetime: at,
        last_message_datetime: at,
        closed_datetime: null,
        snooze_datetime: null,
        trashed_datetime: null,
        ...rest,
        updated_datetime: at,
      };
    } else {
      record = {
        id,
        external_id: null,
        active: true,
        email: null,
        name: null,
        firstname: '',
        lastname: '',
        language: null,
        timezone: null,
        note: null,
        channels: [],
        data: null,
        meta: {},
        integrations: {},
        custom_fields: {},
        created_datetime: at,
        ...values,
        updated_datetime: at,
      };
    }
    const row: Row = { record, modifiedMs: ms };
    stores[object].rows.set(String(id), row);
    recordEvent(object, id, 'created', ms);
    return row;
  }

  function stamp(row: Row, ms: number, visibleFromMs?: number) {
    row.modifiedMs = ms;
    row.visibleFromMs = visibleFromMs;
    row.record.updated_datetime = gorgiasTime(ms);
  }
  const visible = (row: Row) => (row.visibleFromMs ?? row.modifiedMs) <= now();

  router.get('/api/custom-fields', (ctx) => {
    const objectType = ctx.query.object_type as 'Ticket' | 'Customer';
    if (!Object.hasOwn(customFields, objectType ?? ''))
      throw invalid('object_type', 'Must be one of: Ticket, Customer.');
    const archived = ctx.query.archived;
    const fields = customFields[objectType].filter(
      (field) => archived === undefined || (archived === 'true') === (field.deactivated_datetime !== null),
    );
    page(ctx, `custom-fields:${objectType}`, fields as GorgiasRecord[], false);
  });

  const eventOrders = ['created_datetime', 'created_datetime:asc', 'created_datetime:desc'];
  router.get('/api/events', (ctx) => {
    const query = ctx.query;
    const order = (query.order_by as string | undefined) ?? 'created_datetime:desc';
    if (!eventOrders.includes(order)) throw invalid('order_by', `Must be one of: ${eventOrders.join(', ')}.`);
    // `created_datetime` alone (deprecated) sorts oldest first.
    if (order === 'created_datetime') ctx.query = { ...query, order_by: 'created_datetime:asc' };
    const bounds: [string, (at: number, bound: number) => boolean][] = [
      ['gt', (at, bound) => at > bound],
      ['gte', (at, bound) => at >= bound],
      ['lt', (at, bound) => at < bound],
      ['lte', (at, bound) => at <= bound],
    ];
    let rows = events.filter((row) => (row.visibleFromMs ?? row.atMs) <= now());
    for (const [name, holds] of bounds) {
      const raw = query[`created_datetime[${name}]`];
      if (raw === undefined) continue;
      const bound = typeof raw === 'string' ? Date.parse(raw) : NaN;
      if (Number.isNaN(bound)) throw invalid(`created_datetime.${name}`, 'Not a valid datetime.');
      rows = rows.filter((row) => holds(row.atMs, bound));
    }
    if (query.object_type !== undefined) {
      if (typeof query.object_type !== 'string' || !objectTypes.includes(query.object_type))
        throw invalid('object_type', `Must be one of: ${objectTypes.join(', ')}.`);
      rows = rows.filter((row) => row.event.object_type === query.object_type);
    }
    if (query.object_id !== undefined) {
      const objectId = Number(query.object_id);
      if (!Number.isInteger(objectId)) throw invalid('object_id', 'Not a valid integer.');
      rows = rows.filter((row) => row.event.object_id === objectId);
    }
    const listed = (value: unknown) =>
      value === undefined ? undefined : ([] as string[]).concat(value as string);
    const types = listed(query.types) ?? listed(query['types[]']);
    if (types) rows = rows.filter((row) => types.includes(row.event.type as string));
    const users = listed(query.user_ids) ?? listed(query['user_ids[]']);
    if (users) rows = rows.filter((row) => users.includes(String(row.event.user_id)));
    page(ctx, 'events', rows.map((row) => row.event) as GorgiasRecord[], true);
    const limit = query.limit === undefined ? 30 : Number(query.limit);
    fake.logListing(ctx, { object: 'events', pageSize: limit, maxPageSize: LIMIT_MAX });
  });

  router.get('/api/:object', (ctx) => {
    const object = objectOf(ctx);
    let rows = [...stores[object].rows.values()].filter((row) => !row.deleted && visible(row));
    if (object === 'tickets') {
      const trashed = ctx.query.trashed;
      if (trashed !== undefined && trashed !== 'true' && trashed !== 'false')
        throw invalid('trashed', 'Not a valid boolean.');
      rows = rows.filter((row) => Boolean(row.record.trashed_datetime) === (trashed === 'true'));
      if (typeof ctx.query.customer_id === 'string')
        rows = rows.filter(
          (row) => String((row.record.customer as { id?: unknown } | null)?.id) === ctx.query.customer_id,
        );
      if (typeof ctx.query.ticket_ids === 'string') {
        const ids = ctx.query.ticket_ids.split(',');
        rows = rows.filter((row) => ids.includes(String(row.record.id)));
      }
    } else {
      for (const name of ['email', 'name'] as const)
        if (typeof ctx.query[name] === 'string')
          rows = rows.filter((row) => row.record[name] === ctx.query[name]);
    }
    if (typeof ctx.query.external_id === 'string')
      rows = rows.filter((row) => row.record.external_id === ctx.query.external_id);
    page(
      ctx,
      object,
      rows.map((row) => row.record),
      true,
      object,
    );
  });

  router.get('/api/:object/:id', (ctx) => {
    ctx.body = rowOf(objectOf(ctx), ctx.params.id).record;
  });

  router.post('/api/:object', (ctx) => {
    const object = objectOf(ctx);
    const row = build(object, checkValues(object, ctx.request.body, true), now());
    ctx.status = 201;
    ctx.body = row.record;
  });

  router.put('/api/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = rowOf(object, ctx.params.id);
    const values = checkValues(object, ctx.request.body, false);
    Object.assign(row.record, values, {
      custom_fields: { ...(row.record.custom_fields as object), ...(values.custom_fields as object) },
    });
    stamp(row, now());
    recordEvent(object, row.record.id, 'updated', now());
    ctx.status = object === 'tickets' ? 202 : 200;
    ctx.body = row.record;
  });

  router.delete('/api/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = rowOf(object, ctx.params.id);
    stores[object].rows.delete(ctx.params.id);
    recordEvent(object, row.record.id, 'deleted', now());
    ctx.status = 204;
  });

  await fake.start();

  const storedRow = (object: string, id: string): Row => {
    const row = stores[object as GorgiasObject].rows.get(id);
    if (!row) throw new Error(`no ${object} ${id}`);
    return row;
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
    setClock: (clock) => fake.setClock(clock),
    seed: (object, times) =>
      times.map((ms) => {
        const name = object as GorgiasObject;
        const values =
          name === 'tickets'
            ? {
                messages: [
                  {
                    channel: 'email',
                    via: 'email',
                    from_agent: false,
                    sender: { id: 5000 + nextId, email: `t${nextId}@example.com` },
                    subject: `Ticket ${nextId}`,
                    body_text: 'Where is my order?',
                  },
                ],
                custom_fields: {
                  '11': { id: 11, value: 'Shipping' },
                  '12': { id: 12, value: 42 },
                  '13': { id: 13, value: false },
                },
              }
            : {
                name: `Customer ${nextId}`,
                email: `c${nextId}@example.com`,
                channels: [],
                custom_fields: { '21': { id: 21, value: 'Retail' } },
              };
        return String(build(name, values, ms).record.id);
      }),
    touch(object, id, modifiedMs, options) {
      const row = storedRow(object, id);
      stamp(row, modifiedMs, options?.visibleFromMs);
      recordEvent(object as GorgiasObject, row.record.id, 'updated', modifiedMs, options?.visibleFromMs);
    },
    remove(object, id, atMs) {
      const row = storedRow(object, id);
      if (object === 'tickets') {
        // Deleting a ticket in the helpdesk moves it to the trash.
        row.record.trashed_datetime = gorgiasTime(atMs);
        stamp(row, atMs);
        recordEvent('tickets', row.record.id, 'updated', atMs);
      } else {
        // Deleting a customer deletes it for good: only its `customer-deleted` event tells.
        stores.customers.rows.delete(id);
        recordEvent('customers', row.record.id, 'deleted', atMs);
      }
    },
    stored: (object, id) => {
      const row = stores[object as GorgiasObject].get(id);
      return row && !row.record.trashed_datetime ? row.record : undefined;
    },
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    stop: () => fake.stop(),
  };
}

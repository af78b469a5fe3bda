import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';

/**
 * A local stand-in for Gorgias's REST API (https://developers.gorgias.com/reference): tickets and
 * customers listed with `order_by` (`created_datetime` or `updated_datetime`, `:asc`/`:desc`; no
 * filter by time), `limit` (≤ 100, default 30) and an opaque short-lived `cursor` answered in
 * `meta.next_cursor` (null on the last page) beside `data`, `object: "list"` and `uri`; `POST`
 * (201), `PUT` (202 for tickets, 200 for customers, with the record) and `DELETE` (204); a ticket is
 * created from its `messages`, a customer from its `channels`; unknown members refused with 400;
 * custom field definitions per `object_type` at `/api/custom-fields`; errors as
 * `{error: {msg, data}}`; `X-Gorgias-Account-Api-Call-Limit` on every answer, `Retry-After` on a
 * 429. Times are written as Python does, `2024-01-01T00:00:00.123000+00:00`.
 */

type GorgiasRecord = Record<string, unknown> & { id: number; updated_datetime: string };

const objects = ['tickets', 'customers'] as const;
type GorgiasObject = (typeof objects)[number];
const orders = [
  'created_datetime:asc',
  'created_datetime:desc',
  'updated_datetime:asc',
  'updated_datetime:desc',
];

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

export async function startFakeGorgias(): Promise<ConformanceFake> {
  const records: Record<GorgiasObject, Map<number, GorgiasRecord>> = {
    tickets: new Map(),
    customers: new Map(),
  };
  /** Cursors: each stands for its listing and the next position. */
  const cursors = new Map<string, { list: string; order: string; offset: number }>();
  let nextId = 1;

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) =>
      error.code === 'validation'
        ? { error: { msg: 'Invalid data', data: JSON.parse(error.message) as unknown } }
        : { error: { msg: error.status === 429 ? 'Too many requests' : error.message } },
    rateLimitHeaders: () => ({ 'retry-after': '1', 'x-gorgias-account-api-call-limit': '80/80' }),
  });

  const router = fake.router;
  router.use(async (ctx, next) => {
    ctx.set('x-gorgias-account-api-call-limit', '1/80');
    await next();
  });

  const objectOf = (ctx: Context): GorgiasObject => {
    const object = ctx.params.object as GorgiasObject;
    if (!objects.includes(object)) throw new FakeHttpError(404, `Page not found: ${ctx.path}`);
    return object;
  };
  const recordOf = (object: GorgiasObject, id: string): GorgiasRecord => {
    const record = records[object].get(Number(id));
    if (!record) throw new FakeHttpError(404, `${object === 'tickets' ? 'Ticket' : 'Customer'} not found`);
    return record;
  };

  /** One page of `items` in the order asked, `meta.next_cursor` standing for the rest. */
  const page = (ctx: Context, list: string, items: Record<string, unknown>[], orderable: boolean) => {
    const limit = ctx.query.limit === undefined ? 30 : Number(ctx.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      throw invalid('limit', 'Must be greater than or equal to 1 and less than or equal to 100.');
    let order = (ctx.query.order_by as string | undefined) ?? 'created_datetime:desc';
    if (orderable && !orders.includes(order))
      throw invalid('order_by', `Must be one of: ${orders.join(', ')}.`);
    let offset = 0;
    const cursor = ctx.query.cursor;
    if (typeof cursor === 'string') {
      const saved = cursors.get(cursor);
      if (!saved || saved.list !== list) throw invalid('cursor', 'Invalid cursor.');
      ({ order, offset } = saved);
    }
    if (orderable) {
      const [key, direction] = order.split(':');
      items.sort(
        (a, b) =>
          (Date.parse(String(a[key])) - Date.parse(String(b[key])) || Number(a.id) - Number(b.id)) *
          (direction === 'desc' ? -1 : 1),
      );
    }
    const data = items.slice(offset, offset + limit);
    let next: string | null = null;
    if (offset + data.length < items.length) {
      next = randomBytes(12).toString('base64');
      cursors.set(next, { list, order, offset: offset + data.length });
    }
    ctx.body = {
      object: 'list',
      uri: ctx.url,
      data,
      meta: { prev_cursor: offset > 0 ? randomBytes(12).toString('base64') : null, next_cursor: next },
    };
  };

  const checkValues = (object: GorgiasObject, body: unknown, creating: boolean): Record<string, unknown> => {
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw invalid('_schema', 'Invalid input type.');
    const values = body as Record<string, unknown>;
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
      if (typeof email === 'string' && [...records.customers.values()].some((c) => c.email === email))
        throw new FakeHttpError(409, 'A customer with this email already exists.');
    }
    return values;
  };

  const build = (object: GorgiasObject, values: Record<string, unknown>, ms: number): GorgiasRecord => {
    const id = nextId++;
    const at = gorgiasTime(ms);
    if (object === 'tickets') {
      const { messages = [], ...rest } = values as { messages?: Record<string, unknown>[] };
      const first = messages[0] ?? {};
      return {
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
    }
    return {
      id,
      external_id: null,
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
      custom_fields: {},
      created_datetime: at,
      ...values,
      updated_datetime: at,
    };
  };

  router.get('/api/custom-fields', (ctx) => {
    const objectType = ctx.query.object_type as 'Ticket' | 'Customer';
    if (!Object.hasOwn(customFields, objectType ?? ''))
      throw invalid('object_type', 'Must be one of: Ticket, Customer.');
    const archived = ctx.query.archived;
    const fields = customFields[objectType].filter(
      (field) => archived === undefined || (archived === 'true') === (field.deactivated_datetime !== null),
    );
    page(ctx, `custom-fields:${objectType}`, fields, false);
  });

  router.get('/api/:object', (ctx) => {
    const object = objectOf(ctx);
    page(ctx, object, [...records[object].values()], true);
  });

  router.get('/api/:object/:id', (ctx) => {
    ctx.body = recordOf(objectOf(ctx), ctx.params.id);
  });

  router.post('/api/:object', (ctx) => {
    const object = objectOf(ctx);
    const record = build(object, checkValues(object, ctx.request.body, true), Date.now());
    records[object].set(record.id, record);
    ctx.status = 201;
    ctx.body = record;
  });

  router.put('/api/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const record = recordOf(object, ctx.params.id);
    Object.assign(record, checkValues(object, ctx.request.body, false), {
      updated_datetime: gorgiasTime(Date.now()),
    });
    ctx.status = object === 'tickets' ? 202 : 200;
    ctx.body = record;
  });

  router.delete('/api/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    recordOf(object, ctx.params.id);
    records[object].delete(Number(ctx.params.id));
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
                    sender: { email: `t${nextId}@example.com` },
                    subject: `Ticket ${nextId}`,
                    body_text: 'Where is my order?',
                  },
                ],
              }
            : { name: `Customer ${nextId}`, email: `c${nextId}@example.com`, channels: [] };
        const record = build(name, values, ms);
        records[name].set(record.id, record);
        return String(record.id);
      }),
    touch(object, id, modifiedMs) {
      recordOf(object as GorgiasObject, id).updated_datetime = gorgiasTime(modifiedMs);
    },
    stored: (object, id) => records[object as GorgiasObject].get(Number(id)),
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    stop: () => fake.stop(),
  };
}

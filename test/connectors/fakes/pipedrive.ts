import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';

/**
 * A local stand-in for Pipedrive's API as its public reference describes it: v2 lists of persons,
 * organizations and deals (`updated_since` / `updated_until` in RFC 3339, `sort_by`, opaque
 * `cursor` answered in `additional_data.next_cursor`, `limit` up to 500), v2 create / PATCH /
 * DELETE answering `{success, data}`, `ids` narrowing a list, v2 search (`/<object>/search`:
 * `term`, `fields`, `exact_match`, reduced items under `data.items[].item`, cursor paging), v1
 * field lists (`personFields`...) paged with `start` / `limit` and
 * `additional_data.pagination.more_items_in_collection`, error bodies
 * `{success: false, error, error_info}` and `x-ratelimit-*` headers. Only what Ferry uses.
 */

export type FakeRecord = Record<string, unknown> & { id: number; update_time: string; is_deleted: boolean };

export interface FakeField {
  id: number;
  key: string;
  name: string;
  field_type: string;
  edit_flag: boolean;
  mandatory_flag: boolean;
  bulk_edit_allowed: boolean;
  options?: { id: number; label: string }[];
}

export interface FakePipedrive extends ConformanceFake {
  records(object: string): FakeRecord[];
  reset(): void;
}

const objects = ['persons', 'organizations', 'deals'] as const;
const fieldLists: Record<string, string> = {
  personFields: 'persons',
  organizationFields: 'organizations',
  dealFields: 'deals',
};
/** The member v2 requires on create. */
const requiredOf: Record<string, string> = { persons: 'name', organizations: 'name', deals: 'title' };

function field(
  id: number,
  key: string,
  name: string,
  fieldType: string,
  extra: Partial<FakeField> = {},
): FakeField {
  return {
    id,
    key,
    name,
    field_type: fieldType,
    edit_flag: false,
    mandatory_flag: false,
    bulk_edit_allowed: true,
    ...extra,
  };
}

function fieldsOf(object: string): FakeField[] {
  const fixed = { bulk_edit_allowed: false };
  const common = [
    field(1, 'id', 'ID', 'int', fixed),
    field(2, 'add_time', 'Created', 'date', fixed),
    field(3, 'update_time', 'Update time', 'date', fixed),
    field(4, 'owner_id', 'Owner', 'user'),
  ];
  if (object === 'persons') {
    return [
      ...common,
      field(10, 'name', 'Name', 'varchar', { mandatory_flag: true }),
      field(11, 'email', 'Email', 'varchar'),
      field(12, 'phone', 'Phone', 'phone'),
      field(13, 'org_id', 'Organization', 'org'),
      field(14, '5c1a0e6b9d2f4c8a1b3e7d9f0a2c4e6b8d0f1a3c', 'Tier', 'enum', {
        edit_flag: true,
        options: [
          { id: 31, label: 'Gold' },
          { id: 32, label: 'Silver' },
        ],
      }),
    ];
  }
  if (object === 'organizations') {
    return [
      ...common,
      field(20, 'name', 'Name', 'varchar', { mandatory_flag: true }),
      field(21, 'address', 'Address', 'address'),
    ];
  }
  return [
    ...common,
    field(30, 'title', 'Title', 'varchar', { mandatory_flag: true }),
    field(31, 'value', 'Value', 'monetary'),
    field(32, 'status', 'Status', 'status', {
      options: [
        { id: 1, label: 'Open' },
        { id: 2, label: 'Won' },
      ],
    }),
  ];
}

/** What `fields` a search takes, per object (custom fields are not searched by the fake). */
const searchFields: Record<string, string[]> = {
  persons: ['custom_fields', 'email', 'notes', 'phone', 'name'],
  organizations: ['address', 'custom_fields', 'notes', 'name'],
  deals: ['custom_fields', 'notes', 'title'],
};

/** The texts a search field looks in: v2 records keep emails and phones as `[{value, primary, label}]`. */
function searchedValues(record: FakeRecord, field: string): unknown[] {
  const listed = (name: string) => ((record[name] ?? []) as { value: unknown }[]).map((item) => item.value);
  if (field === 'email') return listed('emails');
  if (field === 'phone') return listed('phones');
  if (field === 'address') {
    const address = record.address as { value?: unknown } | string | undefined;
    return [typeof address === 'object' ? address?.value : address];
  }
  return [record[field]];
}

/** A search result's item: a reduced record, emails and phones as plain strings. */
function reducedItem(object: string, record: FakeRecord): Record<string, unknown> {
  const type = object.replace(/s$/, '');
  const common = { id: record.id, type, owner: { id: record.owner_id ?? 1 }, custom_fields: [], notes: [] };
  if (object === 'persons') {
    return {
      ...common,
      name: record.name,
      phones: searchedValues(record, 'phone'),
      emails: searchedValues(record, 'email'),
      visible_to: 3,
      organization: null,
    };
  }
  if (object === 'organizations') {
    return {
      ...common,
      name: record.name,
      address: searchedValues(record, 'address')[0] ?? null,
      visible_to: 3,
    };
  }
  return { ...common, title: record.title, value: record.value ?? 0, currency: 'USD', status: 'open' };
}

/** RFC 3339 without fractions, as Pipedrive v2 writes times. */
function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function encodeCursor(offset: number): string {
  return Buffer.from(JSON.stringify({ offset })).toString('base64url');
}

function decodeCursor(cursor: string): number {
  try {
    const offset = (JSON.parse(Buffer.from(cursor, 'base64url').toString()) as { offset?: unknown }).offset;
    if (typeof offset === 'number' && offset >= 0) return offset;
  } catch {
    // fall through
  }
  throw new FakeHttpError(400, 'Invalid cursor');
}

function timeParameter(ctx: Context, name: string): number | undefined {
  const value = ctx.query[name];
  if (value === undefined) return undefined;
  const text = String(value);
  // The reference asks for RFC 3339 (e.g. 2025-01-01T10:20:00Z).
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text)) {
    throw new FakeHttpError(400, `Invalid ${name}: expected an RFC 3339 date-time`);
  }
  return Date.parse(text);
}

let lastWebhookId = 0;

/** Webhooks the fake holds, by id, as `POST /v1/webhooks` took them. */
export const pipedriveWebhooks = new Map<
  string,
  {
    id: number;
    subscription_url: string;
    event_action: string;
    event_object: string;
    http_auth_user?: string;
    http_auth_password?: string;
    version: string;
  }
>();

/**
 * A v2 delivery as Pipedrive sends it: `{data, previous, meta}`, unsigned, with the Basic credentials
 * given when the webhook was made (https://pipedrive.readme.io/docs/guide-for-webhooks-v2).
 */
export function pipedriveWebhookDelivery(
  webhookId: string,
  meta: { action: 'create' | 'change' | 'delete'; entity: string; entity_id: string },
  data: Record<string, unknown> | null,
  previous: Record<string, unknown> | null = null,
  password?: string,
): { headers: Record<string, string>; body: string } {
  const webhook = pipedriveWebhooks.get(webhookId)!;
  const credentials = `${webhook.http_auth_user}:${password ?? webhook.http_auth_password}`;
  const body = JSON.stringify({
    data,
    previous,
    meta: {
      ...meta,
      id: randomUUID(),
      timestamp: '2026-11-23T10:00:00.000Z',
      version: '2.0',
      webhook_id: webhookId,
      is_bulk_edit: false,
      type: 'general',
    },
  });
  return { headers: { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` }, body };
}

export async function startFakePipedrive(): Promise<FakePipedrive> {
  const records = new Map<string, FakeRecord[]>();
  const nextId = new Map<string, number>();
  let remaining = 80;

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) =>
      error.status === 401
        ? {
            success: false,
            error: 'unauthorized access',
            errorCode: 401,
            error_info: 'Please check developers.pipedrive.com',
          }
        : error.status === 429
          ? {
              success: false,
              error: 'Request over limit',
              errorCode: 429,
              error_info: 'Please check developers.pipedrive.com',
            }
          : {
              success: false,
              error: error.message,
              error_info: 'Please check developers.pipedrive.com',
              data: null,
              additional_data: null,
            },
    rateLimitHeaders: () => ({
      'x-ratelimit-limit': '80',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': '1',
    }),
  });

  const reset = () => {
    for (const object of objects) {
      records.set(object, []);
      nextId.set(object, 1);
    }
    fake.requests.length = 0;
  };
  reset();

  const router = fake.router;
  router.use(async (ctx, next) => {
    remaining = remaining > 1 ? remaining - 1 : 80;
    ctx.set('x-ratelimit-limit', '80');
    ctx.set('x-ratelimit-remaining', String(remaining));
    ctx.set('x-ratelimit-reset', '2');
    await next();
  });

  const objectOf = (ctx: Context): string => {
    const object = ctx.params.object;
    if (!(objects as readonly string[]).includes(object)) throw new FakeHttpError(404, 'Unknown method .');
    return object;
  };
  const live = (object: string) => records.get(object)!.filter((record) => !record.is_deleted);
  const recordOf = (object: string, id: string): FakeRecord => {
    const record = live(object).find((r) => String(r.id) === id);
    if (!record) throw new FakeHttpError(404, `${object.replace(/s$/, '')} not found`);
    return record;
  };
  const checkBody = (object: string, body: unknown, creating: boolean): Record<string, unknown> => {
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new FakeHttpError(400, 'Invalid request body');
    const known = new Set(
      fieldsOf(object)
        .filter((f) => f.bulk_edit_allowed)
        .map((f) => f.key),
    );
    for (const name of Object.keys(body)) {
      if (!known.has(name) && name !== 'emails' && name !== 'phones') {
        throw new FakeHttpError(400, `Validation failed: ${name}: Parameter is not allowed for this request`);
      }
    }
    const required = requiredOf[object];
    const value = (body as Record<string, unknown>)[required];
    if ((creating || required in body) && (typeof value !== 'string' || value.trim() === '')) {
      throw new FakeHttpError(
        400,
        `Validation failed: ${required}: Parameter '${required}' must be a non-empty string`,
      );
    }
    return body as Record<string, unknown>;
  };

  router.get('/api/v2/:object', (ctx) => {
    const object = objectOf(ctx);
    const limit = ctx.query.limit === undefined ? 100 : Number(ctx.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 500) {
      throw new FakeHttpError(
        400,
        'Validation failed: limit: Parameter must be an integer between 1 and 500',
      );
    }
    const since = timeParameter(ctx, 'updated_since');
    const until = timeParameter(ctx, 'updated_until');
    const sortBy = String(ctx.query.sort_by ?? 'id');
    if (!['id', 'update_time', 'add_time'].includes(sortBy)) {
      throw new FakeHttpError(
        400,
        'Validation failed: sort_by: Parameter must be one of id, update_time, add_time',
      );
    }
    const descending = ctx.query.sort_direction === 'desc';
    const key = (r: FakeRecord) => (sortBy === 'id' ? r.id : Date.parse(String(r[sortBy])));
    // `ids`: up to 100 records by id, those that exist and are visible.
    const ids = typeof ctx.query.ids === 'string' ? new Set(ctx.query.ids.split(',')) : undefined;
    if (ids && ids.size > 100) throw new FakeHttpError(400, 'Validation failed: ids: At most 100 ids');
    const found = live(object)
      .filter((r) => {
        const ms = Date.parse(r.update_time);
        return (
          (since === undefined || ms >= since) &&
          (until === undefined || ms < until) &&
          (ids === undefined || ids.has(String(r.id)))
        );
      })
      .sort((a, b) => (key(a) - key(b) || a.id - b.id) * (descending ? -1 : 1));
    const offset = typeof ctx.query.cursor === 'string' ? decodeCursor(ctx.query.cursor) : 0;
    const page = found.slice(offset, offset + limit);
    const next = offset + page.length;
    ctx.body = {
      success: true,
      data: page,
      additional_data: { next_cursor: next < found.length ? encodeCursor(next) : null },
    };
  });

  // Search (`/api/v2/<object>/search`): one `term` looked for in `fields`, `exact_match` ignoring
  // case, answered as reduced items (`data.items[].item`) paged by cursor.
  router.get('/api/v2/:object/search', (ctx) => {
    const object = objectOf(ctx);
    const term = typeof ctx.query.term === 'string' ? ctx.query.term : '';
    const exact = ctx.query.exact_match === 'true';
    if (term.length < (exact ? 1 : 2)) {
      throw new FakeHttpError(400, 'Validation failed: term: Parameter must be at least 2 characters');
    }
    const allowed = searchFields[object];
    const fields = typeof ctx.query.fields === 'string' ? ctx.query.fields.split(',') : allowed;
    const wrong = fields.filter((name) => !allowed.includes(name));
    if (wrong.length) {
      throw new FakeHttpError(
        400,
        `Validation failed: fields: Parameter must be one or more of ${allowed.join(', ')}`,
      );
    }
    const limit = ctx.query.limit === undefined ? 100 : Number(ctx.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 500) {
      throw new FakeHttpError(
        400,
        'Validation failed: limit: Parameter must be an integer between 1 and 500',
      );
    }
    const matches = (text: unknown) =>
      typeof text === 'string' &&
      (exact ? text.toLowerCase() === term.toLowerCase() : text.toLowerCase().includes(term.toLowerCase()));
    const found = live(object)
      .filter((record) => fields.some((name) => searchedValues(record, name).some(matches)))
      .sort((a, b) => a.id - b.id);
    const offset = typeof ctx.query.cursor === 'string' ? decodeCursor(ctx.query.cursor) : 0;
    const page = found.slice(offset, offset + limit);
    const next = offset + page.length;
    ctx.body = {
      success: true,
      data: { items: page.map((record) => ({ result_score: 1, item: reducedItem(object, record) })) },
      additional_data: { next_cursor: next < found.length ? encodeCursor(next) : null },
    };
  });

  router.get('/api/v2/:object/:id', (ctx) => {
    ctx.body = { success: true, data: recordOf(objectOf(ctx), ctx.params.id) };
  });

  router.post('/api/v2/:object', (ctx) => {
    const object = objectOf(ctx);
    const values = checkBody(object, ctx.request.body, true);
    const id = nextId.get(object)!;
    nextId.set(object, id + 1);
    const now = rfc3339(Date.now());
    const record: FakeRecord = { ...values, id, add_time: now, update_time: now, is_deleted: false };
    records.get(object)!.push(record);
    ctx.body = { success: true, data: record };
  });

  router.patch('/api/v2/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const record = recordOf(object, ctx.params.id);
    Object.assign(record, checkBody(object, ctx.request.body, false), { update_time: rfc3339(Date.now()) });
    ctx.body = { success: true, data: record };
  });

  router.delete('/api/v2/:object/:id', (ctx) => {
    const record = recordOf(objectOf(ctx), ctx.params.id);
    record.is_deleted = true;
    ctx.body = { success: true, data: { id: record.id } };
  });

  router.post('/v1/webhooks', (ctx) => {
    const body = ctx.request.body as Record<string, string>;
    for (const name of ['subscription_url', 'event_action', 'event_object']) {
      if (!body[name]) throw new FakeHttpError(400, `Parameter '${name}' is required.`);
    }
    const webhook = { ...body, id: ++lastWebhookId, version: body.version ?? '1.0' };
    pipedriveWebhooks.set(String(webhook.id), webhook as never);
    ctx.status = 201;
    ctx.body = { success: true, status: 'ok', data: webhook };
  });
  router.delete('/v1/webhooks/:id', (ctx) => {
    if (!pipedriveWebhooks.delete(ctx.params.id)) throw new FakeHttpError(404, 'Webhook not found');
    ctx.body = { success: true, status: 'ok', data: { id: Number(ctx.params.id) } };
  });

  router.get('/v1/:fields', (ctx) => {
    const object = fieldLists[ctx.params.fields];
    if (!object) throw new FakeHttpError(404, 'Unknown method .');
    const start = Number(ctx.query.start ?? 0);
    const limit = Math.min(Number(ctx.query.limit ?? 100), 500);
    const all = fieldsOf(object);
    const page = all.slice(start, start + limit);
    const more = start + page.length < all.length;
    ctx.body = {
      success: true,
      data: page,
      additional_data: {
        pagination: {
          start,
          limit,
          more_items_in_collection: more,
          ...(more && { next_start: start + page.length }),
        },
      },
    };
  });

  await fake.start();

  const seed = (object: string, modifiedTimes: number[]): string[] =>
    modifiedTimes.map((ms) => {
      const id = nextId.get(object)!;
      nextId.set(object, id + 1);
      const record: FakeRecord = {
        id,
        [requiredOf[object]]: `${object} ${id}`,
        add_time: rfc3339(ms),
        update_time: rfc3339(ms),
        is_deleted: false,
      };
      records.get(object)!.push(record);
      return String(id);
    });

  return {
    url: fake.url,
    tokenUrl: fake.tokenUrl,
    get credential() {
      return fake.credential;
    },
    rotateCredential: () => fake.rotateCredential(),
    refuseRefresh: () => fake.refuseRefresh(),
    requests: fake.requests,
    records: (object) => records.get(object)!,
    seed,
    stored: (object, id) => live(object).find((record) => String(record.id) === id),
    touch(object, id, modifiedMs) {
      recordOf(object, id).update_time = rfc3339(modifiedMs);
    },
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    reset,
    stop: () => fake.stop(),
  };
}

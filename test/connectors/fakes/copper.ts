import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { FakeHttpError, FakeProvider, RecordStore } from '../kit/fake-provider.js';

/**
 * A local stand-in for Copper's Developer API (https://developer.copper.com/), answering with the
 * documented shapes: every call carries `X-PW-AccessToken`, `X-PW-Application: developer_api` and
 * `X-PW-UserEmail`; people, companies and opportunities are listed by `POST /v1/<entity>/search`
 * (`page_size` ≤ 200, `page_number` from 1, `sort_by`/`sort_direction`, `minimum_modified_date` and
 * `maximum_modified_date` in Unix seconds, search criteria `name`, `emails` (people) and
 * `phone_number` (people, companies), a bare JSON array answered, the total in `X-PW-TOTAL`);
 * records carry `date_created`/`date_modified` in Unix seconds and `custom_fields`; `PUT` updates
 * only the fields sent; `DELETE` answers `{id, is_deleted}`; custom field definitions list every
 * entity's fields with `available_on`; errors are `{success: false, status, message}`.
 */

type CopperRecord = Record<string, unknown> & { id: number; date_modified: number };

const entities = ['people', 'companies', 'opportunities'] as const;
type Entity = (typeof entities)[number];
const maxPageSize = 200;
/** The user whose key the fake accepts; a spec gives it as the connection's `userEmail`. */
export const copperUserEmail = 'owner@example.com';

const customFieldDefinitions = [
  {
    id: 101,
    name: 'Region',
    canonical_name: null,
    data_type: 'Dropdown',
    available_on: ['person', 'company'],
    is_filterable: true,
    options: [
      { id: 1001, name: 'EMEA', rank: 0 },
      { id: 1002, name: 'Americas', rank: 1 },
    ],
  },
  {
    id: 102,
    name: 'Newsletter',
    canonical_name: null,
    data_type: 'Checkbox',
    available_on: ['person'],
    is_filterable: true,
  },
  {
    id: 103,
    name: 'Seats',
    canonical_name: null,
    data_type: 'Float',
    available_on: ['opportunity'],
    is_filterable: true,
  },
  {
    id: 104,
    name: 'Lead notes',
    canonical_name: null,
    data_type: 'Text',
    available_on: ['lead'],
    is_filterable: false,
  },
];

/** Webhook subscriptions the fake holds, by id, as Copper answers them: one per type and event. */
export const copperWebhooks = new Map<
  number,
  {
    id: number;
    target: string;
    type: string;
    event: string;
    secret?: Record<string, string>;
    created_at: number;
  }
>();
let nextWebhookId = 17065;

/**
 * A notification as Copper sends it (https://developer.copper.com/webhooks/notification-example.html):
 * no signature; the subscription's `secret` key/values at the top level beside `ids`, `type`,
 * `event`, `subscription_id`, `timestamp` and, for updates, `updated_attributes` of
 * `[old, new]` pairs.
 */
export function copperWebhookNotification(
  subscriptionId: number,
  ids: number[],
  extra: Record<string, unknown> = {},
): string {
  const subscription = copperWebhooks.get(subscriptionId)!;
  return JSON.stringify({
    ids,
    type: subscription.type,
    event: subscription.event,
    subscription_id: subscription.id,
    timestamp: new Date().toISOString(),
    ...subscription.secret,
    ...extra,
  });
}

export async function startFakeCopper(): Promise<ConformanceFake> {
  const stores = Object.fromEntries(
    entities.map((entity) => [entity, new RecordStore<CopperRecord>()]),
  ) as Record<Entity, RecordStore<CopperRecord>>;
  let nextId = 1;

  const fake = new FakeProvider({
    credentialOf: (ctx) =>
      ctx.get('x-pw-application') === 'developer_api' && ctx.get('x-pw-useremail') === copperUserEmail
        ? ctx.get('x-pw-accesstoken') || undefined
        : undefined,
    errorBody: (error) => ({
      success: false,
      status: error.status,
      message: error.status === 401 ? 'Invalid credentials' : error.message,
    }),
  });

  const entityOf = (ctx: Context): Entity => {
    const entity = ctx.params.entity as Entity;
    if (!entities.includes(entity)) throw new FakeHttpError(404, 'Resource not found');
    return entity;
  };

  const recordOf = (entity: Entity, id: string): CopperRecord => {
    const row = stores[entity].get(id);
    if (!row) throw new FakeHttpError(404, 'Resource not found');
    return row.record;
  };

  const touch = (entity: Entity, record: CopperRecord, ms: number) => {
    record.date_modified = Math.floor(ms / 1000);
    stores[entity].put(String(record.id), record, ms);
  };

  const newRecord = (entity: Entity, values: Record<string, unknown>, ms: number): CopperRecord => {
    const id = nextId++;
    const seconds = Math.floor(ms / 1000);
    const base = {
      id,
      assignee_id: null,
      tags: [],
      details: null,
      custom_fields: [],
      interaction_count: 0,
      date_created: seconds,
      date_modified: seconds,
    };
    const record: CopperRecord =
      entity === 'people'
        ? {
            ...base,
            name: '',
            first_name: null,
            last_name: null,
            title: null,
            company_id: null,
            company_name: null,
            emails: [],
            phone_numbers: [],
            address: null,
            ...values,
          }
        : entity === 'companies'
          ? {
              ...base,
              name: '',
              email_domain: null,
              phone_numbers: [],
              address: null,
              websites: [],
              ...values,
            }
          : {
              ...base,
              name: '',
              primary_contact_id: null,
              company_id: null,
              pipeline_id: 1,
              pipeline_stage_id: 10,
              monetary_value: null,
              win_probability: 0,
              close_date: null,
              status: 'Open',
              priority: 'None',
              ...values,
            };
    stores[entity].put(String(id), record, ms);
    return record;
  };

  const checkValues = (entity: Entity, body: unknown, creating: boolean): Record<string, unknown> => {
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      throw new FakeHttpError(400, 'Request body must be a JSON object');
    }
    const values = { ...(body as Record<string, unknown>) };
    for (const readOnly of ['id', 'date_created', 'date_modified', 'interaction_count'])
      delete values[readOnly];
    if (creating && (typeof values.name !== 'string' || !values.name)) {
      throw new FakeHttpError(422, 'Validation error: Name is required');
    }
    if (entity === 'opportunities' && (creating || 'primary_contact_id' in values)) {
      if (!stores.people.get(String(values.primary_contact_id))) {
        throw new FakeHttpError(422, 'Validation error: Primary contact is required');
      }
    }
    return values;
  };

  const router = fake.router;

  // Webhooks (https://developer.copper.com/webhooks/create-new-subscription.html), before the
  // entity routes that would take `webhooks` for an entity.
  router.post('/v1/webhooks', (ctx) => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const types = ['lead', 'person', 'company', 'opportunity', 'project', 'task'];
    if (typeof body.target !== 'string' || !body.target.startsWith('https://')) {
      throw new FakeHttpError(422, 'Invalid input: Invalid URI For External Resource');
    }
    if (!types.includes(String(body.type)) || !['new', 'update', 'delete'].includes(String(body.event))) {
      throw new FakeHttpError(422, 'Invalid input: type and event are required');
    }
    // "You may have up to 100 active subscriptions per account" (the answer's wording is the fake's).
    if (copperWebhooks.size >= 100) throw new FakeHttpError(422, 'Subscription limit reached');
    const subscription = {
      id: nextWebhookId++,
      target: body.target,
      type: String(body.type),
      event: String(body.event),
      ...(body.secret !== undefined && { secret: body.secret as Record<string, string> }),
      created_at: Math.floor(Date.now() / 1000),
    };
    copperWebhooks.set(subscription.id, subscription);
    ctx.body = subscription;
  });
  router.delete('/v1/webhooks/:id', (ctx) => {
    const subscription = copperWebhooks.get(Number(ctx.params.id));
    if (!subscription) throw new FakeHttpError(404, 'Resource not found');
    copperWebhooks.delete(subscription.id);
    ctx.body = subscription;
  });

  router.get('/v1/custom_field_definitions', (ctx) => {
    ctx.body = customFieldDefinitions;
  });

  router.post('/v1/:entity/search', (ctx) => {
    const entity = entityOf(ctx);
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const pageSize = Number(body.page_size ?? 20);
    const pageNumber = Number(body.page_number ?? 1);
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > maxPageSize) {
      throw new FakeHttpError(422, `Invalid input: page_size must be between 1 and ${maxPageSize}`);
    }
    if (!Number.isInteger(pageNumber) || pageNumber < 1) {
      throw new FakeHttpError(422, 'Invalid input: page_number must be at least 1');
    }
    const seconds = (name: string): number | undefined => {
      const value = body[name];
      if (value === undefined || value === null) return undefined;
      if (typeof value !== 'number')
        throw new FakeHttpError(422, `Invalid input: ${name} must be a Unix timestamp`);
      return value;
    };
    const min = seconds('minimum_modified_date');
    const max = seconds('maximum_modified_date');
    // Search criteria (all must hold): a full name; a person's emails (any of them); a phone number.
    const criteria: ((record: CopperRecord) => boolean)[] = [];
    if (body.name !== undefined) criteria.push((record) => record.name === body.name);
    if (body.emails !== undefined) {
      if (entity !== 'people' || !Array.isArray(body.emails))
        throw new FakeHttpError(422, 'Invalid input: emails must be a list of strings');
      const wanted = body.emails as unknown[];
      criteria.push((record) =>
        ((record.emails ?? []) as { email: string }[]).some((email) => wanted.includes(email.email)),
      );
    }
    if (body.phone_number !== undefined && entity !== 'opportunities') {
      criteria.push((record) =>
        ((record.phone_numbers ?? []) as { number: string }[]).some(
          (phone) => phone.number === body.phone_number,
        ),
      );
    }
    const sortBy = String(body.sort_by ?? 'name');
    const direction = body.sort_direction === 'desc' ? -1 : 1;
    const found = stores[entity]
      .live()
      .map((row) => row.record)
      // Both bounds are inclusive, to the second.
      .filter(
        (record) =>
          (min === undefined || record.date_modified >= min) &&
          (max === undefined || record.date_modified <= max) &&
          criteria.every((holds) => holds(record)),
      )
      .sort((a, b) => {
        const [x, y] = [a[sortBy] as string | number, b[sortBy] as string | number];
        const order = x < y ? -1 : x > y ? 1 : 0;
        return order !== 0 ? direction * order : a.id - b.id;
      });
    ctx.set('X-PW-TOTAL', String(found.length));
    ctx.body = found.slice((pageNumber - 1) * pageSize, pageNumber * pageSize);
  });

  router.get('/v1/:entity/:id', (ctx) => {
    ctx.body = recordOf(entityOf(ctx), ctx.params.id);
  });

  router.post('/v1/:entity', (ctx) => {
    const entity = entityOf(ctx);
    ctx.body = newRecord(entity, checkValues(entity, ctx.request.body, true), Date.now());
  });

  router.put('/v1/:entity/:id', (ctx) => {
    const entity = entityOf(ctx);
    const record = recordOf(entity, ctx.params.id);
    Object.assign(record, checkValues(entity, ctx.request.body, false));
    touch(entity, record, Date.now());
    ctx.body = record;
  });

  router.delete('/v1/:entity/:id', (ctx) => {
    const entity = entityOf(ctx);
    const record = recordOf(entity, ctx.params.id);
    stores[entity].rows.get(String(record.id))!.deleted = true;
    ctx.body = { id: record.id, is_deleted: true };
  });

  await fake.start();
  const fixturePerson = newRecord('people', { name: 'Fixture Person' }, Date.UTC(2020, 0, 1));
  if (fixturePerson.id !== copperFixturePersonId)
    throw new Error(`the fixture person is ${fixturePerson.id}`);

  return {
    url: fake.url,
    tokenUrl: fake.tokenUrl,
    get credential() {
      return fake.credential;
    },
    rotateCredential: () => fake.rotateCredential(),
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    requests: fake.requests,
    seed: (entity, modifiedTimes) =>
      modifiedTimes.map((ms) => {
        const values: Record<string, unknown> =
          entity === 'opportunities'
            ? { name: `Deal ${ms}`, primary_contact_id: copperFixturePersonId }
            : { name: `${entity} ${ms}` };
        return String(newRecord(entity as Entity, values, ms).id);
      }),
    touch(entity, id, modifiedMs) {
      touch(entity as Entity, recordOf(entity as Entity, id), modifiedMs);
    },
    stored: (entity, id) => stores[entity as Entity].get(id)?.record,
    stop: () => fake.stop(),
  };
}

/** The person the fake starts with; a spec's opportunity names it as the primary contact. */
export const copperFixturePersonId = 1;

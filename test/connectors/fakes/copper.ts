import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { FakeHttpError, FakeProvider, RecordStore } from '../kit/fake-provider.js';

/**
 * A local stand-in for Copper's Developer API (https://developer.copper.com/), answering with the
 * documented shapes: every call carries `X-PW-AccessToken`, `X-PW-Application: developer_api` and
 * `X-PW-UserEmail`; people, companies and opportunities are listed by `POST /v1/<entity>/search`
 * (`page_size` default 20, at most 200, `page_number` from 1, `sort_by` (people `first_name`, others
 * `name` by default) and `sort_direction` (default `asc`), `minimum_modified_date` and
 * `maximum_modified_date` in Unix seconds, both inclusive, search criteria `name`, `emails`
 * (people) and `phone_number` (people, companies); only the first 100,000 matches are reachable;
 * a bare JSON array answered, the total in `X-PW-TOTAL`); records carry `date_created` and
 * `date_modified` in Unix seconds and `custom_fields` as `[{custom_field_definition_id, value}]`
 * for every custom field of the entity (null when empty); `PUT` updates only the fields sent
 * (custom fields merged by definition); `DELETE` answers `{id, is_deleted}` and the record is gone
 * (Copper lists no deletions: only a `delete` webhook tells); custom field definitions list every
 * entity's fields with `available_on`; 180 requests a minute, rolling, then 429; errors are
 * `{success: false, status, message}`.
 */

type CopperRecord = Record<string, unknown> & { id: number; date_modified: number };

const entities = ['people', 'companies', 'opportunities'] as const;
type Entity = (typeof entities)[number];
const maxPageSize = 200;
const defaultPageSize = 20;
/** "Search requests are limited to returning only the first 100,000 records regardless of the pagination parameters." */
const searchCap = 100_000;
/** "All API calls are limited to 180 requests per minute", on a rolling window. */
const requestsPerMinute = 180;
const entityTypes: Record<Entity, string> = {
  people: 'person',
  companies: 'company',
  opportunities: 'opportunity',
};
const defaultSort: Record<Entity, string> = {
  people: 'first_name',
  companies: 'name',
  opportunities: 'name',
};
const sortable: Record<Entity, string[]> = {
  people: [
    'name',
    'first_name',
    'last_name',
    'title',
    'company_name',
    'date_modified',
    'date_created',
    'interaction_count',
  ],
  companies: ['name', 'email_domain', 'date_modified', 'date_created', 'interaction_count'],
  opportunities: [
    'name',
    'monetary_value',
    'close_date',
    'status',
    'date_modified',
    'date_created',
    'interaction_count',
  ],
};
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

export interface FakeCopperOptions {
  /** Requests a minute before a 429 (Copper: 180); false turns the limit off. */
  requestsPerMinute?: number | false;
}

export async function startFakeCopper(options: FakeCopperOptions = {}): Promise<ConformanceFake> {
  const stores = Object.fromEntries(
    entities.map((entity) => [entity, new RecordStore<CopperRecord>()]),
  ) as Record<Entity, RecordStore<CopperRecord>>;
  let nextId = 1;
  /** Versions shown until a late change commits (`touch(…, {visibleFromMs})`). */
  const previous = new Map<string, CopperRecord>();
  const limit = options.requestsPerMinute ?? requestsPerMinute;
  let requestTimes: number[] = [];

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

  const now = () => fake.now();
  /** The version readers see now: the previous one until a late change commits. */
  const visible = (
    entity: Entity,
    row: { record: CopperRecord; modifiedMs: number; visibleFromMs?: number },
  ) =>
    (row.visibleFromMs ?? row.modifiedMs) <= now() ? row.record : previous.get(`${entity}:${row.record.id}`);

  const recordOf = (entity: Entity, id: string): CopperRecord => {
    const row = stores[entity].get(id);
    const record = row && visible(entity, row);
    if (!record) throw new FakeHttpError(404, 'Resource not found');
    return record;
  };

  const touch = (entity: Entity, record: CopperRecord, ms: number, visibleFromMs = ms) => {
    const row = stores[entity].get(String(record.id))!;
    const shown = visible(entity, row);
    if (shown) previous.set(`${entity}:${record.id}`, structuredClone(shown));
    record.date_modified = Math.floor(ms / 1000);
    stores[entity].put(String(record.id), record, ms, visibleFromMs);
  };

  /** Every custom field of the entity, `{custom_field_definition_id, value}`, null when empty. */
  const customFieldsOf = (
    entity: Entity,
    given: unknown = [],
  ): { custom_field_definition_id: number; value: unknown }[] => {
    const values = new Map(
      (Array.isArray(given) ? given : []).map(
        (entry: { custom_field_definition_id: number; value: unknown }) => [
          Number(entry.custom_field_definition_id),
          entry.value,
        ],
      ),
    );
    return customFieldDefinitions
      .filter((definition) => definition.available_on.includes(entityTypes[entity]))
      .map((definition) => ({
        custom_field_definition_id: definition.id,
        value: values.get(definition.id) ?? null,
      }));
  };

  const newRecord = (entity: Entity, values: Record<string, unknown>, ms: number): CopperRecord => {
    const id = nextId++;
    const seconds = Math.floor(ms / 1000);
    const base = {
      id,
      assignee_id: null,
      tags: [],
      details: null,
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
    record.custom_fields = customFieldsOf(entity, values.custom_fields);
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
    if (values.custom_fields !== undefined) {
      if (!Array.isArray(values.custom_fields))
        throw new FakeHttpError(422, 'Invalid input: custom_fields must be a list');
      for (const entry of values.custom_fields as {
        custom_field_definition_id?: unknown;
        value?: unknown;
      }[]) {
        const definition = customFieldDefinitions.find(
          (d) => d.id === Number(entry?.custom_field_definition_id),
        );
        if (!definition || !definition.available_on.includes(entityTypes[entity])) {
          throw new FakeHttpError(
            422,
            `Invalid input: custom field definition ${String(entry?.custom_field_definition_id)} is not available on this ${entityTypes[entity]}`,
          );
        }
        if (
          definition.options &&
          entry.value !== null &&
          !definition.options.some((o) => o.id === entry.value)
        ) {
          throw new FakeHttpError(
            422,
            `Invalid input: ${String(entry.value)} is not an option of ${definition.name}`,
          );
        }
      }
    }
    return values;
  };

  const router = fake.router;

  // 180 requests a minute, on a rolling window (wall clock).
  router.use(async (_ctx, next) => {
    if (limit !== false) {
      const wall = Date.now();
      requestTimes = requestTimes.filter((t) => t > wall - 60_000);
      if (requestTimes.length >= limit) throw new FakeHttpError(429, 'Rate limit exceeded');
      requestTimes.push(wall);
    }
    await next();
  });

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
      created_at: Math.floor(now() / 1000),
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
    const pageSize = Number(body.page_size ?? defaultPageSize);
    const pageNumber = Number(body.page_number ?? 1);
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > maxPageSize) {
      throw new FakeHttpError(422, `Invalid input: page_size must be between 1 and ${maxPageSize}`);
    }
    if (!Number.isInteger(pageNumber) || pageNumber < 1) {
      throw new FakeHttpError(422, 'Invalid input: page_number must be at least 1');
    }
    fake.logListing(ctx, { object: entity, pageSize, maxPageSize });
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
    const sortBy = String(body.sort_by ?? defaultSort[entity]);
    if (!sortable[entity].includes(sortBy))
      throw new FakeHttpError(422, `Invalid input: cannot sort by ${sortBy}`);
    const direction = body.sort_direction === 'desc' ? -1 : 1;
    const found = stores[entity]
      .live()
      .map((row) => visible(entity, row))
      .filter((record): record is CopperRecord => record !== undefined)
      // Both bounds are inclusive, to the second.
      .filter(
        (record) =>
          (min === undefined || record.date_modified >= min) &&
          (max === undefined || record.date_modified <= max) &&
          criteria.every((holds) => holds(record)),
      )
      .sort((a, b) => {
        const [x, y] = [a[sortBy] as string | number | null, b[sortBy] as string | number | null];
        // Empty values sort last (verify).
        if (x === y || (x == null && y == null)) return a.id - b.id;
        if (x == null) return 1;
        if (y == null) return -1;
        return direction * (x < y ? -1 : 1);
      });
    ctx.set('X-PW-TOTAL', String(found.length));
    ctx.body = found.slice(0, searchCap).slice((pageNumber - 1) * pageSize, pageNumber * pageSize);
  });

  router.get('/v1/:entity/:id', (ctx) => {
    ctx.body = recordOf(entityOf(ctx), ctx.params.id);
  });

  router.post('/v1/:entity', (ctx) => {
    const entity = entityOf(ctx);
    ctx.body = newRecord(entity, checkValues(entity, ctx.request.body, true), now());
  });

  router.put('/v1/:entity/:id', (ctx) => {
    const entity = entityOf(ctx);
    recordOf(entity, ctx.params.id);
    const record = stores[entity].get(ctx.params.id)!.record;
    const values = checkValues(entity, ctx.request.body, false);
    touch(entity, record, now());
    const customFields = values.custom_fields as
      { custom_field_definition_id: number; value: unknown }[] | undefined;
    delete values.custom_fields;
    Object.assign(record, values);
    if (customFields) {
      record.custom_fields = customFieldsOf(entity, [
        ...(record.custom_fields as { custom_field_definition_id: number; value: unknown }[]),
        ...customFields,
      ]);
    }
    ctx.body = record;
  });

  router.delete('/v1/:entity/:id', (ctx) => {
    const entity = entityOf(ctx);
    const record = recordOf(entity, ctx.params.id);
    stores[entity].remove(String(record.id), now());
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
    setClock: (clock) => fake.setClock(clock),
    touch(entity, id, modifiedMs, touchOptions) {
      const row = stores[entity as Entity].get(id);
      if (!row) throw new Error(`no ${entity} ${id} in the fake`);
      touch(entity as Entity, row.record, modifiedMs, touchOptions?.visibleFromMs ?? modifiedMs);
    },
    // Copper lists no deletions: the record is simply gone (a `delete` webhook is the only notice).
    remove(entity, id, atMs) {
      stores[entity as Entity].remove(id, atMs);
    },
    stored: (entity, id) => stores[entity as Entity].get(id)?.record,
    stop: () => fake.stop(),
  };
}

/** The person the fake starts with; a spec's opportunity names it as the primary contact. */
export const copperFixturePersonId = 1;

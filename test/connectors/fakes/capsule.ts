import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider, RecordStore } from '../kit/fake-provider.js';

/**
 * A local stand-in for Capsule CRM's API v2 (https://developer.capsulecrm.com/v2/), answering with
 * the documented shapes: OAuth bearer tokens; parties and opportunities under `/api/v2/<entity>`
 * listed with `page`/`perPage` (default 50, 100 at most) and `since` ("changed after this date":
 * strictly after), in id order, the next page in a `Link: <…>; rel="next"` header; times in whole
 * seconds (`2015-09-15T10:43:23Z`); custom field values (`fields: [{id, definition, value}]`) and
 * tags only on `embed=fields` / `embed=tags`; records wrapped in the singular on reads and writes
 * (`{party: {...}}`); `DELETE` answering 204, the deletion then listed by
 * `/api/v2/<entity>/deleted?since=` (`{parties: [{id, deletedAt}]}`, deleted after `since`);
 * custom field definitions per entity at `/api/v2/<entity>/fields/definitions`; errors
 * `{message, errors: [{message, resource, field}]}`; `X-RateLimit-Limit`/`-Remaining`/`-Reset`
 * headers, and a 429 beyond 4,000 requests an hour.
 */

type CapsuleRecord = Record<string, unknown> & { id: number; updatedAt: string };

const entities = ['parties', 'opportunities'] as const;
type Entity = (typeof entities)[number];
const singular: Record<Entity, string> = { parties: 'party', opportunities: 'opportunity' };
const maxPerPage = 100;

/** The filter fields the fake keeps (the reference's field reference lists more), and what each reads. */
const filterFields: Record<Entity, Record<string, (record: CapsuleRecord) => unknown>> = {
  parties: {
    name: (record) => record.name ?? [record.firstName, record.lastName].filter(Boolean).join(' '),
    jobTitle: (record) => record.jobTitle,
    type: (record) => record.type,
  },
  opportunities: { name: (record) => record.name },
};
const hourlyLimit = 4000;

const definitions: Record<Entity, Record<string, unknown>[]> = {
  parties: [
    {
      id: 201,
      name: 'Segment',
      type: 'list',
      options: ['SMB', 'Enterprise'],
      important: false,
      displayOrder: 1,
      tag: null,
      description: null,
      captureRule: 'party',
    },
    {
      id: 202,
      name: 'Newsletter',
      type: 'boolean',
      options: [],
      important: false,
      displayOrder: 2,
      tag: null,
      description: null,
      captureRule: 'party',
    },
  ],
  opportunities: [
    {
      id: 301,
      name: 'Seats',
      type: 'number',
      options: [],
      important: true,
      displayOrder: 1,
      tag: null,
      description: null,
      captureRule: 'opportunity',
    },
  ],
};

export async function startFakeCapsule(): Promise<ConformanceFake> {
  const stores = Object.fromEntries(
    entities.map((entity) => [entity, new RecordStore<CapsuleRecord>()]),
  ) as Record<Entity, RecordStore<CapsuleRecord>>;
  let nextId = 1;
  let used = 0;

  const resetAt = () => Math.ceil(Date.now() / 3_600_000) * 3600;
  const fake = new FakeProvider({
    prefix: '/api',
    credentialOf: bearerCredential,
    errorBody: (error) =>
      error.code === 'validation'
        ? { message: 'Validation failed', errors: JSON.parse(error.message) as unknown[] }
        : { message: error.status === 401 ? 'authentication failed' : error.message },
    rateLimitHeaders: () => ({
      'X-RateLimit-Limit': String(hourlyLimit),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(resetAt()),
    }),
  });

  fake.router.use(async (ctx, next) => {
    used += 1;
    ctx.set('X-RateLimit-Limit', String(hourlyLimit));
    ctx.set('X-RateLimit-Remaining', String(Math.max(0, hourlyLimit - used)));
    ctx.set('X-RateLimit-Reset', String(resetAt()));
    await next();
  });

  const entityOf = (ctx: Context): Entity => {
    const entity = ctx.params.entity as Entity;
    if (!entities.includes(entity)) throw new FakeHttpError(404, 'Not Found');
    return entity;
  };

  const recordOf = (entity: Entity, id: string): CapsuleRecord => {
    const row = stores[entity].get(id);
    if (!row) throw new FakeHttpError(404, `Could not find resource with id ${id}`);
    return row.record;
  };

  const invalid = (resource: string, field: string, message: string) =>
    new FakeHttpError(422, JSON.stringify([{ message, resource, field }]), 'validation');

  /** Capsule keeps times in whole seconds. */
  const second = (ms: number) => Math.floor(ms / 1000) * 1000;
  const capsuleTime = (ms: number) => new Date(second(ms)).toISOString().replace(/\.\d{3}Z$/, 'Z');
  /** What lists see of a row changed with a late `visibleFromMs`: its time before. */
  const listedBefore = new Map<string, number>();
  const listedMs = (row: { record: CapsuleRecord; modifiedMs: number; visibleFromMs?: number }) =>
    row.visibleFromMs !== undefined && row.visibleFromMs > fake.now()
      ? (listedBefore.get(String(row.record.id)) ?? Number.NaN)
      : row.modifiedMs;

  const touch = (entity: Entity, record: CapsuleRecord, ms: number, visibleFromMs?: number) => {
    const before = stores[entity].get(String(record.id));
    if (visibleFromMs !== undefined && before) listedBefore.set(String(record.id), before.modifiedMs);
    else listedBefore.delete(String(record.id));
    record.updatedAt = capsuleTime(ms);
    stores[entity].put(String(record.id), record, second(ms), visibleFromMs);
  };

  /** A record as a list or get answers it: `fields` and `tags` only when `embed` asks for them. */
  const shaped = (record: CapsuleRecord, ctx: Context): Record<string, unknown> => {
    const embed = new Set(typeof ctx.query.embed === 'string' ? ctx.query.embed.split(',') : []);
    const { fields, tags, ...rest } = record;
    return {
      ...rest,
      ...(embed.has('fields') && { fields }),
      ...(embed.has('tags') && { tags }),
    };
  };

  const newRecord = (entity: Entity, values: Record<string, unknown>, ms: number): CapsuleRecord => {
    const id = nextId++;
    const time = capsuleTime(ms);
    const base = {
      id,
      createdAt: time,
      updatedAt: time,
      owner: { id: 1, username: 'owner', name: 'Owner' },
      team: null,
      fields: [],
      tags: [],
    };
    const record: CapsuleRecord =
      entity === 'parties'
        ? {
            ...base,
            type: 'person',
            firstName: null,
            lastName: null,
            title: null,
            jobTitle: null,
            about: null,
            organisation: null,
            lastContactedAt: null,
            emailAddresses: [],
            phoneNumbers: [],
            addresses: [],
            websites: [],
            ...values,
          }
        : {
            ...base,
            name: '',
            description: null,
            party: null,
            milestone: { id: 1, name: 'New' },
            value: { amount: 0, currency: 'GBP' },
            expectedCloseOn: null,
            probability: 10,
            closedOn: null,
            durationBasis: 'FIXED',
            ...values,
          };
    stores[entity].put(String(id), record, second(ms));
    return record;
  };

  const checkValues = (entity: Entity, body: unknown, existing?: CapsuleRecord): Record<string, unknown> => {
    const wrapped = (body as Record<string, unknown> | undefined)?.[singular[entity]];
    if (!wrapped || typeof wrapped !== 'object' || Array.isArray(wrapped)) {
      throw new FakeHttpError(400, `The request must hold a ${singular[entity]} object`);
    }
    const values = { ...(wrapped as Record<string, unknown>) };
    for (const readOnly of ['id', 'createdAt', 'updatedAt', 'lastContactedAt', 'closedOn'])
      delete values[readOnly];
    // Custom field values are written as `fields: [{definition: {id}, value}]`.
    if ('fields' in values) {
      if (!Array.isArray(values.fields)) throw invalid(singular[entity], 'fields', 'fields must be a list');
      const known = new Map(definitions[entity].map((definition) => [definition.id, definition]));
      values.fields = (values.fields as { definition?: { id?: unknown }; value?: unknown }[]).map(
        (field, index) => {
          const definition = known.get(Number(field?.definition?.id));
          if (!definition) throw invalid(singular[entity], 'fields', 'unknown custom field definition');
          return {
            id: 9000 + index,
            definition: { id: definition.id, name: definition.name },
            value: field.value,
            tagId: null,
          };
        },
      );
    }
    const merged = { ...existing, ...values };
    if (entity === 'parties') {
      if (merged.type !== 'person' && merged.type !== 'organisation') {
        throw invalid('party', 'type', 'type must be person or organisation');
      }
      if (merged.type === 'person' && !merged.firstName && !merged.lastName) {
        throw invalid('party', 'firstName', 'person must have a first name or last name');
      }
      if (merged.type === 'organisation' && !merged.name) throw invalid('party', 'name', 'name is required');
    } else {
      if (!merged.name) throw invalid('opportunity', 'name', 'name is required');
      const party = merged.party as { id?: unknown } | null | undefined;
      if (!party || !stores.parties.get(String(party.id)))
        throw invalid('opportunity', 'party', 'party is required');
      const milestone = merged.milestone as { id?: unknown } | null | undefined;
      if (!milestone?.id) throw invalid('opportunity', 'milestone', 'milestone is required');
    }
    return values;
  };

  const router = fake.router;

  router.get('/v2/:entity/fields/definitions', (ctx) => {
    ctx.body = { definitions: definitions[entityOf(ctx)] };
  });

  const sinceOf = (ctx: Context): number | undefined => {
    if (ctx.query.since === undefined) return undefined;
    const since = Date.parse(String(ctx.query.since));
    if (Number.isNaN(since)) throw new FakeHttpError(400, 'since must be an ISO 8601 date and time');
    return since;
  };

  // Deleted records (`GET /<entity>/deleted?since=`): "deleted after this date/time".
  router.get('/v2/:entity/deleted', (ctx) => {
    const entity = entityOf(ctx);
    const since = sinceOf(ctx);
    if (since === undefined && entity === 'parties') throw new FakeHttpError(400, 'since is required');
    fake.logListing(ctx, {
      object: `${entity}/deleted`,
      pageSize: Number.MAX_SAFE_INTEGER,
      maxPageSize: Number.MAX_SAFE_INTEGER,
    });
    const now = fake.now();
    ctx.body = {
      [entity]: stores[entity]
        .removed()
        .filter((row) => row.deletedMs! <= now && (since === undefined || row.deletedMs! > since))
        .map((row) => ({ id: row.record.id, deletedAt: capsuleTime(row.deletedMs!) })),
    };
  });

  router.get('/v2/:entity', (ctx) => {
    const entity = entityOf(ctx);
    const perPage = Number(ctx.query.perPage ?? 50);
    const page = Number(ctx.query.page ?? 1);
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > maxPerPage) {
      throw new FakeHttpError(400, `perPage must be between 1 and ${maxPerPage}`);
    }
    if (!Number.isInteger(page) || page < 1) throw new FakeHttpError(400, 'page must be a positive integer');
    fake.logListing(ctx, { object: entity, pageSize: perPage, maxPageSize: maxPerPage });
    const since = sinceOf(ctx);
    // "includes only entities that have been changed after this date": strictly after, compared
    // with the whole-second `updatedAt`; in id order.
    const rows = stores[entity].live().filter((row) => {
      const ms = listedMs(row);
      return !Number.isNaN(ms) && (since === undefined || ms > since);
    });
    const start = (page - 1) * perPage;
    if (start + perPage < rows.length) {
      const next = new URLSearchParams({ ...(ctx.query as Record<string, string>), page: String(page + 1) });
      ctx.set('Link', `<${fake.url}${ctx.path.slice('/api'.length)}?${next.toString()}>; rel="next"`);
    }
    ctx.body = { [entity]: rows.slice(start, start + perPage).map((row) => shaped(row.record, ctx)) };
  });

  // Filters (https://developer.capsulecrm.com/v2/operations/Filter): `POST /<entity>/filters/results`
  // with `{filter: {conditions: [{field, operator, value}]}}`, all conditions holding, `page` and
  // `perPage` as lists take; only the `is` operator and a few string fields are kept here.
  router.post('/v2/:entity/filters/results', (ctx) => {
    const entity = entityOf(ctx);
    const perPage = Number(ctx.query.perPage ?? 50);
    const page = Number(ctx.query.page ?? 1);
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > maxPerPage) {
      throw new FakeHttpError(400, `perPage must be between 1 and ${maxPerPage}`);
    }
    fake.logListing(ctx, { object: entity, pageSize: perPage, maxPageSize: maxPerPage });
    const body = (ctx.request.body ?? {}) as { filter?: { conditions?: unknown } };
    const conditions = body.filter?.conditions;
    if (!Array.isArray(conditions)) throw invalid('filter', 'conditions', 'conditions must be a list');
    const tests = conditions.map((condition) => {
      const { field, operator, value } = (condition ?? {}) as Record<string, unknown>;
      const read = filterFields[entity][String(field)];
      if (!read) throw invalid('filter', 'field', `${String(field)} is not a valid field`);
      if (operator !== 'is') throw invalid('filter', 'operator', `${String(operator)} is not supported`);
      const wanted = String(value).toLowerCase();
      return (record: CapsuleRecord) => String(read(record) ?? '').toLowerCase() === wanted;
    });
    const rows = stores[entity].live().filter((row) => tests.every((test) => test(row.record)));
    const start = (page - 1) * perPage;
    if (start + perPage < rows.length) {
      const next = new URLSearchParams({ ...(ctx.query as Record<string, string>), page: String(page + 1) });
      ctx.set('Link', `<${fake.url}${ctx.path.slice('/api'.length)}?${next.toString()}>; rel="next"`);
    }
    ctx.body = { [entity]: rows.slice(start, start + perPage).map((row) => shaped(row.record, ctx)) };
  });

  router.get('/v2/:entity/:id', (ctx) => {
    const entity = entityOf(ctx);
    ctx.body = { [singular[entity]]: shaped(recordOf(entity, ctx.params.id), ctx) };
  });

  router.post('/v2/:entity', (ctx) => {
    const entity = entityOf(ctx);
    ctx.status = 201;
    ctx.body = { [singular[entity]]: newRecord(entity, checkValues(entity, ctx.request.body), fake.now()) };
  });

  router.put('/v2/:entity/:id', (ctx) => {
    const entity = entityOf(ctx);
    const record = recordOf(entity, ctx.params.id);
    Object.assign(record, checkValues(entity, ctx.request.body, record));
    touch(entity, record, fake.now());
    ctx.body = { [singular[entity]]: record };
  });

  router.delete('/v2/:entity/:id', (ctx) => {
    const entity = entityOf(ctx);
    const record = recordOf(entity, ctx.params.id);
    stores[entity].remove(String(record.id), second(fake.now()));
    ctx.status = 204;
  });

  await fake.start();
  const fixture = newRecord('parties', { type: 'organisation', name: 'Fixture Ltd' }, Date.UTC(2020, 0, 1));
  if (fixture.id !== capsuleFixturePartyId) throw new Error(`the fixture party is ${fixture.id}`);

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
    setClock: (now) => fake.setClock(now),
    seed: (entity, modifiedTimes) =>
      modifiedTimes.map((ms) => {
        const custom = (id: number, value: unknown) => {
          const definition = definitions[entity as Entity].find((d) => d.id === id)!;
          return { id: 9000 + id, definition: { id, name: definition.name }, value, tagId: null };
        };
        const values: Record<string, unknown> =
          entity === 'parties'
            ? {
                type: 'person',
                firstName: 'Seed',
                lastName: String(ms),
                fields: [custom(201, 'SMB'), custom(202, true)],
              }
            : {
                name: `Deal ${ms}`,
                party: { id: capsuleFixturePartyId },
                milestone: { id: 1, name: 'New' },
                fields: [custom(301, 5)],
              };
        return String(newRecord(entity as Entity, values, ms).id);
      }),
    touch(entity, id, modifiedMs, options) {
      touch(entity as Entity, recordOf(entity as Entity, id), modifiedMs, options?.visibleFromMs);
    },
    remove(entity, id, atMs) {
      recordOf(entity as Entity, id);
      stores[entity as Entity].remove(id, second(atMs));
    },
    stored: (entity, id) => stores[entity as Entity].get(id)?.record,
    stop: () => fake.stop(),
  };
}

/** The organisation the fake starts with; a spec's opportunity belongs to it. */
export const capsuleFixturePartyId = 1;

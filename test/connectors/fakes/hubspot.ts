import { createHmac, randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';

/**
 * A local stand-in for HubSpot's CRM v3 API, answering with the documented shapes: objects
 * (`{id, properties, createdAt, updatedAt, archived}`), list paging (`paging.next.after`), search
 * (`total`, sorted, filtered with EQ and range operators on known properties only, at most 10,000
 * results per query), properties, and error bodies
 * `{status: 'error', message, correlationId, category}`. Only what Ferry's connector uses.
 */

export interface FakeRecord {
  id: string;
  properties: Record<string, string | null>;
  createdAt: string;
  updatedAt: string;
  archived: boolean;
}

export interface FakeProperty {
  name: string;
  label: string;
  type: string;
  fieldType: string;
  description: string;
  groupName: string;
  options: { label: string; value: string; displayOrder: number; hidden: boolean }[];
  hubspotDefined?: boolean;
  hasUniqueValue?: boolean;
  modificationMetadata: { archivable: boolean; readOnlyDefinition: boolean; readOnlyValue: boolean };
}

export interface FakeHubSpot extends ConformanceFake {
  records(object: string): FakeRecord[];
  properties(object: string): FakeProperty[];
  /** Adds records with the given modification times (ms); ids count up from 1 per object. */
  seedRecords(object: string, modifiedTimes: number[]): FakeRecord[];
  reset(): void;
  close(): Promise<void>;
}

const objects = ['contacts', 'companies', 'deals'];
const searchCap = 10_000;

function modifiedProperty(object: string): string {
  return object === 'contacts' ? 'lastmodifieddate' : 'hs_lastmodifieddate';
}

function property(
  name: string,
  label: string,
  type: string,
  fieldType: string,
  extra: Partial<FakeProperty> = {},
): FakeProperty {
  return {
    name,
    label,
    type,
    fieldType,
    description: '',
    groupName: 'contactinformation',
    options: [],
    hubspotDefined: true,
    modificationMetadata: { archivable: true, readOnlyDefinition: true, readOnlyValue: false },
    ...extra,
  };
}

function builtInProperties(object: string): FakeProperty[] {
  const readOnly = { archivable: false, readOnlyDefinition: true, readOnlyValue: true };
  const common = [
    property('hs_object_id', 'Record ID', 'number', 'number', { modificationMetadata: readOnly }),
    property('createdate', 'Create Date', 'datetime', 'date', { modificationMetadata: readOnly }),
    property(modifiedProperty(object), 'Last Modified Date', 'datetime', 'date', {
      modificationMetadata: readOnly,
    }),
  ];
  if (object === 'contacts') {
    return [
      ...common,
      property('email', 'Email', 'string', 'text'),
      property('firstname', 'First Name', 'string', 'text'),
      property('lastname', 'Last Name', 'string', 'text'),
      property('phone', 'Phone Number', 'string', 'phonenumber'),
      property('lifecyclestage', 'Lifecycle Stage', 'enumeration', 'radio', {
        options: [
          { label: 'Lead', value: 'lead', displayOrder: 0, hidden: false },
          { label: 'Customer', value: 'customer', displayOrder: 1, hidden: false },
        ],
      }),
      property('hs_email_optout', 'Unsubscribed from all email', 'bool', 'booleancheckbox'),
    ];
  }
  if (object === 'companies') {
    return [
      ...common,
      property('name', 'Name', 'string', 'text'),
      property('domain', 'Domain', 'string', 'text'),
    ];
  }
  return [
    ...common,
    property('dealname', 'Deal Name', 'string', 'text'),
    property('amount', 'Amount', 'number', 'number'),
    property('closedate', 'Close Date', 'datetime', 'date'),
  ];
}

/** HubSpot's errors: `{status: 'error', message, correlationId, category}`. */
class HubSpotError extends FakeHttpError {
  constructor(status: number, category: string, message: string) {
    super(status, message, category);
  }
}

function timeValue(value: unknown): number {
  if (typeof value === 'number') return value;
  const text = String(value);
  return /^\d+$/.test(text) ? Number(text) : Date.parse(text);
}

/**
 * A webhook request as HubSpot sends it to an app's target URL
 * (https://developers.hubspot.com/docs/api/webhooks/validating-requests): a JSON array of events,
 * `X-HubSpot-Signature-v3` the base64 HMAC-SHA256, keyed with the app's client secret, of method +
 * URI + body + `X-HubSpot-Request-Timestamp` (Unix milliseconds).
 */
export function hubSpotWebhookRequest(
  clientSecret: string,
  uri: string,
  events: Record<string, unknown>[],
  timestamp = Date.now(),
): { headers: Record<string, string>; body: string } {
  const body = JSON.stringify(events);
  const signature = createHmac('sha256', clientSecret)
    .update(`POST${uri}${body}${timestamp}`)
    .digest('base64');
  return {
    headers: {
      'content-type': 'application/json',
      'X-HubSpot-Signature-v3': signature,
      'X-HubSpot-Request-Timestamp': String(timestamp),
    },
    body,
  };
}

/** One event of a webhook request, as HubSpot's webhooks reference shows them. */
export function hubSpotEvent(
  portalId: number,
  subscriptionType: string,
  objectId: number | string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    eventId: Math.floor(Math.random() * 2 ** 31),
    subscriptionId: 1000 + subscriptionType.length,
    portalId,
    appId: 987654,
    occurredAt: Date.now(),
    subscriptionType,
    attemptNumber: 0,
    objectId: Number(objectId),
    changeSource: 'CRM',
    ...(subscriptionType.endsWith('.creation') && { changeFlag: 'CREATED' }),
    ...(subscriptionType.endsWith('.deletion') && { changeFlag: 'DELETED' }),
    ...extra,
  };
}

export async function startFakeHubSpot(): Promise<FakeHubSpot> {
  const records = new Map<string, FakeRecord[]>();
  const properties = new Map<string, FakeProperty[]>();
  const nextId = new Map<string, number>();

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => ({
      status: 'error',
      message:
        error.status === 401
          ? 'Authentication credentials not found. This API supports OAuth 2.0 authentication.'
          : error.status === 429
            ? 'You have reached your secondly limit.'
            : error.message,
      correlationId: randomUUID(),
      category:
        error.code ??
        (error.status === 401
          ? 'INVALID_AUTHENTICATION'
          : error.status === 429
            ? 'RATE_LIMITS'
            : 'INTERNAL_ERROR'),
    }),
    rateLimitCode: 'RATE_LIMITS',
  });

  const reset = () => {
    for (const object of objects) {
      records.set(object, []);
      properties.set(object, builtInProperties(object));
      nextId.set(object, 1);
    }
    fake.requests.length = 0;
  };
  reset();

  const objectOf = (ctx: Context): string => {
    const object = ctx.params.object;
    if (!objects.includes(object)) {
      throw new HubSpotError(400, 'VALIDATION_ERROR', `Unable to infer object type from: ${object}`);
    }
    return object;
  };

  const recordOf = (object: string, id: string): FakeRecord => {
    const record = records.get(object)!.find((r) => r.id === id && !r.archived);
    if (!record) throw new HubSpotError(404, 'OBJECT_NOT_FOUND', 'resource not found');
    return record;
  };

  const project = (record: FakeRecord, wanted: string[] | undefined, object: string): FakeRecord => {
    const defaults = ['hs_object_id', 'createdate', modifiedProperty(object)];
    const names = wanted?.length ? [...wanted, ...defaults] : Object.keys(record.properties);
    const selected: Record<string, string | null> = {};
    for (const name of names) if (name in record.properties) selected[name] = record.properties[name];
    return { ...record, properties: selected };
  };

  const setModified = (record: FakeRecord, object: string, ms: number) => {
    const iso = new Date(ms).toISOString();
    record.updatedAt = iso;
    record.properties[modifiedProperty(object)] = iso;
  };

  const checkValues = (object: string, values: unknown): Record<string, string | null> => {
    if (!values || typeof values !== 'object') {
      throw new HubSpotError(400, 'VALIDATION_ERROR', 'Invalid input JSON: properties is required');
    }
    const known = new Set(properties.get(object)!.map((p) => p.name));
    const result: Record<string, string | null> = {};
    for (const [name, value] of Object.entries(values as Record<string, unknown>)) {
      if (!known.has(name)) {
        throw new HubSpotError(
          400,
          'VALIDATION_ERROR',
          `Property values were not valid: [{"isValid":false,"message":"Property \\"${name}\\" does not exist","error":"PROPERTY_DOESNT_EXIST","name":"${name}"}]`,
        );
      }
      if (name === 'email' && typeof value === 'string' && !value.includes('@')) {
        throw new HubSpotError(
          400,
          'VALIDATION_ERROR',
          `Property values were not valid: [{"isValid":false,"message":"Email address ${value} is invalid","error":"INVALID_EMAIL","name":"email"}]`,
        );
      }
      result[name] = value === null ? null : String(value);
    }
    return result;
  };

  const router = fake.router;

  router.get('/crm/v3/objects/:object', (ctx) => {
    const object = objectOf(ctx);
    const limit = Math.min(Number(ctx.query.limit ?? 10), 100);
    const after = Number(ctx.query.after ?? 0);
    const wanted = typeof ctx.query.properties === 'string' ? ctx.query.properties.split(',') : undefined;
    const live = records
      .get(object)!
      .filter((r) => !r.archived && Number(r.id) > after)
      .sort((a, b) => Number(a.id) - Number(b.id));
    const page = live.slice(0, limit);
    ctx.body = {
      results: page.map((r) => project(r, wanted, object)),
      ...(live.length > limit && {
        paging: {
          next: {
            after: page[page.length - 1].id,
            link: `${ctx.origin}${ctx.path}?after=${page[page.length - 1].id}`,
          },
        },
      }),
    };
  });

  // Read one (https://developers.hubspot.com/docs/api/crm/contacts: GET /crm/v3/objects/{object}/{id}).
  router.get('/crm/v3/objects/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const wanted = typeof ctx.query.properties === 'string' ? ctx.query.properties.split(',') : undefined;
    ctx.body = project(recordOf(object, ctx.params.id), wanted, object);
  });

  router.post('/crm/v3/objects/:object/search', (ctx) => {
    const object = objectOf(ctx);
    const body = (ctx.request.body ?? {}) as {
      filterGroups?: { filters: { propertyName: string; operator: string; value: string }[] }[];
      sorts?: { propertyName: string; direction: 'ASCENDING' | 'DESCENDING' }[];
      properties?: string[];
      limit?: number;
      after?: string;
    };
    const limit = body.limit ?? 10;
    if (limit > 200) throw new HubSpotError(400, 'VALIDATION_ERROR', 'limit must be at most 200');
    const after = Number(body.after ?? 0);
    if (after + limit > searchCap) {
      throw new HubSpotError(400, 'VALIDATION_ERROR', `after + limit must be at most ${searchCap}`);
    }
    const dateProperties = new Set(['createdate', 'lastmodifieddate', 'hs_lastmodifieddate']);
    const known = new Set(properties.get(object)!.map((p) => p.name));
    for (const filter of (body.filterGroups ?? []).flatMap((group) => group.filters)) {
      if (!known.has(filter.propertyName)) {
        throw new HubSpotError(
          400,
          'VALIDATION_ERROR',
          `There was a problem with the request: property ${filter.propertyName} does not exist for ${object}.`,
        );
      }
    }
    const matches = (record: FakeRecord) =>
      (body.filterGroups ?? []).length === 0 ||
      body.filterGroups!.some((group) =>
        group.filters.every((filter) => {
          const raw = record.properties[filter.propertyName];
          const isDate = dateProperties.has(filter.propertyName);
          const left = isDate ? timeValue(raw) : raw;
          const right = isDate ? timeValue(filter.value) : filter.value;
          switch (filter.operator) {
            case 'GTE':
              return left !== null && left! >= right;
            case 'GT':
              return left !== null && left! > right;
            case 'LT':
              return left !== null && left! < right;
            case 'LTE':
              return left !== null && left! <= right;
            case 'EQ':
              return left === right;
            default:
              throw new HubSpotError(400, 'VALIDATION_ERROR', `Unknown operator ${filter.operator}`);
          }
        }),
      );
    const sort = body.sorts?.[0];
    const found = records
      .get(object)!
      .filter((r) => !r.archived && matches(r))
      .sort((a, b) => {
        if (sort) {
          const key = (r: FakeRecord) =>
            dateProperties.has(sort.propertyName)
              ? timeValue(r.properties[sort.propertyName])
              : (r.properties[sort.propertyName] ?? '');
          const [x, y] = [key(a), key(b)];
          const order = x < y ? -1 : x > y ? 1 : 0;
          if (order !== 0) return sort.direction === 'DESCENDING' ? -order : order;
        }
        return Number(a.id) - Number(b.id);
      });
    const reachable = found.slice(0, searchCap);
    const page = reachable.slice(after, after + limit);
    const nextAfter = after + page.length;
    ctx.body = {
      total: found.length,
      results: page.map((r) => project(r, body.properties, object)),
      ...(nextAfter < reachable.length && { paging: { next: { after: String(nextAfter) } } }),
    };
  });

  router.post('/crm/v3/objects/:object', (ctx) => {
    const object = objectOf(ctx);
    const body = (ctx.request.body ?? {}) as { properties?: unknown };
    const values = checkValues(object, body.properties);
    const id = String(nextId.get(object)!);
    nextId.set(object, Number(id) + 1);
    const now = new Date().toISOString();
    const record: FakeRecord = {
      id,
      properties: { ...values, hs_object_id: id, createdate: now },
      createdAt: now,
      updatedAt: now,
      archived: false,
    };
    setModified(record, object, Date.now());
    records.get(object)!.push(record);
    ctx.status = 201;
    ctx.body = record;
  });

  router.patch('/crm/v3/objects/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const record = recordOf(object, ctx.params.id);
    const values = checkValues(object, (ctx.request.body as { properties?: unknown })?.properties);
    Object.assign(record.properties, values);
    setModified(record, object, Date.now());
    ctx.body = record;
  });

  router.delete('/crm/v3/objects/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    recordOf(object, ctx.params.id).archived = true;
    ctx.status = 204;
  });

  router.get('/crm/v3/properties/:object', (ctx) => {
    ctx.body = { results: properties.get(objectOf(ctx)) };
  });

  router.post('/crm/v3/properties/:object', (ctx) => {
    const object = objectOf(ctx);
    const body = ctx.request.body as Partial<FakeProperty> & { name?: string };
    if (!body?.name || !body.label || !body.type || !body.fieldType || !body.groupName) {
      throw new HubSpotError(
        400,
        'VALIDATION_ERROR',
        'name, label, type, fieldType and groupName are required',
      );
    }
    if (body.type === 'enumeration' && !body.options?.length) {
      throw new HubSpotError(400, 'VALIDATION_ERROR', 'enumeration properties need options');
    }
    const list = properties.get(object)!;
    if (list.some((p) => p.name === body.name)) {
      throw new HubSpotError(409, 'OBJECT_ALREADY_EXISTS', `Property named '${body.name}' already exists.`);
    }
    const created = property(body.name, body.label, body.type, body.fieldType, {
      description: body.description ?? '',
      groupName: body.groupName,
      options: (body.options ?? []).map((o) => ({ ...o, hidden: false })),
      hubspotDefined: undefined,
      hasUniqueValue: body.hasUniqueValue ?? false,
      modificationMetadata: { archivable: true, readOnlyDefinition: false, readOnlyValue: false },
    });
    list.push(created);
    ctx.status = 201;
    ctx.body = created;
  });

  router.patch('/crm/v3/properties/:object/:name', (ctx) => {
    const object = objectOf(ctx);
    const existing = properties.get(object)!.find((p) => p.name === ctx.params.name);
    if (!existing)
      throw new HubSpotError(404, 'OBJECT_NOT_FOUND', `Property ${ctx.params.name} does not exist`);
    const body = ctx.request.body as Partial<FakeProperty>;
    if ('name' in (body ?? {})) throw new HubSpotError(400, 'VALIDATION_ERROR', 'name cannot be changed');
    Object.assign(existing, body, {
      options: (body.options ?? existing.options).map((o) => ({ ...o, hidden: false })),
    });
    ctx.body = existing;
  });

  await fake.start();
  const seedRecords = (object: string, modifiedTimes: number[]): FakeRecord[] => {
    const created = modifiedTimes.map((ms) => {
      const id = String(nextId.get(object)!);
      nextId.set(object, Number(id) + 1);
      const record: FakeRecord = {
        id,
        properties: {
          hs_object_id: id,
          createdate: new Date(ms).toISOString(),
          ...(object === 'contacts' && { email: `c${id}@example.com` }),
        },
        createdAt: new Date(ms).toISOString(),
        updatedAt: '',
        archived: false,
      };
      setModified(record, object, ms);
      return record;
    });
    records.get(object)!.push(...created);
    return created;
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
    records: (object) => records.get(object)!,
    properties: (object) => properties.get(object)!,
    seedRecords,
    seed: (object, modifiedTimes) => seedRecords(object, modifiedTimes).map((record) => record.id),
    stored: (object, id) =>
      records.get(object)!.find((record) => record.id === id && !record.archived) as unknown as
        Record<string, unknown> | undefined,
    touch(object, id, modifiedMs) {
      setModified(recordOf(object, id), object, modifiedMs);
    },
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    reset,
    close: () => fake.stop(),
    stop: () => fake.stop(),
  };
}

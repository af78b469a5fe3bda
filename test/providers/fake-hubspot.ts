import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa, { type Context } from 'koa';
import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';

/**
 * A local stand-in for HubSpot's CRM v3 API, answering with the documented shapes: objects
 * (`{id, properties, createdAt, updatedAt, archived}`), list paging (`paging.next.after`), search
 * (`total`, sorted, filtered, at most 10,000 results per query), properties, and error bodies
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

export interface LoggedRequest {
  method: string;
  path: string;
  query: Record<string, unknown>;
  body: unknown;
  authorization?: string;
}

export interface FakeHubSpot {
  url: string;
  /** Bearer tokens accepted; starts with `valid-token`. */
  tokens: Set<string>;
  requests: LoggedRequest[];
  records(object: string): FakeRecord[];
  properties(object: string): FakeProperty[];
  /** Adds records with the given modification times (ms); ids count up from 1 per object. */
  seed(object: string, modifiedTimes: number[]): FakeRecord[];
  /** Sets a record's modification time, as an edit in HubSpot would. */
  touch(object: string, id: string, modifiedMs: number): void;
  /** The next `count` API requests answer `status` (with optional headers) instead. */
  failNext(count: number, status: number, headers?: Record<string, string>): void;
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

class HubSpotError extends Error {
  constructor(
    readonly status: number,
    readonly category: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

function timeValue(value: unknown): number {
  if (typeof value === 'number') return value;
  const text = String(value);
  return /^\d+$/.test(text) ? Number(text) : Date.parse(text);
}

export async function startFakeHubSpot(): Promise<FakeHubSpot> {
  const records = new Map<string, FakeRecord[]>();
  const properties = new Map<string, FakeProperty[]>();
  const nextId = new Map<string, number>();
  const tokens = new Set<string>(['valid-token']);
  const requests: LoggedRequest[] = [];
  let failures: { status: number; headers: Record<string, string> }[] = [];

  const reset = () => {
    for (const object of objects) {
      records.set(object, []);
      properties.set(object, builtInProperties(object));
      nextId.set(object, 1);
    }
    tokens.clear();
    tokens.add('valid-token');
    requests.length = 0;
    failures = [];
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

  const app = new Koa();
  app.silent = true;
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const failure =
        error instanceof HubSpotError ? error : new HubSpotError(500, 'INTERNAL_ERROR', 'internal error');
      ctx.status = failure.status;
      for (const [name, value] of Object.entries(failure.headers)) ctx.set(name, value);
      ctx.body = {
        status: 'error',
        message: failure.message,
        correlationId: randomUUID(),
        category: failure.category,
      };
    }
  });
  app.use(bodyParser());
  app.use(async (ctx, next) => {
    requests.push({
      method: ctx.method,
      path: ctx.path,
      query: { ...ctx.query },
      body: ctx.request.body,
      authorization: ctx.get('authorization') || undefined,
    });
    const failure = failures.shift();
    if (failure) {
      throw new HubSpotError(
        failure.status,
        failure.status === 429 ? 'RATE_LIMITS' : 'INTERNAL_ERROR',
        failure.status === 429 ? 'You have reached your secondly limit.' : 'internal error',
        failure.headers,
      );
    }
    const match = /^Bearer (.+)$/.exec(ctx.get('authorization'));
    if (!match || !tokens.has(match[1])) {
      throw new HubSpotError(
        401,
        'INVALID_AUTHENTICATION',
        'Authentication credentials not found. This API supports OAuth 2.0 authentication.',
      );
    }
    await next();
  });

  const router = new Router({ prefix: '/crm/v3' });

  router.get('/objects/:object', (ctx) => {
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

  router.post('/objects/:object/search', (ctx) => {
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

  router.post('/objects/:object', (ctx) => {
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

  router.patch('/objects/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const record = recordOf(object, ctx.params.id);
    const values = checkValues(object, (ctx.request.body as { properties?: unknown })?.properties);
    Object.assign(record.properties, values);
    setModified(record, object, Date.now());
    ctx.body = record;
  });

  router.delete('/objects/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    recordOf(object, ctx.params.id).archived = true;
    ctx.status = 204;
  });

  router.get('/properties/:object', (ctx) => {
    ctx.body = { results: properties.get(objectOf(ctx)) };
  });

  router.post('/properties/:object', (ctx) => {
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

  router.patch('/properties/:object/:name', (ctx) => {
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

  app.use(router.routes());

  const server: Server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    tokens,
    requests,
    records: (object) => records.get(object)!,
    properties: (object) => properties.get(object)!,
    seed(object, modifiedTimes) {
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
    },
    touch(object, id, modifiedMs) {
      setModified(recordOf(object, id), object, modifiedMs);
    },
    failNext(count, status, headers = {}) {
      for (let i = 0; i < count; i++) failures.push({ status, headers });
    },
    reset,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

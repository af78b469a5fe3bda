import { createHmac, randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';

/**
 * A local stand-in for HubSpot's CRM v3 API, written from HubSpot's public reference (the CRM
 * guides, https://developers.hubspot.com/docs/api/crm, and the OpenAPI documents of
 * HubSpot/HubSpot-public-api-spec-collection):
 *
 * - Records `{id, properties, createdAt, updatedAt, archived, archivedAt?}`, every value a string (or
 *   null), times ISO 8601 to the millisecond. `properties` asked for are answered (null when unset,
 *   unknown names ignored) with `hs_object_id`, `createdate` and the modification property always
 *   added; none asked for, the object's documented defaults.
 * - `GET /crm/v3/objects/{object}`: `limit` (default 10, at most 100), `after`, `properties`,
 *   `archived=true` for archived records only (with `archivedAt`), oldest id first.
 * - `POST /crm/v3/objects/{object}/search`: `limit` (default 10, at most 200), `after` an integer
 *   offset; at most 10,000 results per query (`after + limit` past 10,000 is a 400); filters (EQ,
 *   NEQ, LT, LTE, GT, GTE, BETWEEN, IN, NOT_IN, HAS_PROPERTY, NOT_HAS_PROPERTY, CONTAINS_TOKEN,
 *   NOT_CONTAINS_TOKEN; case-insensitive but for enumerations; at most 5 groups of 6, 18 in all),
 *   one sort (oldest created first without one, ties by id), a 3,000-character body. Search reads an
 *   index that lags: a change shows there a few seconds after it is made (`indexLagMs`), or at the
 *   `visibleFromMs` a test gives. Archived records never show. Five searches a second per account;
 *   the sixth is a 429 (`policyName: SECONDLY`), and search answers carry no rate-limit headers.
 * - Writes `POST`, `PATCH` (`{properties}`), `DELETE` (archives: the record leaves lists, gets and
 *   search, and is listed by `archived=true` for the 90 days it can be restored); properties checked
 *   (unknown, read-only values, enumeration options, numbers, booleans, emails; a contact's email is
 *   unique, 409).
 * - `GET/POST/PATCH /crm/v3/properties/{object}`: property definitions with `options` (`hidden`),
 *   `modificationMetadata`, `hubspotDefined`, `calculated`, `archived` (archived ones only with
 *   `archived=true`).
 * - Errors `{status: 'error', message, correlationId, category}`; 429s `{status, message, errorType:
 *   'RATE_LIMIT', correlationId, policyName, requestId}`; `X-HubSpot-RateLimit-*` headers.
 */

export interface FakeRecord {
  id: string;
  properties: Record<string, string | null>;
  createdAt: string;
  updatedAt: string;
  archived: boolean;
  archivedAt?: string;
}

export interface FakeProperty {
  name: string;
  label: string;
  type: string;
  fieldType: string;
  description: string;
  groupName: string;
  options: { label: string; value: string; displayOrder: number; hidden: boolean; description?: string }[];
  displayOrder: number;
  calculated: boolean;
  externalOptions: boolean;
  hasUniqueValue: boolean;
  hidden: boolean;
  formField: boolean;
  hubspotDefined?: boolean;
  archived: boolean;
  createdAt: string;
  updatedAt: string;
  modificationMetadata: { archivable: boolean; readOnlyDefinition: boolean; readOnlyValue: boolean };
}

export interface FakeHubSpotOptions {
  /** Searches a second per account before a 429 (HubSpot: five); false turns the limit off. */
  searchesPerSecond?: number | false;
}

export interface FakeHubSpot extends ConformanceFake {
  /** Every record of an object, archived ones too, as stored (edits to them are edits at HubSpot). */
  records(object: string): FakeRecord[];
  properties(object: string): FakeProperty[];
  /** Adds records with the given modification times (ms); ids count up from 1 per object. */
  seedRecords(object: string, modifiedTimes: number[]): FakeRecord[];
  reset(): void;
  close(): Promise<void>;
}

const objects = ['contacts', 'companies', 'deals'];
const searchCap = 10_000;
const listMax = 100;
const searchMax = 200;
const defaultLimit = 10;
/** "It may take a few moments for newly created or updated CRM objects to appear in search results." */
export const indexLagMs = 5_000;
/** Archived records can be restored, and are listed with `archived=true`, for 90 days. */
const restorableMs = 90 * 86_400_000;
const maxSearchBody = 3_000;

function modifiedProperty(object: string): string {
  return object === 'contacts' ? 'lastmodifieddate' : 'hs_lastmodifieddate';
}

/** The properties a read or search answers when it names none. */
const defaultProperties: Record<string, string[]> = {
  contacts: ['firstname', 'lastname', 'email', 'lastmodifieddate', 'hs_object_id', 'createdate'],
  companies: ['name', 'domain', 'createdate', 'hs_lastmodifieddate', 'hs_object_id'],
  deals: [
    'dealname',
    'amount',
    'closedate',
    'pipeline',
    'dealstage',
    'createdate',
    'hs_lastmodifieddate',
    'hs_object_id',
  ],
};

const definedAt = '2019-08-06T02:43:14.491Z';

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
    displayOrder: -1,
    calculated: false,
    externalOptions: false,
    hasUniqueValue: false,
    hidden: false,
    formField: false,
    hubspotDefined: true,
    archived: false,
    createdAt: definedAt,
    updatedAt: definedAt,
    modificationMetadata: { archivable: true, readOnlyDefinition: true, readOnlyValue: false },
    ...extra,
  };
}

const option = (label: string, value: string, displayOrder: number, hidden = false) => ({
  label,
  value,
  displayOrder,
  hidden,
});

function builtInProperties(object: string): FakeProperty[] {
  const readOnly = { archivable: false, readOnlyDefinition: true, readOnlyValue: true };
  const common = [
    property('hs_object_id', 'Record ID', 'number', 'number', { modificationMetadata: readOnly }),
    property('createdate', 'Create Date', 'datetime', 'date', { modificationMetadata: readOnly }),
    property(modifiedProperty(object), 'Last Modified Date', 'datetime', 'date', {
      modificationMetadata: readOnly,
    }),
  ];
  const custom = {
    hubspotDefined: undefined,
    modificationMetadata: { archivable: true, readOnlyDefinition: false, readOnlyValue: false },
  };
  if (object === 'contacts') {
    return [
      ...common,
      property('email', 'Email', 'string', 'text', { hasUniqueValue: false }),
      property('firstname', 'First Name', 'string', 'text'),
      property('lastname', 'Last Name', 'string', 'text'),
      property('phone', 'Phone Number', 'string', 'phonenumber'),
      property('lifecyclestage', 'Lifecycle Stage', 'enumeration', 'radio', {
        options: [option('Lead', 'lead', 0), option('Customer', 'customer', 1)],
      }),
      property('hs_email_optout', 'Unsubscribed from all email', 'bool', 'booleancheckbox', {
        options: [option('True', 'true', 0), option('False', 'false', 1)],
      }),
      property('hs_email_domain', 'Email Domain', 'string', 'text', {
        calculated: true,
        modificationMetadata: readOnly,
      }),
      property('customer_tier', 'Customer tier', 'enumeration', 'select', {
        ...custom,
        options: [
          option('Gold', 'gold', 0),
          option('Silver', 'silver', 1),
          option('Bronze', 'bronze', 2, true),
        ],
      }),
      // Archived: listed only with `archived=true`, its values no longer read or written.
      property('legacy_score', 'Legacy score', 'number', 'number', {
        ...custom,
        archived: true,
        updatedAt: '2024-03-01T00:00:00.000Z',
      }),
    ];
  }
  if (object === 'companies') {
    return [
      ...common,
      property('name', 'Name', 'string', 'text', { groupName: 'companyinformation' }),
      property('domain', 'Company Domain Name', 'string', 'text', { groupName: 'companyinformation' }),
    ];
  }
  return [
    ...common,
    property('dealname', 'Deal Name', 'string', 'text', { groupName: 'dealinformation' }),
    property('amount', 'Amount', 'number', 'number', { groupName: 'dealinformation' }),
    property('closedate', 'Close Date', 'datetime', 'date', { groupName: 'dealinformation' }),
    property('pipeline', 'Pipeline', 'enumeration', 'select', {
      groupName: 'dealinformation',
      options: [option('Sales Pipeline', 'default', 0)],
    }),
    property('dealstage', 'Deal Stage', 'enumeration', 'radio', {
      groupName: 'dealinformation',
      options: [
        option('Appointment Scheduled', 'appointmentscheduled', 0),
        option('Closed Won', 'closedwon', 1),
      ],
    }),
  ];
}

/** HubSpot's errors: `{status: 'error', message, correlationId, category}`. */
class HubSpotError extends FakeHttpError {
  constructor(status: number, category: string, message: string, headers: Record<string, string> = {}) {
    super(status, message, category, headers);
  }
}

/** A property value that fails validation, in HubSpot's `Property values were not valid` message. */
function invalidValue(name: string, error: string, message: string): HubSpotError {
  return new HubSpotError(
    400,
    'VALIDATION_ERROR',
    `Property values were not valid: ${JSON.stringify([{ isValid: false, message, error, name, localizedErrorMessage: message }])}`,
  );
}

function timeValue(value: unknown): number {
  if (typeof value === 'number') return value;
  const text = String(value);
  return /^-?\d+$/.test(text) ? Number(text) : Date.parse(text);
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

/**
 * A record and what the search index holds of it: the record itself once `visibleFromMs` has come,
 * before that the version indexed earlier (`indexed`, none for a record not yet indexed).
 */
interface Row {
  record: FakeRecord;
  indexed?: FakeRecord;
  visibleFromMs: number;
}

interface SearchFilter {
  propertyName: string;
  operator: string;
  value?: unknown;
  highValue?: unknown;
  values?: unknown[];
}

export async function startFakeHubSpot(options: FakeHubSpotOptions = {}): Promise<FakeHubSpot> {
  const rows = new Map<string, Row[]>();
  const properties = new Map<string, FakeProperty[]>();
  const nextId = new Map<string, number>();
  const searchesPerSecond = options.searchesPerSecond ?? 5;
  let searchTimes: number[] = [];
  let requestsInWindow: number[] = [];

  const rateLimitHeaders = (remaining?: number) => {
    const wall = Date.now();
    requestsInWindow = requestsInWindow.filter((t) => t > wall - 10_000);
    return {
      'X-HubSpot-RateLimit-Interval-Milliseconds': '10000',
      'X-HubSpot-RateLimit-Max': '190',
      'X-HubSpot-RateLimit-Remaining': String(remaining ?? Math.max(0, 190 - requestsInWindow.length)),
    };
  };

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) =>
      error.status === 429
        ? {
            status: 'error',
            message:
              error.code === 'SECONDLY'
                ? 'You have reached your secondly limit.'
                : 'You have reached your ten_secondly_rolling limit.',
            errorType: 'RATE_LIMIT',
            correlationId: randomUUID(),
            policyName: error.code ?? 'TEN_SECONDLY_ROLLING',
            requestId: randomUUID(),
          }
        : {
            status: 'error',
            message:
              error.status === 401
                ? 'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview'
                : error.message,
            correlationId: randomUUID(),
            category: error.status === 401 ? 'INVALID_AUTHENTICATION' : (error.code ?? 'INTERNAL_ERROR'),
          },
    rateLimitHeaders: () => rateLimitHeaders(0),
    rateLimitCode: 'TEN_SECONDLY_ROLLING',
  });
  const now = () => fake.now();
  const iso = (ms: number) => new Date(ms).toISOString();

  const reset = () => {
    for (const object of objects) {
      rows.set(object, []);
      properties.set(object, builtInProperties(object));
      nextId.set(object, 1);
    }
    searchTimes = [];
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
  const activeProperties = (object: string) => properties.get(object)!.filter((p) => !p.archived);
  const propertyOf = (object: string, name: string) => activeProperties(object).find((p) => p.name === name);

  const rowOf = (object: string, id: string, archived = false): Row => {
    const row = rows.get(object)!.find((r) => r.record.id === id && r.record.archived === archived);
    if (!row || (archived && purged(row.record))) {
      throw new HubSpotError(404, 'OBJECT_NOT_FOUND', 'resource not found');
    }
    return row;
  };
  /** Archived more than 90 days ago: gone for good. */
  const purged = (record: FakeRecord) =>
    record.archived &&
    record.archivedAt !== undefined &&
    Date.parse(record.archivedAt) + restorableMs <= now();

  const wantedOf = (value: unknown): string[] | undefined => {
    const list = (Array.isArray(value) ? value : typeof value === 'string' ? [value] : [])
      .flatMap((item) => String(item).split(','))
      .map((name) => name.trim())
      .filter(Boolean);
    return list.length ? list : undefined;
  };

  /** The record as answered: the properties asked for (null when unset) or the object's defaults. */
  const project = (record: FakeRecord, wanted: string[] | undefined, object: string) => {
    const always = ['hs_object_id', 'createdate', modifiedProperty(object)];
    const names = wanted ? [...wanted, ...always] : defaultProperties[object];
    const selected: Record<string, string | null> = {};
    for (const name of names) {
      if (propertyOf(object, name)) selected[name] = record.properties[name] ?? null;
    }
    return {
      id: record.id,
      properties: selected,
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
      archived: record.archived,
      ...(record.archivedAt && { archivedAt: record.archivedAt }),
    };
  };

  const clone = (record: FakeRecord): FakeRecord => ({ ...record, properties: { ...record.properties } });

  /** The version search shows now, if any. */
  const indexedNow = (row: Row): FakeRecord | undefined =>
    row.visibleFromMs <= now() ? row.record : row.indexed;

  /** Applies an edit made at `ms` (and indexed from `visibleFromMs`) to a stored record. */
  const modify = (
    object: string,
    row: Row,
    values: Record<string, string | null>,
    ms: number,
    visibleFromMs = ms + indexLagMs,
  ) => {
    const shown = indexedNow(row);
    row.indexed = shown && clone(shown);
    Object.assign(row.record.properties, values);
    row.record.updatedAt = iso(ms);
    row.record.properties[modifiedProperty(object)] = iso(ms);
    row.visibleFromMs = visibleFromMs;
  };

  const create = (object: string, values: Record<string, string | null>, ms: number): Row => {
    const id = String(nextId.get(object)!);
    nextId.set(object, Number(id) + 1);
    const record: FakeRecord = {
      id,
      properties: { ...values, hs_object_id: id, createdate: iso(ms), [modifiedProperty(object)]: iso(ms) },
      createdAt: iso(ms),
      updatedAt: iso(ms),
      archived: false,
    };
    if (object === 'contacts' && typeof values.email === 'string') {
      record.properties.hs_email_domain = values.email.split('@')[1] ?? null;
    }
    const row: Row = { record, visibleFromMs: ms + indexLagMs };
    rows.get(object)!.push(row);
    return row;
  };

  /** Property values of a write, checked as HubSpot checks them, as strings. */
  const checkValues = (object: string, values: unknown, id?: string): Record<string, string | null> => {
    if (!values || typeof values !== 'object' || Array.isArray(values)) {
      throw new HubSpotError(400, 'VALIDATION_ERROR', 'Invalid input JSON on line 1: properties is required');
    }
    const result: Record<string, string | null> = {};
    for (const [name, raw] of Object.entries(values as Record<string, unknown>)) {
      const definition = propertyOf(object, name);
      if (!definition) invalidValueThrow(name, 'PROPERTY_DOESNT_EXIST', `Property "${name}" does not exist`);
      if (definition!.modificationMetadata.readOnlyValue) {
        invalidValueThrow(
          name,
          'READ_ONLY_VALUE',
          `${name} is a read only property; its value cannot be set.`,
        );
      }
      const value =
        raw === null || raw === '' ? null : typeof raw === 'object' ? JSON.stringify(raw) : String(raw);
      if (value !== null) {
        if (definition!.type === 'enumeration' && !definition!.options.some((o) => o.value === value)) {
          invalidValueThrow(
            name,
            'INVALID_OPTION',
            `${value} was not one of the allowed options: ${definition!.options.map((o) => `[label: "${o.label}" value: "${o.value}"]`).join(', ')}`,
          );
        }
        if (definition!.type === 'number' && !Number.isFinite(Number(value))) {
          invalidValueThrow(name, 'INVALID_DECIMAL', `${value} was not a valid decimal`);
        }
        if (definition!.type === 'bool' && value !== 'true' && value !== 'false') {
          invalidValueThrow(name, 'INVALID_BOOLEAN', `${value} was not a valid boolean`);
        }
        if (
          (definition!.type === 'datetime' || definition!.type === 'date') &&
          Number.isNaN(timeValue(value))
        ) {
          invalidValueThrow(name, 'INVALID_DATE', `${value} was not a valid date`);
        }
        if (name === 'email' && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value)) {
          invalidValueThrow(name, 'INVALID_EMAIL', `Email address ${value} is invalid`);
        }
      }
      result[name] = value;
    }
    if (object === 'contacts' && result.email) {
      const taken = rows
        .get(object)!
        .find(
          (r) =>
            !r.record.archived &&
            r.record.id !== id &&
            r.record.properties.email?.toLowerCase() === result.email!.toLowerCase(),
        );
      if (taken) {
        throw new HubSpotError(409, 'CONFLICT', `Contact already exists. Existing ID: ${taken.record.id}`);
      }
    }
    return result;
  };
  function invalidValueThrow(name: string, error: string, message: string): never {
    throw invalidValue(name, error, message);
  }

  const router = fake.router;

  // Every answer but a search's carries the account's rate-limit headers.
  router.use(async (ctx, next) => {
    if (!ctx.path.endsWith('/search')) {
      requestsInWindow.push(Date.now());
      ctx.set(rateLimitHeaders());
    }
    await next();
  });

  router.get('/crm/v3/objects/:object', (ctx) => {
    const object = objectOf(ctx);
    const requested = ctx.query.limit === undefined ? defaultLimit : Number(ctx.query.limit);
    if (!Number.isInteger(requested) || requested < 1) {
      throw new HubSpotError(
        400,
        'VALIDATION_ERROR',
        `limit must be a positive integer: ${String(ctx.query.limit)}`,
      );
    }
    fake.logListing(ctx, { object, pageSize: requested, maxPageSize: listMax });
    // Above 100 the list answers 100 (verify: the reference gives the maximum only).
    const limit = Math.min(requested, listMax);
    const after = ctx.query.after === undefined ? 0 : Number(ctx.query.after);
    if (!Number.isFinite(after))
      throw new HubSpotError(400, 'VALIDATION_ERROR', `Invalid after: ${String(ctx.query.after)}`);
    const archived = ctx.query.archived === 'true';
    const wanted = wantedOf(ctx.query.properties);
    const listed = rows
      .get(object)!
      .map((row) => row.record)
      .filter((r) => r.archived === archived && !purged(r) && Number(r.id) > after)
      .sort((a, b) => Number(a.id) - Number(b.id));
    const page = listed.slice(0, limit);
    const last = page.at(-1);
    ctx.body = {
      results: page.map((r) => project(r, wanted, object)),
      ...(listed.length > limit &&
        last && {
          paging: { next: { after: last.id, link: `${ctx.origin}${ctx.path}?after=${last.id}` } },
        }),
    };
  });

  router.get('/crm/v3/objects/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = rowOf(object, ctx.params.id, ctx.query.archived === 'true');
    ctx.body = project(row.record, wantedOf(ctx.query.properties), object);
  });

  router.post('/crm/v3/objects/:object/search', (ctx) => {
    const object = objectOf(ctx);
    if (searchesPerSecond !== false) {
      const wall = Date.now();
      searchTimes = searchTimes.filter((t) => t > wall - 1000);
      if (searchTimes.length >= searchesPerSecond) {
        throw new HubSpotError(429, 'SECONDLY', 'You have reached your secondly limit.');
      }
      searchTimes.push(wall);
    }
    const body = (ctx.request.body ?? {}) as {
      filterGroups?: { filters?: SearchFilter[] }[];
      sorts?: (string | { propertyName: string; direction?: string })[];
      properties?: string[];
      limit?: number | string;
      after?: string | number;
      query?: string;
    };
    if (JSON.stringify(body).length > maxSearchBody) {
      throw new HubSpotError(
        400,
        'VALIDATION_ERROR',
        `The request body is longer than ${maxSearchBody} characters.`,
      );
    }
    const limit = body.limit === undefined ? defaultLimit : Number(body.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > searchMax) {
      throw new HubSpotError(
        400,
        'VALIDATION_ERROR',
        `limit must be between 1 and ${searchMax}: ${String(body.limit)}`,
      );
    }
    fake.logListing(ctx, { object, pageSize: limit, maxPageSize: searchMax });
    const after = body.after === undefined || body.after === '' ? 0 : Number(body.after);
    if (!Number.isInteger(after) || after < 0) {
      throw new HubSpotError(400, 'VALIDATION_ERROR', `after must be an integer: ${String(body.after)}`);
    }
    if (after + limit > searchCap) {
      throw new HubSpotError(
        400,
        'VALIDATION_ERROR',
        `Paging past the first ${searchCap} results is not supported (after + limit must be at most ${searchCap}).`,
      );
    }
    const groups = body.filterGroups ?? [];
    const filterCount = groups.reduce((n, g) => n + (g.filters?.length ?? 0), 0);
    if (groups.length > 5 || groups.some((g) => (g.filters?.length ?? 0) > 6) || filterCount > 18) {
      throw new HubSpotError(
        400,
        'VALIDATION_ERROR',
        'Too many filter groups or filters: at most 5 filterGroups of 6 filters, 18 filters in all.',
      );
    }
    const unknownProperty = (name: string) =>
      new HubSpotError(
        400,
        'VALIDATION_ERROR',
        `There was a problem with the request. Property ${name} does not exist on ${object}.`,
      );
    for (const filter of groups.flatMap((g) => g.filters ?? [])) {
      if (!propertyOf(object, filter.propertyName)) throw unknownProperty(filter.propertyName);
    }
    const sorts = (body.sorts ?? []).map((sort) =>
      typeof sort === 'string'
        ? { propertyName: sort.replace(/^-/, ''), descending: sort.startsWith('-') }
        : { propertyName: sort.propertyName, descending: sort.direction === 'DESCENDING' },
    );
    if (sorts.length > 1)
      throw new HubSpotError(400, 'VALIDATION_ERROR', 'Only one sort can be applied to a search.');
    for (const sort of sorts)
      if (!propertyOf(object, sort.propertyName)) throw unknownProperty(sort.propertyName);

    const kindOf = (name: string) => propertyOf(object, name)!.type;
    const key = (name: string, value: unknown): string | number | null => {
      if (value === null || value === undefined || value === '') return null;
      const kind = kindOf(name);
      if (kind === 'datetime' || kind === 'date') return timeValue(value);
      if (kind === 'number') return Number(value);
      // Values in filters are case-insensitive, but for enumerations.
      return kind === 'enumeration' ? String(value) : String(value).toLowerCase();
    };
    const matches = (record: FakeRecord, filter: SearchFilter): boolean => {
      const left = key(filter.propertyName, record.properties[filter.propertyName]);
      const right = key(filter.propertyName, filter.value);
      switch (filter.operator) {
        case 'EQ':
          return left !== null && left === right;
        case 'NEQ':
          return left !== right;
        case 'LT':
          return left !== null && right !== null && left < right;
        case 'LTE':
          return left !== null && right !== null && left <= right;
        case 'GT':
          return left !== null && right !== null && left > right;
        case 'GTE':
          return left !== null && right !== null && left >= right;
        case 'BETWEEN': {
          const high = key(filter.propertyName, filter.highValue);
          return left !== null && right !== null && high !== null && left >= right && left <= high;
        }
        case 'IN':
        case 'NOT_IN': {
          // String values must be given in lower case; enumerations as they are.
          const found = (filter.values ?? []).some(
            (v) =>
              left !== null &&
              left === (kindOf(filter.propertyName) === 'string' ? String(v) : key(filter.propertyName, v)),
          );
          return filter.operator === 'IN' ? found : !found;
        }
        case 'HAS_PROPERTY':
          return left !== null;
        case 'NOT_HAS_PROPERTY':
          return left === null;
        case 'CONTAINS_TOKEN':
        case 'NOT_CONTAINS_TOKEN': {
          const pattern = new RegExp(
            `^${String(filter.value ?? '')
              .toLowerCase()
              .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
              .replace(/\*/g, '.*')}$`,
          );
          const found =
            left !== null &&
            String(left)
              .split(/[\s,;]+/)
              .some((token) => pattern.test(token) || pattern.test(String(left)));
          return filter.operator === 'CONTAINS_TOKEN' ? found : !found;
        }
        default:
          throw new HubSpotError(400, 'VALIDATION_ERROR', `Unknown operator ${filter.operator}`);
      }
    };
    const text = body.query?.toLowerCase();
    const searchable: Record<string, string[]> = {
      contacts: ['firstname', 'lastname', 'email', 'phone'],
      companies: ['name', 'domain', 'phone'],
      deals: ['dealname', 'pipeline', 'dealstage'],
    };
    const sort = sorts[0];
    const found = rows
      .get(object)!
      .filter((row) => !row.record.archived)
      .map(indexedNow)
      .filter((r): r is FakeRecord => r !== undefined)
      .filter((r) => groups.length === 0 || groups.some((g) => (g.filters ?? []).every((f) => matches(r, f))))
      .filter(
        (r) => !text || searchable[object].some((name) => r.properties[name]?.toLowerCase().includes(text)),
      )
      .sort((a, b) => {
        if (sort) {
          const [x, y] = [
            key(sort.propertyName, a.properties[sort.propertyName]),
            key(sort.propertyName, b.properties[sort.propertyName]),
          ];
          if (x !== y) {
            const order = x === null ? 1 : y === null ? -1 : x < y ? -1 : 1;
            return sort.descending ? -order : order;
          }
        } else if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
        return Number(a.id) - Number(b.id);
      });
    const page = found.slice(after, after + limit);
    const nextAfter = after + page.length;
    ctx.body = {
      total: found.length,
      results: page.map((r) => project(r, body.properties?.length ? body.properties : undefined, object)),
      ...(nextAfter < found.length && { paging: { next: { after: String(nextAfter) } } }),
    };
  });

  router.post('/crm/v3/objects/:object', (ctx) => {
    const object = objectOf(ctx);
    const values = checkValues(
      object,
      (ctx.request.body as { properties?: unknown } | undefined)?.properties,
    );
    const row = create(object, values, now());
    ctx.status = 201;
    ctx.body = project(row.record, Object.keys(row.record.properties), object);
  });

  router.patch('/crm/v3/objects/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = rowOf(object, ctx.params.id);
    const values = checkValues(
      object,
      (ctx.request.body as { properties?: unknown } | undefined)?.properties,
      row.record.id,
    );
    modify(object, row, values, now());
    ctx.body = project(row.record, Object.keys(row.record.properties), object);
  });

  router.delete('/crm/v3/objects/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = rowOf(object, ctx.params.id);
    row.record.archived = true;
    row.record.archivedAt = iso(now());
    ctx.status = 204;
  });

  router.get('/crm/v3/properties/:object', (ctx) => {
    const object = objectOf(ctx);
    const archived = ctx.query.archived === 'true';
    ctx.body = { results: properties.get(object)!.filter((p) => p.archived === archived) };
  });

  router.get('/crm/v3/properties/:object/:name', (ctx) => {
    const object = objectOf(ctx);
    const archived = ctx.query.archived === 'true';
    const found = properties.get(object)!.find((p) => p.name === ctx.params.name && p.archived === archived);
    if (!found) throw new HubSpotError(404, 'OBJECT_NOT_FOUND', `Unable to find property ${ctx.params.name}`);
    ctx.body = found;
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
    const at = iso(now());
    const created = property(body.name, body.label, body.type, body.fieldType, {
      description: body.description ?? '',
      groupName: body.groupName,
      options: (body.options ?? []).map((o, i) => ({
        ...o,
        displayOrder: o.displayOrder ?? i,
        hidden: o.hidden ?? false,
      })),
      hubspotDefined: undefined,
      hasUniqueValue: body.hasUniqueValue ?? false,
      formField: body.formField ?? false,
      createdAt: at,
      updatedAt: at,
      modificationMetadata: { archivable: true, readOnlyDefinition: false, readOnlyValue: false },
    });
    list.push(created);
    ctx.status = 201;
    ctx.body = created;
  });

  router.patch('/crm/v3/properties/:object/:name', (ctx) => {
    const object = objectOf(ctx);
    const existing = propertyOf(object, ctx.params.name);
    if (!existing)
      throw new HubSpotError(404, 'OBJECT_NOT_FOUND', `Unable to find property ${ctx.params.name}`);
    const body = (ctx.request.body ?? {}) as Partial<FakeProperty>;
    if ('name' in body) throw new HubSpotError(400, 'VALIDATION_ERROR', 'name cannot be changed');
    if (existing.modificationMetadata.readOnlyDefinition) {
      throw new HubSpotError(
        400,
        'VALIDATION_ERROR',
        `Property ${existing.name} is read only and cannot be updated`,
      );
    }
    Object.assign(existing, body, {
      options: (body.options ?? existing.options).map((o, i) => ({
        ...o,
        displayOrder: o.displayOrder ?? i,
        hidden: o.hidden ?? false,
      })),
      updatedAt: iso(now()),
    });
    ctx.body = existing;
  });

  await fake.start();

  const seedRecords = (object: string, modifiedTimes: number[]): FakeRecord[] =>
    modifiedTimes.map((ms) => {
      const id = String(nextId.get(object)!);
      return create(
        object,
        object === 'contacts' ? { email: `c${id}@example.com`, hs_email_domain: 'example.com' } : {},
        ms,
      ).record;
    });
  const liveRow = (object: string, id: string) => rowOf(object, id);

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
    records: (object) => rows.get(object)!.map((row) => row.record),
    properties: (object) => properties.get(object)!,
    seedRecords,
    seed: (object, modifiedTimes) => seedRecords(object, modifiedTimes).map((record) => record.id),
    stored: (object, id) =>
      rows.get(object)?.find((row) => row.record.id === id && !row.record.archived)?.record as unknown as
        Record<string, unknown> | undefined,
    touch(object, id, modifiedMs, touchOptions) {
      modify(object, liveRow(object, id), {}, modifiedMs, touchOptions?.visibleFromMs);
    },
    remove(object, id, atMs) {
      const row = liveRow(object, id);
      row.record.archived = true;
      row.record.archivedAt = iso(atMs);
    },
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    reset,
    close: () => fake.stop(),
    stop: () => fake.stop(),
  };
}

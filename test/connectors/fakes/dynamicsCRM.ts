import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';

/**
 * A local stand-in for the Dataverse Web API (Dynamics 365, v9.2) as Microsoft's reference
 * describes it: entity sets (`contacts`, `accounts`, `opportunities`, `leads`) queried with
 * `$select`, `$filter` (`modifiedon ge … and modifiedon lt …`), `$orderby`, page size from
 * `Prefer: odata.maxpagesize`, `@odata.nextLink`; records addressed as `contacts(<guid>)`; create
 * answering 204 with `OData-EntityId`; PATCH with `If-Match: *` (no upsert); DELETE 204;
 * `EntityDefinitions(LogicalName='…')/Attributes`; errors `{error: {code, message}}`; 429 with
 * Retry-After (service protection limits). Only what Ferry uses.
 */

export type FakeRecord = Record<string, unknown> & { modifiedon: string };

interface FakeAttribute {
  LogicalName: string;
  AttributeType: string;
  DisplayName: { UserLocalizedLabel: { Label: string } | null };
  IsCustomAttribute: boolean;
  IsValidForCreate: boolean;
  IsValidForUpdate: boolean;
  IsValidForRead: boolean;
  RequiredLevel: { Value: string; CanBeChanged: boolean };
}

export interface FakeDynamics extends ConformanceFake {
  records(set: string): FakeRecord[];
  reset(): void;
}

const entities: Record<string, { logical: string; key: string; name: string }> = {
  contacts: { logical: 'contact', key: 'contactid', name: 'lastname' },
  accounts: { logical: 'account', key: 'accountid', name: 'name' },
  opportunities: { logical: 'opportunity', key: 'opportunityid', name: 'name' },
  leads: { logical: 'lead', key: 'leadid', name: 'subject' },
};

function attribute(
  name: string,
  type: string,
  label: string | null,
  extra: Partial<FakeAttribute> = {},
): FakeAttribute {
  return {
    LogicalName: name,
    AttributeType: type,
    DisplayName: { UserLocalizedLabel: label === null ? null : { Label: label } },
    IsCustomAttribute: false,
    IsValidForCreate: true,
    IsValidForUpdate: true,
    IsValidForRead: true,
    RequiredLevel: { Value: 'None', CanBeChanged: true },
    ...extra,
  };
}

function attributesOf(set: string): FakeAttribute[] {
  const { key, name } = entities[set];
  const system = { IsValidForCreate: false, IsValidForUpdate: false };
  const common = [
    attribute(key, 'Uniqueidentifier', 'ID', { IsValidForUpdate: false }),
    attribute('createdon', 'DateTime', 'Created On', system),
    attribute('modifiedon', 'DateTime', 'Modified On', system),
    attribute('versionnumber', 'BigInt', null, { ...system, IsValidForRead: true }),
    attribute('importsequencenumber', 'Integer', 'Import Sequence Number', { IsValidForUpdate: false }),
    attribute('traversedpath', 'String', null, { IsValidForRead: false }),
    attribute(name, 'String', name === 'lastname' ? 'Last Name' : name === 'subject' ? 'Topic' : 'Name', {
      RequiredLevel: { Value: 'ApplicationRequired', CanBeChanged: true },
    }),
  ];
  if (set === 'contacts') {
    return [
      ...common,
      attribute('firstname', 'String', 'First Name'),
      attribute('emailaddress1', 'String', 'Email'),
      attribute('new_tier', 'Picklist', 'Tier', { IsCustomAttribute: true }),
    ];
  }
  if (set === 'opportunities') return [...common, attribute('estimatedvalue', 'Money', 'Est. Revenue')];
  return common;
}

function odataTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * `modifiedon ge <time>` / `modifiedon lt <time>` clauses and `<attribute> eq '<text>'` clauses
 * (a quote doubled inside the string, compared case-insensitively as Dataverse's collation does),
 * joined with `and`; an attribute the table does not have is refused as Dataverse does.
 */
function parseFilter(set: string, filter: string): (record: FakeRecord) => boolean {
  const clauses = filter.match(/(?:[^']|'(?:[^']|'')*')+?(?=\s+and\s+|$)/gi) ?? [];
  const tests = clauses
    .map((clause) => clause.replace(/^\s*and\s+/i, ''))
    .filter((clause) => clause.trim())
    .map((clause) => {
      const text = /^\s*(\w+)\s+eq\s+'((?:[^']|'')*)'\s*$/i.exec(clause);
      if (text && text[1] !== 'modifiedon') {
        const [, field, quoted] = text;
        if (!attributesOf(set).some((attribute) => attribute.LogicalName === field)) {
          throw new FakeHttpError(
            400,
            `Could not find a property named '${field}' on type 'Microsoft.Dynamics.CRM.${entities[set].logical}'.`,
            '0x80060888',
          );
        }
        const value = quoted.replace(/''/g, "'").toLowerCase();
        return (record: FakeRecord) => String(record[field] ?? '').toLowerCase() === value;
      }
      const match =
        /^\s*modifiedon\s+(ge|gt|lt|le|eq)\s+(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)\s*$/i.exec(
          clause,
        );
      if (!match) {
        throw new FakeHttpError(400, `Syntax error at position 0 in '${filter}'.`, '0x80060888');
      }
      const bound = Date.parse(match[2]);
      const op = match[1].toLowerCase();
      return (record: FakeRecord) => {
        const ms = Date.parse(record.modifiedon);
        return op === 'ge'
          ? ms >= bound
          : op === 'gt'
            ? ms > bound
            : op === 'lt'
              ? ms < bound
              : op === 'le'
                ? ms <= bound
                : ms === bound;
      };
    });
  return (record) => tests.every((test) => test(record));
}

export async function startFakeDynamics(): Promise<FakeDynamics> {
  const records = new Map<string, FakeRecord[]>();

  const fake = new FakeProvider({
    prefix: '/api/data',
    credentialOf: bearerCredential,
    errorBody: (error) => ({
      error: {
        code:
          error.code ??
          (error.status === 401 ? '0x80072560' : error.status === 404 ? '0x80040217' : '0x80040216'),
        message:
          error.status === 429
            ? 'Number of requests exceeded the limit of 6000 over time window of 300 seconds.'
            : error.message,
      },
    }),
    rateLimitCode: '0x80072322',
    rateLimitHeaders: () => ({ 'Retry-After': '1' }),
  });

  const reset = () => {
    for (const set of Object.keys(entities)) records.set(set, []);
    fake.requests.length = 0;
  };
  reset();

  const setOf = (ctx: Context): string => {
    const set = ctx.params.set;
    if (!entities[set]) {
      throw new FakeHttpError(404, `Resource not found for the segment '${set}'.`, '0x8006088a');
    }
    return set;
  };
  const recordOf = (set: string, id: string): FakeRecord => {
    const key = entities[set].key;
    const record = records.get(set)!.find((r) => r[key] === id.toLowerCase());
    if (!record) throw new FakeHttpError(404, `${entities[set].logical} With Id = ${id} Does Not Exist`);
    return record;
  };
  const checkBody = (set: string, body: unknown, creating: boolean): Record<string, unknown> => {
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      throw new FakeHttpError(400, 'The request body is not valid JSON.', '0x80048d19');
    }
    const attributes = new Map(attributesOf(set).map((a) => [a.LogicalName, a]));
    for (const name of Object.keys(body)) {
      const found = attributes.get(name);
      if (!found) {
        throw new FakeHttpError(
          400,
          `An undeclared property '${name}' which only has property annotations in the payload but no property value was found in the payload.`,
          '0x80048d19',
        );
      }
      if (!(creating ? found.IsValidForCreate : found.IsValidForUpdate)) {
        throw new FakeHttpError(400, `Attribute ${name} cannot be set.`, '0x80040203');
      }
    }
    return body as Record<string, unknown>;
  };
  const project = (set: string, record: FakeRecord, select: string | undefined): Record<string, unknown> => {
    const etag = { '@odata.etag': `W/"${Date.parse(record.modifiedon)}"` };
    if (!select) return { ...etag, ...record };
    const names = new Set([...select.split(','), entities[set].key]);
    const known = new Set(attributesOf(set).map((a) => a.LogicalName));
    const result: Record<string, unknown> = { ...etag };
    for (const name of names) {
      if (!known.has(name)) {
        throw new FakeHttpError(
          400,
          `Could not find a property named '${name}' on type 'Microsoft.Dynamics.CRM.${entities[set].logical}'.`,
          '0x80060888',
        );
      }
      result[name] = record[name] ?? null;
    }
    return result;
  };

  const router = fake.router;
  const recordPath = /^([a-z]+)\(([0-9a-fA-F-]{36})\)$/;
  /** `contacts(<guid>)` → the set and id, or undefined for a bare set name. */
  const addressed = (ctx: Context): [string, string] | undefined => {
    const match = recordPath.exec(ctx.params.segment);
    if (!match) return undefined;
    ctx.params.set = match[1];
    setOf(ctx);
    return [match[1], match[2]];
  };

  router.get('/v9.2/:segment', (ctx) => {
    const one = addressed(ctx);
    if (one) {
      const select = typeof ctx.query.$select === 'string' ? ctx.query.$select : undefined;
      ctx.body = project(one[0], recordOf(one[0], one[1]), select);
      return;
    }
    ctx.params.set = ctx.params.segment;
    const set = setOf(ctx);
    const skip = typeof ctx.query.$skiptoken === 'string' ? Number(ctx.query.$skiptoken) : 0;
    const preferred = /odata\.maxpagesize=(\d+)/.exec(ctx.get('prefer'))?.[1];
    const pageSize = Math.min(preferred ? Number(preferred) : 5000, 5000);
    const select = typeof ctx.query.$select === 'string' ? ctx.query.$select : undefined;
    const filter = typeof ctx.query.$filter === 'string' ? parseFilter(set, ctx.query.$filter) : () => true;
    const key = entities[set].key;
    const orderby = typeof ctx.query.$orderby === 'string' ? ctx.query.$orderby : `${key} asc`;
    const byModified = /^modifiedon(\s+asc)?(,|$)/.test(orderby);
    const found = records
      .get(set)!
      .filter(filter)
      .sort(
        (a, b) =>
          (byModified ? Date.parse(a.modifiedon) - Date.parse(b.modifiedon) : 0) ||
          String(a[key]).localeCompare(String(b[key])),
      );
    const page = found.slice(skip, skip + pageSize);
    const following = skip + page.length;
    if (preferred) ctx.set('Preference-Applied', `odata.maxpagesize=${pageSize}`);
    const nextQuery = new URLSearchParams();
    for (const [name, value] of Object.entries(ctx.query)) {
      if (name !== '$skiptoken' && typeof value === 'string') nextQuery.set(name, value);
    }
    nextQuery.set('$skiptoken', String(following));
    ctx.body = {
      '@odata.context': `${ctx.protocol}://${ctx.host}/api/data/v9.2/$metadata#${set}`,
      value: page.map((record) => project(set, record, select)),
      ...(following < found.length && {
        '@odata.nextLink': `${ctx.protocol}://${ctx.host}${ctx.path}?${nextQuery.toString()}`,
      }),
    };
  });

  router.get('/v9.2/:definition/Attributes', (ctx) => {
    const logical = /^EntityDefinitions\(LogicalName='([a-z_]+)'\)$/.exec(ctx.params.definition)?.[1] ?? '';
    const set = Object.keys(entities).find((name) => entities[name].logical === logical);
    if (!set)
      throw new FakeHttpError(404, `Could not find entity with LogicalName = ${logical}`, '0x80040217');
    ctx.body = {
      '@odata.context': `${ctx.protocol}://${ctx.host}/api/data/v9.2/$metadata#EntityDefinitions('${logical}')/Attributes`,
      value: attributesOf(set),
    };
  });

  router.post('/v9.2/:segment', (ctx) => {
    ctx.params.set = ctx.params.segment;
    const set = setOf(ctx);
    const values = checkBody(set, ctx.request.body, true);
    const { key, name } = entities[set];
    if (typeof values[name] !== 'string' || values[name] === '') {
      throw new FakeHttpError(400, `Attribute ${name} is required.`, '0x80040200');
    }
    const id = randomUUID();
    const now = odataTime(Date.now());
    records.get(set)!.push({ ...values, [key]: id, createdon: now, modifiedon: now });
    ctx.status = 204;
    ctx.set('OData-EntityId', `${ctx.protocol}://${ctx.host}/api/data/v9.2/${set}(${id})`);
  });

  router.patch('/v9.2/:segment', (ctx) => {
    const one = addressed(ctx);
    if (!one)
      throw new FakeHttpError(405, 'The requested resource does not support this method.', '0x80060888');
    const [set, id] = one;
    // Without If-Match: * a PATCH of a missing id would create it (upsert); with it, 404.
    const record = recordOf(set, id);
    Object.assign(record, checkBody(set, ctx.request.body, false), { modifiedon: odataTime(Date.now()) });
    ctx.status = 204;
  });

  router.delete('/v9.2/:segment', (ctx) => {
    const one = addressed(ctx);
    if (!one)
      throw new FakeHttpError(405, 'The requested resource does not support this method.', '0x80060888');
    const [set, id] = one;
    const record = recordOf(set, id);
    records.set(
      set,
      records.get(set)!.filter((r) => r !== record),
    );
    ctx.status = 204;
  });

  await fake.start();

  const seed = (set: string, modifiedTimes: number[]): string[] =>
    modifiedTimes.map((ms) => {
      const { key, name } = entities[set];
      const id = randomUUID();
      records.get(set)!.push({
        [key]: id,
        [name]: `${entities[set].logical} ${records.get(set)!.length + 1}`,
        createdon: odataTime(ms),
        modifiedon: odataTime(ms),
      });
      return id;
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
    records: (set) => records.get(set)!,
    seed,
    stored: (set, id) => records.get(set)!.find((record) => record[entities[set].key] === id),
    touch(set, id, modifiedMs) {
      recordOf(set, id).modifiedon = odataTime(modifiedMs);
    },
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    reset,
    stop: () => fake.stop(),
  };
}

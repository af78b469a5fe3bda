import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';

/**
 * A local stand-in for the Dataverse Web API (Dynamics 365, v9.2), written from Microsoft's
 * reference (https://learn.microsoft.com/power-apps/developer/data-platform/webapi/overview):
 *
 * - Entity sets (`contacts`, `accounts`, `opportunities`, `leads`) queried with `$select`, `$filter`
 *   (OData: `eq ne gt ge lt le`, `and`/`or`/`not`, parentheses, `contains`/`startswith`/`endswith`,
 *   typed literals; string comparisons case-insensitive), `$orderby`, `$top`, `$count`; no `$skip`.
 * - Pages sized by `Prefer: odata.maxpagesize` (default and maximum 5,000; a larger value is ignored),
 *   `Preference-Applied` when honoured, continued at `@odata.nextLink` whose `$skiptoken` is a paging
 *   cookie holding the last row's order values and primary key: the next page re-runs the query from
 *   there (ties in `$orderby` end in primary-key order).
 * - Times to the second (`2024-01-01T00:00:00Z`). A change shows once committed (`visibleFromMs`).
 * - Lookups read as `_<name>_value` (metadata names `<name>`), written with
 *   `<navigation>@odata.bind`; a direct write of `_<name>_value` is refused, as Dataverse does.
 * - Change tracking: `Prefer: odata.track-changes` answers `@odata.deltaLink`; following it answers
 *   rows changed since, and deletions as `$deletedEntity` entries with `reason: "deleted"`. A
 *   deleted row is otherwise gone (404 on get).
 * - Writes: `POST` → 204 with `OData-EntityId` (201 and the row with `Prefer: return=representation`);
 *   `PATCH` an upsert, `If-Match: *` making it update-only (404 when missing); `DELETE` 204.
 *   Attributes not valid for create or update are refused.
 * - `EntityDefinitions(LogicalName='…')/Attributes` (and its `Microsoft.Dynamics.CRM.Picklist…`
 *   cast with `OptionSet`), attributes with `AttributeOf`, `IsValidODataAttribute`, `RequiredLevel`.
 * - Errors `{error: {code, message}}`; 429 with `Retry-After` (service protection limits).
 */

export type FakeRecord = Record<string, unknown> & { modifiedon: string };

interface Label {
  LocalizedLabels: { Label: string; LanguageCode: number }[];
  UserLocalizedLabel: { Label: string; LanguageCode: number } | null;
}

interface FakeAttribute {
  '@odata.type': string;
  LogicalName: string;
  SchemaName: string;
  AttributeType: string;
  AttributeTypeName: { Value: string };
  DisplayName: Label;
  IsCustomAttribute: boolean;
  IsValidForCreate: boolean;
  IsValidForUpdate: boolean;
  IsValidForRead: boolean;
  IsValidODataAttribute: boolean;
  IsLogical: boolean;
  AttributeOf: string | null;
  RequiredLevel: { Value: string; CanBeChanged: boolean; ManagedPropertyLogicalName: string };
  /** Lookups: the tables they point to. */
  Targets?: string[];
  /** Picklists: their options (only in the `PicklistAttributeMetadata` cast with `$expand=OptionSet`). */
  OptionSet?: { Options: { Value: number; Label: Label }[] };
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
const maxPageSize = 5000;

function label(text: string | null): Label {
  const localized = text === null ? null : { Label: text, LanguageCode: 1033 };
  return { LocalizedLabels: localized ? [localized] : [], UserLocalizedLabel: localized };
}

const typeNames: Record<string, string> = {
  String: 'StringType',
  Memo: 'MemoType',
  Uniqueidentifier: 'UniqueidentifierType',
  DateTime: 'DateTimeType',
  BigInt: 'BigIntType',
  Integer: 'IntegerType',
  Picklist: 'PicklistType',
  Money: 'MoneyType',
  Lookup: 'LookupType',
  Customer: 'CustomerType',
  Owner: 'OwnerType',
  Virtual: 'VirtualType',
  Boolean: 'BooleanType',
};
const metadataTypes: Record<string, string> = {
  Customer: 'Lookup',
  Owner: 'Lookup',
  Uniqueidentifier: 'UniqueIdentifier',
};

function attribute(
  name: string,
  type: string,
  text: string | null,
  extra: Partial<FakeAttribute> = {},
): FakeAttribute {
  return {
    '@odata.type': `#Microsoft.Dynamics.CRM.${metadataTypes[type] ?? type}AttributeMetadata`,
    LogicalName: name,
    SchemaName: name,
    AttributeType: type,
    AttributeTypeName: { Value: typeNames[type] ?? `${type}Type` },
    DisplayName: label(text),
    IsCustomAttribute: name.startsWith('new_'),
    IsValidForCreate: true,
    IsValidForUpdate: true,
    IsValidForRead: true,
    IsValidODataAttribute: true,
    IsLogical: false,
    AttributeOf: null,
    RequiredLevel: {
      Value: 'None',
      CanBeChanged: true,
      ManagedPropertyLogicalName: 'canmodifyrequirementlevelsettings',
    },
    ...extra,
  };
}

const lookupTargets: Record<string, Record<string, string>> = {
  // navigation property → target set, per lookup
  parentcustomerid: { parentcustomerid_account: 'accounts', parentcustomerid_contact: 'contacts' },
  primarycontactid: { primarycontactid: 'contacts' },
  customerid: { customerid_account: 'accounts', customerid_contact: 'contacts' },
};

function attributesOf(set: string): FakeAttribute[] {
  const { key, name } = entities[set];
  const system = { IsValidForCreate: false, IsValidForUpdate: false };
  const required = {
    Value: 'ApplicationRequired',
    CanBeChanged: true,
    ManagedPropertyLogicalName: 'canmodifyrequirementlevelsettings',
  };
  const lookup = (lookupName: string, type: string, text: string, targets: string[]) => [
    attribute(lookupName, type, text, { Targets: targets }),
    // The lookup's name: read as an annotation, not a property of its own.
    attribute(`${lookupName}name`, 'String', null, {
      ...system,
      AttributeOf: lookupName,
      IsValidODataAttribute: false,
      IsLogical: true,
    }),
  ];
  const common = [
    attribute(key, 'Uniqueidentifier', 'ID', { IsValidForUpdate: false }),
    attribute('createdon', 'DateTime', 'Created On', system),
    attribute('modifiedon', 'DateTime', 'Modified On', system),
    attribute('versionnumber', 'BigInt', null, system),
    attribute('importsequencenumber', 'Integer', 'Import Sequence Number', { IsValidForUpdate: false }),
    attribute('traversedpath', 'String', null, { IsValidForRead: false }),
    ...lookup('ownerid', 'Owner', 'Owner', ['systemuser', 'team']),
    attribute(name, 'String', name === 'lastname' ? 'Last Name' : name === 'subject' ? 'Topic' : 'Name', {
      RequiredLevel: required,
    }),
  ];
  if (set === 'contacts') {
    return [
      ...common,
      attribute('firstname', 'String', 'First Name'),
      attribute('fullname', 'String', 'Full Name', system),
      attribute('emailaddress1', 'String', 'Email'),
      ...lookup('parentcustomerid', 'Customer', 'Company Name', ['account', 'contact']),
      attribute('new_tier', 'Picklist', 'Tier', {
        OptionSet: {
          Options: [
            { Value: 100000000, Label: label('Gold') },
            { Value: 100000001, Label: label('Silver') },
          ],
        },
      }),
    ];
  }
  if (set === 'accounts') {
    return [
      ...common,
      attribute('revenue', 'Money', 'Annual Revenue'),
      ...lookup('primarycontactid', 'Lookup', 'Primary Contact', ['contact']),
    ];
  }
  if (set === 'opportunities') {
    return [
      ...common,
      attribute('estimatedvalue', 'Money', 'Est. Revenue'),
      ...lookup('customerid', 'Customer', 'Potential Customer', ['account', 'contact']),
    ];
  }
  return [...common, attribute('companyname', 'String', 'Company Name')];
}

/** The property a record carries for an attribute: `_<name>_value` for lookups. */
function propertyName(a: FakeAttribute): string {
  return ['Lookup', 'Customer', 'Owner'].includes(a.AttributeType)
    ? `_${a.LogicalName}_value`
    : a.LogicalName;
}

/** Properties a query may name: readable, OData-valid attributes. */
function propertiesOf(set: string): Map<string, FakeAttribute> {
  return new Map(
    attributesOf(set)
      .filter((a) => a.IsValidForRead && a.IsValidODataAttribute)
      .map((a) => [propertyName(a), a]),
  );
}

/** Dataverse keeps times to the second. */
const toSecond = (ms: number) => Math.floor(ms / 1000) * 1000;
function odataTime(ms: number): string {
  return new Date(toSecond(ms)).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const syntaxError = (message: string) => new FakeHttpError(400, message, '0x80060888');
const noProperty = (set: string, name: string) =>
  syntaxError(
    `Could not find a property named '${name}' on type 'Microsoft.Dynamics.CRM.${entities[set].logical}'.`,
  );

// ---------------------------------------------------------------------------------------------
// $filter
// ---------------------------------------------------------------------------------------------

type Value = string | number | boolean | null;
type Literal = { kind: 'string' | 'datetime' | 'number' | 'boolean' | 'null' | 'guid'; value: Value };
type Token = { type: 'word' | 'punct' | 'literal'; text: string; literal?: Literal };

function tokenize(filter: string): Token[] {
  const tokens: Token[] = [];
  const patterns: [RegExp, (m: RegExpExecArray) => Token | null][] = [
    [/\s+/y, () => null],
    [
      /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,7})?)?(?:Z|[+-]\d{2}:\d{2})/y,
      (m) => ({ type: 'literal', text: m[0], literal: { kind: 'datetime', value: Date.parse(m[0]) } }),
    ],
    [
      /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/y,
      (m) => ({ type: 'literal', text: m[0], literal: { kind: 'guid', value: m[0].toLowerCase() } }),
    ],
    [
      /-?\d+(?:\.\d+)?(?![\w-])/y,
      (m) => ({ type: 'literal', text: m[0], literal: { kind: 'number', value: Number(m[0]) } }),
    ],
    [
      /'((?:[^']|'')*)'/y,
      (m) => ({ type: 'literal', text: m[0], literal: { kind: 'string', value: m[1].replace(/''/g, "'") } }),
    ],
    [/[(),]/y, (m) => ({ type: 'punct', text: m[0] })],
    [/[A-Za-z_][\w.]*/y, (m) => ({ type: 'word', text: m[0] })],
  ];
  let at = 0;
  outer: while (at < filter.length) {
    for (const [pattern, make] of patterns) {
      pattern.lastIndex = at;
      const match = pattern.exec(filter);
      if (!match) continue;
      at = pattern.lastIndex;
      let token = make(match);
      if (token?.type === 'word' && /^(true|false|null)$/.test(token.text)) {
        token = {
          type: 'literal',
          text: token.text,
          literal:
            token.text === 'null'
              ? { kind: 'null', value: null }
              : { kind: 'boolean', value: token.text === 'true' },
        };
      }
      if (token) tokens.push(token);
      continue outer;
    }
    throw syntaxError(`Syntax error at position ${at} in '${filter}'.`);
  }
  return tokens;
}

const edmTypes: Record<string, string> = {
  String: 'Edm.String',
  Memo: 'Edm.String',
  Uniqueidentifier: 'Edm.Guid',
  Lookup: 'Edm.Guid',
  Customer: 'Edm.Guid',
  Owner: 'Edm.Guid',
  DateTime: 'Edm.DateTimeOffset',
  BigInt: 'Edm.Int64',
  Integer: 'Edm.Int32',
  Picklist: 'Edm.Int32',
  Money: 'Edm.Decimal',
  Boolean: 'Edm.Boolean',
};
const literalTypes: Record<Literal['kind'], string> = {
  string: 'Edm.String',
  datetime: 'Edm.DateTimeOffset',
  number: 'Edm.Int32',
  boolean: 'Edm.Boolean',
  null: 'null',
  guid: 'Edm.Guid',
};
const numeric = new Set(['Edm.Int64', 'Edm.Int32', 'Edm.Decimal']);
const operatorKinds: Record<string, string> = {
  eq: 'Equal',
  ne: 'NotEqual',
  gt: 'GreaterThan',
  ge: 'GreaterThanOrEqual',
  lt: 'LessThan',
  le: 'LessThanOrEqual',
};

function comparable(a: FakeAttribute, value: unknown): Value {
  if (value === null || value === undefined) return null;
  if (a.AttributeType === 'DateTime') return Date.parse(String(value));
  if (typeof value === 'string') return value.toLowerCase();
  return value as Value;
}

type Predicate = (record: FakeRecord) => boolean;

function parseFilter(set: string, filter: string): Predicate {
  const tokens = tokenize(filter);
  const properties = propertiesOf(set);
  let position = 0;
  const peek = () => tokens[position];
  const isWord = (word: string, token = peek()) => token?.type === 'word' && token.text === word;
  const expect = (text: string) => {
    if (peek()?.text !== text)
      throw syntaxError(`Syntax error: '${text}' expected at position ${position} in '${filter}'.`);
    position++;
  };
  const property = (): [string, FakeAttribute] => {
    const token = tokens[position++];
    if (token?.type !== 'word') throw syntaxError(`Syntax error at position ${position} in '${filter}'.`);
    const found = properties.get(token.text);
    if (!found) throw noProperty(set, token.text);
    return [token.text, found];
  };
  const primary = (): Predicate => {
    if (isWord('not')) {
      position++;
      const inner = primary();
      return (r) => !inner(r);
    }
    if (peek()?.text === '(') {
      position++;
      const inner = or();
      expect(')');
      return inner;
    }
    if (
      ['contains', 'startswith', 'endswith'].includes(peek()?.text ?? '') &&
      tokens[position + 1]?.text === '('
    ) {
      const fn = tokens[position].text;
      position += 2;
      const [name, a] = property();
      expect(',');
      const token = tokens[position++];
      if (token?.literal?.kind !== 'string' || edmTypes[a.AttributeType] !== 'Edm.String') {
        throw syntaxError(`The '${fn}' function needs a string property and a string value.`);
      }
      expect(')');
      const needle = String(token.literal.value).toLowerCase();
      return (r) => {
        const value = r[name];
        if (typeof value !== 'string') return false;
        const hay = value.toLowerCase();
        return fn === 'contains'
          ? hay.includes(needle)
          : fn === 'startswith'
            ? hay.startsWith(needle)
            : hay.endsWith(needle);
      };
    }
    const [name, a] = property();
    const opToken = tokens[position++];
    const op = opToken?.text;
    if (!op || !operatorKinds[op]) throw syntaxError(`Syntax error at position ${position} in '${filter}'.`);
    const valueToken = tokens[position++];
    const literal = valueToken?.literal;
    if (!literal) throw syntaxError(`Syntax error at position ${position} in '${filter}'.`);
    const left = edmTypes[a.AttributeType];
    const right = literalTypes[literal.kind];
    const fits =
      right === 'null' ||
      left === right ||
      (numeric.has(left) && literal.kind === 'number') ||
      (left === 'Edm.Guid' && literal.kind === 'guid');
    if (!fits) {
      throw syntaxError(
        `A binary operator with incompatible types was detected. Found operand types '${left}' and '${right}' for operator kind '${operatorKinds[op]}'.`,
      );
    }
    const bound = literal.kind === 'datetime' ? (literal.value as number) : comparable(a, literal.value);
    return (r) => {
      const value = comparable(a, r[name]);
      if (op === 'eq') return value === bound;
      if (op === 'ne') return value !== bound;
      if (value === null || bound === null) return false;
      return op === 'gt'
        ? value > bound
        : op === 'ge'
          ? value >= bound
          : op === 'lt'
            ? value < bound
            : value <= bound;
    };
  };
  const and = (): Predicate => {
    const parts = [primary()];
    while (isWord('and')) {
      position++;
      parts.push(primary());
    }
    return (r) => parts.every((p) => p(r));
  };
  const or = (): Predicate => {
    const parts = [and()];
    while (isWord('or')) {
      position++;
      parts.push(and());
    }
    return (r) => parts.some((p) => p(r));
  };
  const predicate = or();
  if (position < tokens.length) throw syntaxError(`Syntax error at position ${position} in '${filter}'.`);
  return predicate;
}

// ---------------------------------------------------------------------------------------------
// The environment
// ---------------------------------------------------------------------------------------------

/** A row: its record, the version shown until `visibleFromMs` (a change committed late), its change number. */
interface Row {
  record: FakeRecord;
  previous?: FakeRecord;
  visibleFromMs: number;
  change: number;
}

interface Tombstone {
  id: string;
  change: number;
}

export async function startFakeDynamics(): Promise<FakeDynamics> {
  const rows = new Map<string, Row[]>();
  const tombstones = new Map<string, Tombstone[]>();
  let changeCounter = 1000;

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
  const now = () => fake.now();

  const reset = () => {
    for (const set of Object.keys(entities)) {
      rows.set(set, []);
      tombstones.set(set, []);
    }
    fake.requests.length = 0;
  };
  reset();

  const setOf = (name: string): string => {
    if (!Object.hasOwn(entities, name))
      throw new FakeHttpError(404, `Resource not found for the segment '${name}'.`, '0x8006088a');
    return name;
  };
  /** The version of a row readers see now: the previous one until a late change commits. */
  const visible = (row: Row): FakeRecord | undefined =>
    row.visibleFromMs <= now() ? row.record : row.previous;
  const rowOf = (set: string, id: string): Row | undefined => {
    const key = entities[set].key;
    return rows.get(set)!.find((r) => r.record[key] === id.toLowerCase());
  };
  const notFound = (set: string, id: string) =>
    new FakeHttpError(404, `${entities[set].logical} With Id = ${id} Does Not Exist`, '0x80040217');
  const visibleRow = (set: string, id: string): FakeRecord => {
    const row = rowOf(set, id);
    const seen = row && visible(row);
    if (!seen) throw notFound(set, id);
    return seen;
  };

  const blank = (set: string): Record<string, unknown> =>
    Object.fromEntries([...propertiesOf(set).keys()].map((name) => [name, null]));

  const stamp = (record: FakeRecord, ms: number, change: number) => {
    record.modifiedon = odataTime(ms);
    record.versionnumber = change;
  };

  const create = (
    set: string,
    values: Record<string, unknown>,
    ms: number,
    id: string = randomUUID(),
  ): Row => {
    const { key } = entities[set];
    const change = ++changeCounter;
    const record = {
      ...blank(set),
      ...values,
      [key]: id.toLowerCase(),
      _ownerid_value: values._ownerid_value ?? '00000000-0000-0000-0000-0000000000aa',
      createdon: odataTime(ms),
    } as unknown as FakeRecord;
    stamp(record, ms, change);
    if (set === 'contacts') record.fullname = [record.firstname, record.lastname].filter(Boolean).join(' ');
    // A write through the API is committed when it answers: visible at once, whatever the clock.
    const row: Row = { record, visibleFromMs: Number.NEGATIVE_INFINITY, change };
    rows.get(set)!.push(row);
    return row;
  };
  const update = (
    set: string,
    row: Row,
    values: Record<string, unknown>,
    ms: number,
    visibleFromMs = Number.NEGATIVE_INFINITY,
  ) => {
    const shown = visible(row);
    row.previous = shown && { ...shown };
    Object.assign(row.record, values);
    row.change = ++changeCounter;
    stamp(row.record, ms, row.change);
    if (set === 'contacts')
      row.record.fullname = [row.record.firstname, row.record.lastname].filter(Boolean).join(' ');
    row.visibleFromMs = visibleFromMs;
  };
  const remove = (set: string, row: Row) => {
    rows.set(
      set,
      rows.get(set)!.filter((r) => r !== row),
    );
    tombstones.get(set)!.push({ id: String(row.record[entities[set].key]), change: ++changeCounter });
  };

  /** A write's body, checked as Dataverse checks it; `@odata.bind` resolved to lookup values. */
  const checkBody = (set: string, body: unknown, creating: boolean): Record<string, unknown> => {
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      throw new FakeHttpError(400, 'The request body is not valid JSON.', '0x80048d19');
    }
    const attributes = new Map(attributesOf(set).map((a) => [a.LogicalName, a]));
    const values: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(body)) {
      const bind = /^(\w+)@odata\.bind$/.exec(name);
      if (bind) {
        const lookup = Object.entries(lookupTargets).find(
          ([lookupName, navs]) => attributes.has(lookupName) && navs[bind[1]],
        );
        if (!lookup) {
          throw syntaxError(
            `An undeclared property '${bind[1]}' which only has property annotations in the payload but no property value was found in the payload.`,
          );
        }
        const target = /^\/?(\w+)\(([0-9a-fA-F-]{36})\)$/.exec(String(value));
        if (!target || target[1] !== lookup[1][bind[1]]) {
          throw syntaxError(
            `The value '${String(value)}' of '${name}' is not a reference to a ${lookup[1][bind[1]]} row.`,
          );
        }
        visibleRow(target[1], target[2]);
        values[`_${lookup[0]}_value`] = target[2].toLowerCase();
        continue;
      }
      if (/^_\w+_value$/.test(name)) {
        throw syntaxError(
          'CRM do not support direct update of Entity Reference properties, Use Navigation properties instead.',
        );
      }
      const found = attributes.get(name);
      if (!found || !found.IsValidODataAttribute) {
        throw syntaxError(
          `The property '${name}' does not exist on type 'Microsoft.Dynamics.CRM.${entities[set].logical}'. Make sure to only use property names that are defined by the type.`,
        );
      }
      if (!(creating ? found.IsValidForCreate : found.IsValidForUpdate)) {
        // Dataverse refuses or ignores such attributes by kind (verify); the fake refuses.
        throw new FakeHttpError(
          400,
          `Attribute ${name} cannot be set: it is not valid for ${creating ? 'create' : 'update'}.`,
          '0x80040203',
        );
      }
      if (
        found.AttributeType === 'Picklist' &&
        value !== null &&
        !found.OptionSet?.Options.some((o) => o.Value === value)
      ) {
        throw new FakeHttpError(
          400,
          `A validation error occurred. The value ${String(value)} of '${name}' on record of type '${entities[set].logical}' is outside the valid range.`,
          '0x80044331',
        );
      }
      values[name] = value;
    }
    return values;
  };

  const withAnnotations = (set: string, record: Record<string, unknown>, annotate: boolean) => {
    if (!annotate) return record;
    const out: Record<string, unknown> = { ...record };
    for (const a of attributesOf(set)) {
      const name = propertyName(a);
      if (!(name in record) || record[name] === null) continue;
      if (a.AttributeType === 'Picklist') {
        const option = a.OptionSet?.Options.find((o) => o.Value === record[name]);
        if (option)
          out[`${name}@OData.Community.Display.V1.FormattedValue`] = option.Label.UserLocalizedLabel?.Label;
      }
      if (a.Targets) out[`${name}@Microsoft.Dynamics.CRM.lookuplogicalname`] = a.Targets[0];
    }
    return out;
  };

  /** A record as answered: `$select`ed properties (the key always), all readable ones without it. */
  const project = (set: string, record: FakeRecord, select: string | undefined, annotate = false) => {
    const etag = { '@odata.etag': `W/"${String(record.versionnumber)}"` };
    const properties = propertiesOf(set);
    const names = select ? [...new Set([...select.split(','), entities[set].key])] : [...properties.keys()];
    const result: Record<string, unknown> = { ...etag };
    for (const name of names) {
      if (!properties.has(name)) throw noProperty(set, name);
      result[name] = record[name] ?? null;
    }
    return withAnnotations(set, result, annotate);
  };

  const preferences = (ctx: Context) => ctx.get('prefer').toLowerCase();
  const pageSizeOf = (ctx: Context) => {
    const asked = /odata\.maxpagesize=(\d+)/.exec(preferences(ctx))?.[1];
    const size = asked ? Number(asked) : undefined;
    // A max page size above 5,000 is ignored.
    return { asked: size, used: size && size <= maxPageSize ? size : maxPageSize };
  };

  /** A paging cookie: the last row's order values and key, as Dataverse's `$skiptoken` carries them. */
  const cookieOf = (page: number, values: Value[]) =>
    `<cookie pagenumber="${page}" pagingcookie="${encodeURIComponent(
      encodeURIComponent(`<cookie page="${page - 1}">${JSON.stringify(values)}</cookie>`),
    )}" istracking="False" />`;
  const parseCookie = (token: string): { page: number; values: Value[] } => {
    const match = /^<cookie pagenumber="(\d+)" pagingcookie="([^"]*)" istracking="False" \/>$/.exec(token);
    const inner =
      match && /^<cookie page="\d+">(.*)<\/cookie>$/.exec(decodeURIComponent(decodeURIComponent(match[2])));
    if (!match || !inner)
      throw new FakeHttpError(400, 'Invalid $skiptoken: the paging cookie is malformed.', '0x80040203');
    return { page: Number(match[1]), values: JSON.parse(inner[1]) as Value[] };
  };

  const router = fake.router;
  const recordPath = /^([a-z]+)\(([0-9a-fA-F-]{36})\)$/;

  router.get('/v9.2/:segment', (ctx) => {
    const one = recordPath.exec(ctx.params.segment);
    const annotate = /odata\.include-annotations/.test(preferences(ctx));
    if (one) {
      const set = setOf(one[1]);
      const select = typeof ctx.query.$select === 'string' ? ctx.query.$select : undefined;
      ctx.body = project(set, visibleRow(set, one[2]), select, annotate);
      return;
    }
    const set = setOf(ctx.params.segment);
    const q = ctx.query as Record<string, string | undefined>;
    if (q.$skip !== undefined) throw syntaxError('The query parameter $skip is not supported.');
    const select = q.$select;
    const { asked, used } = pageSizeOf(ctx);
    if (asked !== undefined && asked <= maxPageSize)
      ctx.set('Preference-Applied', `odata.maxpagesize=${used}`);
    const tracking = /odata\.track-changes/.test(preferences(ctx)) || q.$deltatoken !== undefined;
    if (tracking) {
      ctx.body = delta(ctx, set, select, used, annotate);
      return;
    }
    const top = q.$top === undefined ? undefined : Number(q.$top);
    if (top !== undefined && (!Number.isInteger(top) || top < 0))
      throw syntaxError(`Invalid value for $top: ${q.$top}`);
    fake.logListing(ctx, { object: set, pageSize: Math.min(used, top ?? Infinity), maxPageSize });
    const properties = propertiesOf(set);
    const key = entities[set].key;
    const orderby = (q.$orderby ?? '')
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean)
      .map((part) => {
        const [name, direction = 'asc'] = part.split(/\s+/);
        const a = properties.get(name);
        if (!a) throw noProperty(set, name);
        if (direction !== 'asc' && direction !== 'desc')
          throw syntaxError(`Syntax error in $orderby: '${part}'.`);
        return { name, a, desc: direction === 'desc' };
      });
    // Paging keeps a total order: ties end in primary-key order.
    if (!orderby.some((o) => o.name === key))
      orderby.push({ name: key, a: properties.get(key)!, desc: false });
    const filter = q.$filter ? parseFilter(set, q.$filter) : () => true;
    const compareValues = (x: Value, y: Value, desc: boolean) => {
      if (x === y) return 0;
      // Nulls sort first ascending, as SQL Server does.
      const order = x === null ? -1 : y === null ? 1 : x < y ? -1 : 1;
      return desc ? -order : order;
    };
    const keyOf = (r: FakeRecord) => orderby.map((o) => comparable(o.a, r[o.name]));
    const compareKeys = (x: Value[], y: Value[]) => {
      for (let i = 0; i < orderby.length; i++) {
        const c = compareValues(x[i], y[i], orderby[i].desc);
        if (c) return c;
      }
      return 0;
    };
    let page = 1;
    let after: Value[] | undefined;
    if (q.$skiptoken !== undefined) ({ page, values: after } = parseCookie(q.$skiptoken));
    const found = rows
      .get(set)!
      .map(visible)
      .filter((r): r is FakeRecord => r !== undefined)
      .filter(filter)
      .sort((a, b) => compareKeys(keyOf(a), keyOf(b)));
    const total = top === undefined ? found.length : Math.min(found.length, top);
    const rest = after ? found.filter((r) => compareKeys(keyOf(r), after) > 0) : found;
    const already = after ? found.length - rest.length : 0;
    const pageRows = rest.slice(0, Math.min(used, Math.max(0, total - already)));
    const more = already + pageRows.length < total;
    const nextQuery = new URLSearchParams();
    for (const [name, value] of Object.entries(q))
      if (name !== '$skiptoken' && value !== undefined) nextQuery.set(name, value);
    if (more) nextQuery.set('$skiptoken', cookieOf(page + 1, keyOf(pageRows.at(-1)!)));
    ctx.body = {
      '@odata.context': `${ctx.protocol}://${ctx.host}/api/data/v9.2/$metadata#${set}${select ? `(${select})` : ''}`,
      ...(q.$count === 'true' && { '@odata.count': Math.min(found.length, 5000) }),
      value: pageRows.map((record) => project(set, record, select, annotate)),
      ...(more && { '@odata.nextLink': `${ctx.protocol}://${ctx.host}${ctx.path}?${nextQuery.toString()}` }),
    };
  });

  /**
   * Change tracking: the first request answers every row and a delta link; a delta link answers
   * rows changed, and rows deleted, since it was made. The token never passes a change not yet
   * committed. `$filter`, `$orderby` and `$top` do not go with change tracking.
   */
  const delta = (
    ctx: Context,
    set: string,
    select: string | undefined,
    pageSize: number,
    annotate: boolean,
  ) => {
    const q = ctx.query as Record<string, string | undefined>;
    for (const option of ['$filter', '$orderby', '$top', '$expand']) {
      if (q[option] !== undefined)
        throw syntaxError(`The query option ${option} is not supported with change tracking.`);
    }
    fake.logListing(ctx, { object: set, pageSize, maxPageSize });
    let since = 0;
    if (q.$deltatoken !== undefined) {
      const match = /^(\d+)!/.exec(q.$deltatoken);
      if (!match) throw new FakeHttpError(400, 'Invalid delta token.', '0x80044352');
      since = Number(match[1]);
    }
    const skip = q.$skiptoken === undefined ? 0 : Number(q.$skiptoken);
    const pending = rows
      .get(set)!
      .filter((r) => r.visibleFromMs > now())
      .map((r) => r.change);
    const upTo = pending.length ? Math.min(...pending) - 1 : changeCounter;
    const changed = rows
      .get(set)!
      .filter((r) => r.change > since && r.change <= upTo && r.visibleFromMs <= now())
      .map((r) => ({ change: r.change, entry: project(set, r.record, select, annotate) }));
    const deleted = since
      ? tombstones
          .get(set)!
          .filter((t) => t.change > since && t.change <= upTo)
          .map((t) => ({
            change: t.change,
            entry: {
              '@odata.context': `${ctx.protocol}://${ctx.host}/api/data/v9.2/$metadata#${set}/$deletedEntity`,
              id: t.id,
              reason: 'deleted',
            },
          }))
      : [];
    const all = [...changed, ...deleted].sort((a, b) => a.change - b.change);
    const pageEntries = all.slice(skip, skip + pageSize);
    const base = `${ctx.protocol}://${ctx.host}${ctx.path}`;
    const params = new URLSearchParams(select ? { $select: select } : {});
    const more = skip + pageEntries.length < all.length;
    if (more) {
      const next = new URLSearchParams(params);
      if (q.$deltatoken) next.set('$deltatoken', q.$deltatoken);
      next.set('$skiptoken', String(skip + pageEntries.length));
      return {
        '@odata.context': `${ctx.protocol}://${ctx.host}/api/data/v9.2/$metadata#${set}/$delta`,
        value: pageEntries.map((e) => e.entry),
        '@odata.nextLink': `${base}?${next.toString()}`,
      };
    }
    const token = new URLSearchParams(params);
    token.set('$deltatoken', `${upTo}!${new Date(now()).toISOString()}`);
    return {
      '@odata.context': `${ctx.protocol}://${ctx.host}/api/data/v9.2/$metadata#${set}/$delta`,
      value: pageEntries.map((e) => e.entry),
      '@odata.deltaLink': `${base}?${token.toString()}`,
    };
  };

  const definitionOf = (definition: string): string => {
    const logical = /^EntityDefinitions\(LogicalName='([a-z_]+)'\)$/.exec(definition)?.[1] ?? '';
    const set = Object.keys(entities).find((name) => entities[name].logical === logical);
    if (!set)
      throw new FakeHttpError(404, `Could not find entity with LogicalName = ${logical}`, '0x80040217');
    return set;
  };
  const context = (ctx: Context, logical: string) =>
    `${ctx.protocol}://${ctx.host}/api/data/v9.2/$metadata#EntityDefinitions('${logical}')/Attributes`;
  const withoutOptions = (a: FakeAttribute): Omit<FakeAttribute, 'OptionSet'> => {
    const rest: Partial<FakeAttribute> = { ...a };
    delete rest.OptionSet;
    return rest as Omit<FakeAttribute, 'OptionSet'>;
  };
  /** `$select` on metadata: the properties named, with `@odata.type` and `MetadataId`. */
  const selected = (ctx: Context, a: Partial<FakeAttribute>) => {
    const select = typeof ctx.query.$select === 'string' ? ctx.query.$select.split(',') : undefined;
    if (!select) return a;
    return Object.fromEntries(
      Object.entries(a).filter(
        ([name]) => name === '@odata.type' || name === 'OptionSet' || select.includes(name),
      ),
    );
  };

  router.get('/v9.2/:definition/Attributes', (ctx) => {
    const set = definitionOf(ctx.params.definition);
    ctx.body = {
      '@odata.context': context(ctx, entities[set].logical),
      value: attributesOf(set).map((a) => selected(ctx, withoutOptions(a))),
    };
  });

  // A cast to one kind of attribute, e.g. Microsoft.Dynamics.CRM.PicklistAttributeMetadata, with its OptionSet.
  router.get('/v9.2/:definition/Attributes/:cast', (ctx) => {
    const set = definitionOf(ctx.params.definition);
    const kind = /^Microsoft\.Dynamics\.CRM\.(\w+)AttributeMetadata$/.exec(ctx.params.cast)?.[1];
    if (!kind)
      throw new FakeHttpError(404, `Resource not found for the segment '${ctx.params.cast}'.`, '0x8006088a');
    const expand = String(ctx.query.$expand ?? '').includes('OptionSet');
    ctx.body = {
      '@odata.context': `${context(ctx, entities[set].logical)}/Microsoft.Dynamics.CRM.${kind}AttributeMetadata`,
      value: attributesOf(set)
        .filter((a) => a['@odata.type'] === `#Microsoft.Dynamics.CRM.${kind}AttributeMetadata`)
        .map((a) => selected(ctx, expand ? a : withoutOptions(a))),
    };
  });

  const representation = (ctx: Context) => /return=representation/.test(preferences(ctx));

  router.post('/v9.2/:segment', (ctx) => {
    const set = setOf(ctx.params.segment);
    const values = checkBody(set, ctx.request.body, true);
    const key = entities[set].key;
    const id = typeof values[key] === 'string' ? String(values[key]) : undefined;
    if (id && rowOf(set, id)) {
      throw new FakeHttpError(412, 'A record with matching key values already exists.', '0x80040237');
    }
    const row = create(set, values, now(), id);
    ctx.set(
      'OData-EntityId',
      `${ctx.protocol}://${ctx.host}/api/data/v9.2/${set}(${String(row.record[key])})`,
    );
    if (representation(ctx)) {
      ctx.status = 201;
      ctx.body = project(
        set,
        row.record,
        typeof ctx.query.$select === 'string' ? ctx.query.$select : undefined,
        /odata\.include-annotations/.test(preferences(ctx)),
      );
      return;
    }
    ctx.status = 204;
  });

  router.patch('/v9.2/:segment', (ctx) => {
    const one = recordPath.exec(ctx.params.segment);
    if (!one)
      throw new FakeHttpError(
        405,
        'The requested resource does not support http method PATCH.',
        '0x80060888',
      );
    const set = setOf(one[1]);
    const id = one[2].toLowerCase();
    const row = rowOf(set, id);
    const ifMatch = ctx.get('if-match');
    const ifNoneMatch = ctx.get('if-none-match');
    if (!row && ifMatch === '*') throw notFound(set, id);
    if (row && ifNoneMatch === '*')
      throw new FakeHttpError(412, 'A record with matching key values already exists.', '0x80040237');
    if (row && ifMatch && ifMatch !== '*' && ifMatch !== `W/"${String(row.record.versionnumber)}"`) {
      throw new FakeHttpError(
        412,
        "The version of the existing record doesn't match the RowVersion property provided.",
        '0x80060882',
      );
    }
    let target: Row;
    if (row) {
      update(set, row, checkBody(set, ctx.request.body, false), now());
      target = row;
    } else {
      // No If-Match: * — an upsert, which creates the row.
      target = create(set, checkBody(set, ctx.request.body, true), now(), id);
    }
    ctx.set('OData-EntityId', `${ctx.protocol}://${ctx.host}/api/data/v9.2/${set}(${id})`);
    if (representation(ctx)) {
      ctx.status = 200;
      ctx.body = project(
        set,
        target.record,
        typeof ctx.query.$select === 'string' ? ctx.query.$select : undefined,
        /odata\.include-annotations/.test(preferences(ctx)),
      );
      return;
    }
    ctx.status = 204;
  });

  router.delete('/v9.2/:segment', (ctx) => {
    const one = recordPath.exec(ctx.params.segment);
    if (!one)
      throw new FakeHttpError(
        405,
        'The requested resource does not support http method DELETE.',
        '0x80060888',
      );
    const set = setOf(one[1]);
    const row = rowOf(set, one[2]);
    if (!row) throw notFound(set, one[2]);
    remove(set, row);
    ctx.status = 204;
  });

  await fake.start();

  const liveRow = (set: string, id: string): Row => {
    const row = rowOf(setOf(set), id);
    if (!row) throw new Error(`no ${set} ${id} in the fake`);
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
    records: (set) => rows.get(set)!.map((row) => row.record),
    seed: (set, modifiedTimes) =>
      modifiedTimes.map((ms) => {
        const { key, name } = entities[setOf(set)];
        const row = create(set, { [name]: `${entities[set].logical} ${rows.get(set)!.length + 1}` }, ms);
        return String(row.record[key]);
      }),
    stored: (set, id) => rowOf(set, id)?.record,
    touch(set, id, modifiedMs, options) {
      update(set, liveRow(set, id), {}, modifiedMs, options?.visibleFromMs);
    },
    remove(set, id) {
      // Dataverse keeps no deletion time: change tracking lists the deletion after the changes before it.
      remove(set, liveRow(set, id));
    },
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    reset,
    stop: () => fake.stop(),
  };
}

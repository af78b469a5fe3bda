import { createHash, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';

/**
 * A local stand-in for the Salesforce REST API (v62.0), written from Salesforce's public reference
 * (REST API Developer Guide, SOQL and SOSL Reference, SOAP API data replication calls):
 *
 * - SOQL through `GET /query?q=` and `GET /queryAll?q=` (queryAll also returns soft-deleted
 *   records, `IsDeleted = true`, until they leave the Recycle Bin after 15 days), answering
 *   `{totalSize, done, records, nextRecordsUrl?}`. Batches are sized by `Sforce-Query-Options:
 *   batchSize=` (default and maximum 2,000, minimum 200) and continued at `nextRecordsUrl`
 *   (`/query/<locator>-<offset>` for both resources), a cursor that holds the result as queried;
 *   a user keeps at most 10 cursors open (opening another releases the oldest), and a cursor idle
 *   for 15 minutes expires.
 * - The SOQL it parses: a field list (`FIELDS(ALL|STANDARD|CUSTOM)`, `COUNT()`), one object,
 *   `WHERE` with `AND`/`OR` (never mixed without parentheses), `NOT`, comparisons, `IN`, `LIKE`,
 *   typed literals (dateTime unquoted, strings quoted with backslash escapes, compared
 *   case-insensitively), `ORDER BY` (ties in no particular order: Salesforce guarantees none),
 *   `LIMIT`, `OFFSET` (at most 2,000).
 * - Times at Salesforce's precision: whole seconds, written `2024-01-01T00:00:00.000+0000`.
 *   `SystemModstamp` is stamped when a transaction starts and shown once it commits, so a change can
 *   appear after later-stamped ones (`touch(…, {visibleFromMs})`); `GET /sobjects/{o}/updated` and
 *   `/deleted` (whole minutes, at most 30 days back) answer `latestDateCovered`, before any change
 *   still uncommitted, the point a replicating client must resume from.
 * - `GET /sobjects/{o}/{id}`, `POST /sobjects/{o}` → 201 `{id, success, errors}`, `PATCH`/`DELETE`
 *   → 204, checked as Salesforce checks them (createable versus updateable, required fields,
 *   restricted picklists); a deleted record answers 404 `ENTITY_IS_DELETED`.
 * - `GET /sobjects` and `/sobjects/{o}/describe`, with inactive picklist values (`active: false`),
 *   formula fields, fields settable on create only (`Lead.IsConverted`), deprecated fields.
 * - Errors as a JSON array `[{message, errorCode, fields?}]`; `Sforce-Limit-Info` on answers.
 */

const version = '/services/data/v62.0';
const minute = 60_000;
const day = 86_400_000;
/** Deleted records stay in the Recycle Bin, and in queryAll and getDeleted, for 15 days. */
const recycleBinMs = 15 * day;
/** getUpdated and getDeleted answer for no more than 30 days back. */
const replicationMs = 30 * day;
const maxBatchSize = 2000;
const minBatchSize = 200;
const maxOffset = 2000;
const maxOpenCursors = 10;
const cursorIdleMs = 15 * minute;
const maxReplicationIds = 600_000;
const userId = '005000000000001AAA';

interface PicklistValue {
  value: string;
  label: string;
  active: boolean;
  defaultValue: boolean;
  validFor: null;
}

interface FakeField {
  name: string;
  label: string;
  type: string;
  soapType: string;
  length: number;
  custom: boolean;
  nillable: boolean;
  createable: boolean;
  updateable: boolean;
  defaultedOnCreate: boolean;
  calculated: boolean;
  filterable: boolean;
  sortable: boolean;
  unique: boolean;
  externalId: boolean;
  nameField: boolean;
  deprecatedAndHidden: boolean;
  restrictedPicklist: boolean;
  referenceTo: string[];
  picklistValues: PicklistValue[];
}

type FakeRecord = Record<string, unknown> & { Id: string; SystemModstamp: string };

export interface FakeSalesforce extends ConformanceFake {
  /** Deletes a custom field from an object, as an admin would: describe and SOQL no longer know it. */
  removeField(sobject: string, name: string): void;
  /** The next request is refused as over the org's daily API request limit. */
  exhaustLimit(): void;
}

const soapTypes: Record<string, string> = {
  id: 'tns:ID',
  reference: 'tns:ID',
  boolean: 'xsd:boolean',
  datetime: 'xsd:dateTime',
  date: 'xsd:date',
  currency: 'xsd:double',
  double: 'xsd:double',
  percent: 'xsd:double',
  int: 'xsd:int',
};

function field(name: string, type: string, label: string, extra: Partial<FakeField> = {}): FakeField {
  const text = !soapTypes[type] || type === 'id' || type === 'reference';
  return {
    name,
    label,
    type,
    soapType: soapTypes[type] ?? 'xsd:string',
    length: text ? (type === 'id' || type === 'reference' ? 18 : 255) : 0,
    custom: name.endsWith('__c'),
    nillable: type !== 'boolean',
    createable: true,
    updateable: true,
    defaultedOnCreate: type === 'boolean',
    calculated: false,
    filterable: true,
    sortable: true,
    unique: false,
    externalId: false,
    nameField: false,
    deprecatedAndHidden: false,
    restrictedPicklist: false,
    referenceTo: [],
    picklistValues: [],
    ...extra,
  };
}

function picklist(values: string[], inactive: string[] = [], defaultValue?: string): PicklistValue[] {
  return [
    ...values.map((value) => ({
      value,
      label: value,
      active: true,
      defaultValue: value === defaultValue,
      validFor: null,
    })),
    ...inactive.map((value) => ({ value, label: value, active: false, defaultValue: false, validFor: null })),
  ];
}

const system = { createable: false, updateable: false, nillable: false, defaultedOnCreate: true };
const required = { nillable: false };
const formula = { createable: false, updateable: false, calculated: true };

const sobjects: Record<
  string,
  { prefix: string; label: string; name: string; fields: FakeField[]; seed: Record<string, unknown> }
> = {
  Account: {
    prefix: '001',
    label: 'Account',
    name: 'Name',
    fields: [
      field('Name', 'string', 'Account Name', { ...required, nameField: true }),
      // Retail was retired: still described (and still on old records), no longer allowed.
      field('Industry', 'picklist', 'Industry', {
        picklistValues: picklist(['Banking', 'Energy'], ['Retail']),
      }),
      field('AnnualRevenue', 'currency', 'Annual Revenue'),
      field('Score__c', 'double', 'Score', formula),
      field('Tier__c', 'picklist', 'Tier', {
        restrictedPicklist: true,
        picklistValues: picklist(['Gold', 'Silver'], ['Bronze']),
      }),
      field('LegacyCode__c', 'string', 'Legacy code', { deprecatedAndHidden: true }),
    ],
    seed: {},
  },
  Contact: {
    prefix: '003',
    label: 'Contact',
    name: 'LastName',
    fields: [
      field('LastName', 'string', 'Last Name', required),
      field('FirstName', 'string', 'First Name'),
      field('Email', 'email', 'Email'),
      field('AccountId', 'reference', 'Account ID', { referenceTo: ['Account'] }),
    ],
    seed: {},
  },
  Lead: {
    prefix: '00Q',
    label: 'Lead',
    name: 'LastName',
    fields: [
      field('LastName', 'string', 'Last Name', required),
      field('Company', 'string', 'Company', required),
      field('Status', 'picklist', 'Lead Status', {
        nillable: false,
        defaultedOnCreate: true,
        picklistValues: picklist(['Open - Not Contacted', 'Closed - Converted'], [], 'Open - Not Contacted'),
      }),
      field('Email', 'email', 'Email'),
      // Set when a lead is inserted (an import of converted leads), never by an update.
      field('IsConverted', 'boolean', 'Converted', { updateable: false }),
    ],
    seed: {},
  },
  Opportunity: {
    prefix: '006',
    label: 'Opportunity',
    name: 'Name',
    fields: [
      field('Name', 'string', 'Opportunity Name', { ...required, nameField: true }),
      field('StageName', 'picklist', 'Stage', { ...required, picklistValues: picklist(['Prospecting']) }),
      field('CloseDate', 'date', 'Close Date', required),
      field('Amount', 'currency', 'Amount'),
    ],
    seed: { StageName: 'Prospecting', CloseDate: '2026-12-31' },
  },
};

function allFieldsOf(sobject: string): FakeField[] {
  const user = { ...system, referenceTo: ['User'] };
  return [
    field('Id', 'id', `${sobject} ID`, system),
    field('IsDeleted', 'boolean', 'Deleted', system),
    field('OwnerId', 'reference', 'Owner ID', {
      nillable: false,
      defaultedOnCreate: true,
      referenceTo: ['User'],
    }),
    field('CreatedDate', 'datetime', 'Created Date', system),
    field('CreatedById', 'reference', 'Created By ID', user),
    field('LastModifiedDate', 'datetime', 'Last Modified Date', system),
    field('LastModifiedById', 'reference', 'Last Modified By ID', user),
    field('SystemModstamp', 'datetime', 'System Modstamp', system),
    ...sobjects[sobject].fields,
  ];
}

/** Salesforce keeps datetimes to the second. */
const toSecond = (ms: number) => Math.floor(ms / 1000) * 1000;
const toMinute = (ms: number) => Math.floor(ms / minute) * minute;

/** Salesforce's datetime text: milliseconds (always .000), and `+0000` rather than `Z`. */
function sfTime(ms: number): string {
  return new Date(toSecond(ms)).toISOString().replace('Z', '+0000');
}

function sfParse(text: string): number {
  return Date.parse(text.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
}

/** An error answered as Salesforce's array `[{message, errorCode, fields}]`. */
class SfError extends FakeHttpError {
  constructor(
    status: number,
    errorCode: string,
    message: string,
    readonly fields?: string[],
  ) {
    super(status, message, errorCode);
  }
}

/** An sObject named in a `/sobjects/…` URL: Salesforce answers 404 for one the org lacks. */
function resource(sobject: string): string {
  if (!Object.hasOwn(sobjects, sobject))
    throw new SfError(404, 'NOT_FOUND', 'The requested resource does not exist');
  return sobject;
}

function known(sobject: string): string {
  if (!Object.hasOwn(sobjects, sobject)) {
    throw new SfError(
      400,
      'INVALID_TYPE',
      `sObject type '${sobject}' is not supported. If you are attempting to use a custom object, be sure to append the '__c' after the entity name. Please reference your WSDL or the describe call for the appropriate names.`,
    );
  }
  return sobject;
}

// ---------------------------------------------------------------------------------------------
// SOQL
// ---------------------------------------------------------------------------------------------

type Literal =
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: number }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'null' }
  | { kind: 'datetime'; value: number }
  | { kind: 'date'; value: string };

type Token =
  | { type: 'word' | 'punct' | 'op'; text: string; at: number }
  | { type: 'literal'; literal: Literal; at: number; text: string };

function malformed(text: string): SfError {
  return new SfError(400, 'MALFORMED_QUERY', `unexpected token: '${text}'`);
}

function tokenize(soql: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  const patterns: [RegExp, (match: RegExpExecArray) => Token][] = [
    [/\s+/y, () => null as unknown as Token],
    [
      /(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?)(Z|[+-]\d{2}:\d{2})/y,
      (m) => {
        const value = Date.parse(`${m[1]}${m[2]}`);
        if (Number.isNaN(value)) throw malformed(m[0]);
        return { type: 'literal', literal: { kind: 'datetime', value }, at: m.index, text: m[0] };
      },
    ],
    [
      /\d{4}-\d{2}-\d{2}(?![\dT])/y,
      (m) => ({ type: 'literal', literal: { kind: 'date', value: m[0] }, at: m.index, text: m[0] }),
    ],
    [
      /-?\d+(?:\.\d+)?(?![\w-])/y,
      (m) => ({ type: 'literal', literal: { kind: 'number', value: Number(m[0]) }, at: m.index, text: m[0] }),
    ],
    [
      /'((?:\\.|[^'\\])*)'/y,
      (m) => {
        const value = m[1].replace(/\\(.)/g, (_, c: string) =>
          c === 'n' ? '\n' : c === 't' ? '\t' : c === 'r' ? '\r' : c === 'b' ? '\b' : c === 'f' ? '\f' : c,
        );
        return { type: 'literal', literal: { kind: 'string', value }, at: m.index, text: m[0] };
      },
    ],
    [/!=|<>|<=|>=|=|<|>/y, (m) => ({ type: 'op', text: m[0] === '<>' ? '!=' : m[0], at: m.index })],
    [/[(),]/y, (m) => ({ type: 'punct', text: m[0], at: m.index })],
    [/[A-Za-z_][\w.]*/y, (m) => ({ type: 'word', text: m[0], at: m.index })],
  ];
  outer: while (at < soql.length) {
    for (const [pattern, make] of patterns) {
      pattern.lastIndex = at;
      const match = pattern.exec(soql);
      if (!match) continue;
      at = pattern.lastIndex;
      const token = make(match);
      if (token) {
        if (token.type === 'word' && /^(true|false|null)$/i.test(token.text)) {
          const lower = token.text.toLowerCase();
          tokens.push({
            type: 'literal',
            literal: lower === 'null' ? { kind: 'null' } : { kind: 'boolean', value: lower === 'true' },
            at: token.at,
            text: token.text,
          });
        } else tokens.push(token);
      }
      continue outer;
    }
    throw malformed(soql.slice(at, at + 20));
  }
  return tokens;
}

type Predicate = (record: FakeRecord) => boolean;

interface Query {
  sobject: string;
  /** Field names in their described spelling, or undefined for `COUNT()`. */
  select?: string[];
  where: Predicate;
  orderBy: { field: FakeField; desc: boolean; nullsLast: boolean }[];
  limit?: number;
  offset?: number;
}

const numericTypes = new Set(['currency', 'double', 'percent', 'int']);

function literalFits(f: FakeField, literal: Literal): boolean {
  if (literal.kind === 'null') return true;
  if (f.type === 'datetime') return literal.kind === 'datetime';
  if (f.type === 'date') return literal.kind === 'date';
  if (f.type === 'boolean') return literal.kind === 'boolean';
  if (numericTypes.has(f.type)) return literal.kind === 'number';
  return literal.kind === 'string';
}

function typeName(f: FakeField): string {
  return f.type === 'datetime'
    ? 'dateTime'
    : numericTypes.has(f.type)
      ? 'double'
      : f.type === 'date'
        ? 'date'
        : f.type === 'boolean'
          ? 'boolean'
          : 'string';
}

/** A record's value of a field, comparable: ms for datetimes, lower case for text. */
function comparable(f: FakeField, value: unknown): string | number | boolean | null {
  if (value === null || value === undefined) return null;
  if (f.type === 'datetime') return sfParse(String(value));
  if (f.type === 'boolean' || numericTypes.has(f.type)) return value as number | boolean;
  if (f.type === 'id' || f.type === 'reference' || f.type === 'date') return String(value);
  return String(value).toLowerCase();
}

function literalValue(f: FakeField, literal: Literal): string | number | boolean | null {
  switch (literal.kind) {
    case 'null':
      return null;
    case 'string':
      return f.type === 'id' || f.type === 'reference' ? literal.value : literal.value.toLowerCase();
    default:
      return literal.value;
  }
}

function likeToRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\' && i + 1 < pattern.length) source += pattern[++i].replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else if (c === '%') source += '.*';
    else if (c === '_') source += '.';
    else source += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 'is');
}

function parseSoql(soql: string, fieldsOf: (sobject: string) => FakeField[]): Query {
  const tokens = tokenize(soql);
  let position = 0;
  const peek = () => tokens[position];
  const isWord = (word: string, token = peek()) =>
    token?.type === 'word' && token.text.toUpperCase() === word;
  const expectWord = (word: string) => {
    const token = peek();
    if (!isWord(word, token)) throw malformed(token?.text ?? 'EOF');
    position++;
  };
  const expectPunct = (punct: string) => {
    const token = peek();
    if (token?.type !== 'punct' || token.text !== punct) throw malformed(token?.text ?? 'EOF');
    position++;
  };

  expectWord('SELECT');
  // The field list is resolved once the object is known.
  const selectTokens: Token[] = [];
  while (position < tokens.length && !isWord('FROM')) selectTokens.push(tokens[position++]);
  expectWord('FROM');
  const objectToken = tokens[position++];
  if (objectToken?.type !== 'word') throw malformed(objectToken?.text ?? 'EOF');
  const sobject = known(objectToken.text);
  const queryable = fieldsOf(sobject).filter((f) => !f.deprecatedAndHidden);
  const byName = new Map(queryable.map((f) => [f.name.toLowerCase(), f]));
  const noSuchColumn = (name: string) =>
    new SfError(
      400,
      'INVALID_FIELD',
      `No such column '${name}' on entity '${sobject}'. If you are attempting to use a custom field, be sure to append the '__c' after the custom field name. Please reference your WSDL or the describe call for the appropriate names.`,
    );
  const fieldNamed = (name: string) => {
    const found = byName.get(name.toLowerCase());
    if (!found) throw noSuchColumn(name);
    return found;
  };

  // SELECT list.
  let select: string[] | undefined;
  let fieldsFunction: string | undefined;
  if (
    selectTokens.length >= 3 &&
    isWord('COUNT', selectTokens[0]) &&
    selectTokens[1].text === '(' &&
    selectTokens.at(-1)!.text === ')'
  ) {
    select = undefined;
  } else {
    if (selectTokens.length === 0) throw malformed('FROM');
    const explicit: string[] = [];
    const chosen: string[] = [];
    let i = 0;
    while (i < selectTokens.length) {
      const token = selectTokens[i];
      if (token.type !== 'word') throw malformed(token.text);
      if (isWord('FIELDS', token)) {
        const kind = selectTokens[i + 2];
        if (selectTokens[i + 1]?.text !== '(' || selectTokens[i + 3]?.text !== ')' || !kind)
          throw malformed(token.text);
        fieldsFunction = kind.text.toUpperCase();
        const group =
          fieldsFunction === 'ALL'
            ? queryable
            : fieldsFunction === 'CUSTOM'
              ? queryable.filter((f) => f.custom)
              : fieldsFunction === 'STANDARD'
                ? queryable.filter((f) => !f.custom)
                : undefined;
        if (!group) throw malformed(kind.text);
        chosen.push(...group.map((f) => f.name));
        i += 4;
      } else {
        const name = fieldNamed(token.text).name;
        if (explicit.includes(name))
          throw new SfError(400, 'MALFORMED_QUERY', `duplicate field selected: ${name}`);
        explicit.push(name);
        chosen.push(name);
        i += 1;
      }
      if (i < selectTokens.length) {
        if (selectTokens[i].text !== ',') throw malformed(selectTokens[i].text);
        i += 1;
        if (i === selectTokens.length) throw malformed('FROM');
      }
    }
    select = [...new Set(chosen)];
  }

  // WHERE.
  const comparison = (): Predicate => {
    const nameToken = tokens[position++];
    if (nameToken?.type !== 'word') throw malformed(nameToken?.text ?? 'EOF');
    const f = fieldNamed(nameToken.text);
    if (!f.filterable) {
      throw new SfError(400, 'INVALID_FIELD', `field '${f.name}' can not be filtered in a query call`);
    }
    const checked = (literal: Literal, token: Token) => {
      if (!literalFits(f, literal)) {
        const type = typeName(f);
        throw new SfError(
          400,
          'INVALID_QUERY_FILTER_OPERATOR',
          `value of filter criterion for field '${f.name}' must be of type ${type} and should ${type === 'string' ? '' : 'not '}be enclosed in quotes: ${token.text}`,
        );
      }
      return literalValue(f, literal);
    };
    let negated = false;
    if (isWord('NOT') && (isWord('IN', tokens[position + 1]) || isWord('LIKE', tokens[position + 1]))) {
      negated = true;
      position++;
    }
    if (isWord('IN')) {
      position++;
      expectPunct('(');
      const values: (string | number | boolean | null)[] = [];
      for (;;) {
        const token = tokens[position++];
        if (token?.type !== 'literal') throw malformed(token?.text ?? 'EOF');
        values.push(checked(token.literal, token));
        if (peek()?.text === ',') position++;
        else break;
      }
      expectPunct(')');
      return (record) => values.includes(comparable(f, record[f.name])) !== negated;
    }
    if (isWord('LIKE')) {
      position++;
      const token = tokens[position++];
      if (token?.type !== 'literal' || token.literal.kind !== 'string') throw malformed(token?.text ?? 'EOF');
      const pattern = likeToRegExp(token.literal.value);
      return (record) => {
        const value = record[f.name];
        return (value !== null && value !== undefined && pattern.test(String(value))) !== negated;
      };
    }
    const opToken = tokens[position++];
    if (opToken?.type !== 'op') throw malformed(opToken?.text ?? 'EOF');
    const valueToken = tokens[position++];
    if (valueToken?.type !== 'literal') throw malformed(valueToken?.text ?? 'EOF');
    const right = checked(valueToken.literal, valueToken);
    const op = opToken.text;
    if (right === null && op !== '=' && op !== '!=') throw malformed(valueToken.text);
    return (record) => {
      const left = comparable(f, record[f.name]);
      if (op === '=') return left === right;
      if (op === '!=') return left !== right;
      if (left === null) return false;
      return op === '<'
        ? left < right!
        : op === '<='
          ? left <= right!
          : op === '>'
            ? left > right!
            : left >= right!;
    };
  };
  const unary = (): Predicate => {
    if (isWord('NOT')) {
      position++;
      const inner = unary();
      return (record) => !inner(record);
    }
    if (peek()?.type === 'punct' && peek()!.text === '(') {
      position++;
      const inner = condition();
      expectPunct(')');
      return inner;
    }
    return comparison();
  };
  const condition = (): Predicate => {
    const parts = [unary()];
    let joiner: string | undefined;
    while (isWord('AND') || isWord('OR')) {
      const word = peek()!.text.toUpperCase();
      // SOQL refuses AND and OR side by side without parentheses.
      if (joiner && joiner !== word) throw malformed(peek()!.text);
      joiner = word;
      position++;
      parts.push(unary());
    }
    return joiner === 'OR' ? (r) => parts.some((p) => p(r)) : (r) => parts.every((p) => p(r));
  };
  let where: Predicate = () => true;
  if (isWord('WHERE')) {
    position++;
    where = condition();
  }

  // ORDER BY, LIMIT, OFFSET.
  const orderBy: Query['orderBy'] = [];
  if (isWord('ORDER')) {
    position++;
    expectWord('BY');
    for (;;) {
      const token = tokens[position++];
      if (token?.type !== 'word') throw malformed(token?.text ?? 'EOF');
      const f = fieldNamed(token.text);
      let desc = false;
      if (isWord('ASC')) position++;
      else if (isWord('DESC')) {
        desc = true;
        position++;
      }
      let nullsLast = desc;
      if (isWord('NULLS')) {
        position++;
        const which = tokens[position++];
        if (!isWord('FIRST', which) && !isWord('LAST', which)) throw malformed(which?.text ?? 'EOF');
        nullsLast = isWord('LAST', which);
      }
      orderBy.push({ field: f, desc, nullsLast });
      if (peek()?.text === ',') position++;
      else break;
    }
  }
  const integer = () => {
    const token = tokens[position++];
    if (
      token?.type !== 'literal' ||
      token.literal.kind !== 'number' ||
      !Number.isInteger(token.literal.value)
    ) {
      throw malformed(token?.text ?? 'EOF');
    }
    return token.literal.value;
  };
  let limit: number | undefined;
  let offset: number | undefined;
  if (isWord('LIMIT')) {
    position++;
    limit = integer();
  }
  if (isWord('OFFSET')) {
    position++;
    offset = integer();
    if (offset > maxOffset) {
      throw new SfError(400, 'NUMBER_OUTSIDE_VALID_RANGE', `Maximum SOQL offset allowed is ${maxOffset}`);
    }
  }
  if (position < tokens.length) throw malformed(tokens[position].text);
  if ((fieldsFunction === 'ALL' || fieldsFunction === 'CUSTOM') && (limit === undefined || limit > 200)) {
    throw new SfError(400, 'MALFORMED_QUERY', 'The SOQL FIELDS function must have a LIMIT of at most 200');
  }
  return { sobject, select, where, orderBy, limit, offset };
}

// ---------------------------------------------------------------------------------------------
// The org
// ---------------------------------------------------------------------------------------------

/** One version of a record: shown from `visibleFromMs` (its commit), until a later one is. */
interface Version {
  record: FakeRecord;
  visibleFromMs: number;
  deletedMs?: number;
}

interface Row {
  sobject: string;
  versions: Version[];
}

interface Cursor {
  sobject: string;
  select?: string[];
  rows: FakeRecord[];
  batchSize: number;
  usedMs: number;
}

/** A stable order that is not Id order: what "no order guaranteed" looks like. */
const unordered = (id: string) => createHash('sha1').update(id).digest('hex');

export async function startFakeSalesforce(): Promise<FakeSalesforce> {
  const rows = new Map<string, Map<string, Row>>(Object.keys(sobjects).map((name) => [name, new Map()]));
  const cursors = new Map<string, Cursor>();
  let counter = 0;
  let apiUsage = 0;
  /** Fields removed from this org (`Object.Field`). */
  const hidden = new Set<string>();
  const fieldsOf = (sobject: string) =>
    allFieldsOf(sobject).filter((f) => !hidden.has(`${sobject}.${f.name}`));

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => [
      {
        message: error.status === 401 ? 'Session expired or invalid' : error.message,
        errorCode: error.status === 401 ? 'INVALID_SESSION_ID' : (error.code ?? 'UNKNOWN_EXCEPTION'),
        ...(error instanceof SfError && error.fields && { fields: error.fields }),
      },
    ],
    rateLimitCode: 'REQUEST_LIMIT_EXCEEDED',
  });
  const now = () => fake.now();

  const router = fake.router;
  let exhausted = false;
  router.use(async (ctx, next) => {
    apiUsage++;
    ctx.set('Sforce-Limit-Info', `api-usage=${apiUsage}/15000`);
    if (exhausted) {
      exhausted = false;
      throw new SfError(403, 'REQUEST_LIMIT_EXCEEDED', 'TotalRequests Limit exceeded.');
    }
    await next();
  });

  const newId = (sobject: string) => `${sobjects[sobject].prefix}${String(++counter).padStart(12, '0')}AAA`;

  /** The version a reader sees at `at`: the last one committed by then. */
  const versionAt = (row: Row, at: number): Version | undefined => {
    for (let i = row.versions.length - 1; i >= 0; i--)
      if (row.versions[i].visibleFromMs <= at) return row.versions[i];
    return undefined;
  };
  /** Gone from the Recycle Bin: no longer found even by queryAll. */
  const purged = (version: Version, at: number) =>
    version.deletedMs !== undefined && version.deletedMs + recycleBinMs <= at;

  const rowOf = (sobject: string, id: string) => rows.get(sobject)?.get(id);
  /** The record a `/sobjects/{o}/{id}` request reaches now. */
  const liveRecord = (sobject: string, id: string): FakeRecord => {
    const row = rowOf(resource(sobject), id);
    const seen = row && versionAt(row, now());
    if (!seen || purged(seen, now()))
      throw new SfError(404, 'NOT_FOUND', 'The requested resource does not exist');
    if (seen.deletedMs !== undefined) throw new SfError(404, 'ENTITY_IS_DELETED', 'entity is deleted', []);
    return seen.record;
  };
  /** A new version of a record (an edit) stamped `stampMs` and committed at `visibleFromMs`. */
  const edit = (
    row: Row,
    values: Record<string, unknown>,
    stampMs: number,
    visibleFromMs: number,
    deleted = false,
  ) => {
    const latest = row.versions.at(-1)!.record;
    const stamp = sfTime(stampMs);
    const record: FakeRecord = {
      ...latest,
      ...values,
      ...(deleted ? { IsDeleted: true } : { LastModifiedDate: stamp, LastModifiedById: userId }),
      SystemModstamp: stamp,
    };
    row.versions.push({ record, visibleFromMs, ...(deleted && { deletedMs: toSecond(stampMs) }) });
  };
  const insert = (sobject: string, values: Record<string, unknown>, stampMs: number): string => {
    const id = newId(sobject);
    const stamp = sfTime(stampMs);
    const record: FakeRecord = {
      ...Object.fromEntries(fieldsOf(sobject).map((f) => [f.name, null])),
      ...Object.fromEntries(
        fieldsOf(sobject)
          .filter((f) => f.type === 'boolean')
          .map((f) => [f.name, false]),
      ),
      ...Object.fromEntries(
        fieldsOf(sobject)
          .filter((f) => f.defaultedOnCreate && f.type === 'picklist')
          .map((f) => [f.name, f.picklistValues.find((v) => v.defaultValue)?.value ?? null]),
      ),
      ...values,
      Id: id,
      IsDeleted: false,
      OwnerId: values.OwnerId ?? userId,
      CreatedDate: stamp,
      CreatedById: userId,
      LastModifiedDate: stamp,
      LastModifiedById: userId,
      SystemModstamp: stamp,
    };
    rows.get(sobject)!.set(id, { sobject, versions: [{ record, visibleFromMs: stampMs }] });
    return id;
  };

  const shaped = (sobject: string, record: FakeRecord, select?: string[]) => ({
    attributes: { type: sobject, url: `${version}/sobjects/${sobject}/${record.Id}` },
    ...Object.fromEntries(
      (
        select ??
        fieldsOf(sobject)
          .filter((f) => !f.deprecatedAndHidden)
          .map((f) => f.name)
      ).map((name) => [name, record[name] ?? null]),
    ),
  });

  /** A body's fields, checked as Salesforce checks them on insert or update. */
  const checkedBody = (sobject: string, body: unknown, creating: boolean): Record<string, unknown> => {
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      throw new SfError(
        400,
        'JSON_PARSER_ERROR',
        'Cannot deserialize instance of sObject from the request body',
      );
    }
    const byName = new Map(
      fieldsOf(sobject)
        .filter((f) => !f.deprecatedAndHidden)
        .map((f) => [f.name.toLowerCase(), f]),
    );
    const values: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(body)) {
      if (name === 'attributes') continue;
      const found = byName.get(name.toLowerCase());
      if (!found)
        throw new SfError(400, 'INVALID_FIELD', `No such column '${name}' on sobject of type ${sobject}`);
      if (!(creating ? found.createable : found.updateable)) {
        throw new SfError(
          400,
          'INVALID_FIELD_FOR_INSERT_UPDATE',
          `Unable to create/update fields: ${found.name}. Please check the security settings of this field and verify that it is read/write for your profile or permission set.`,
          [found.name],
        );
      }
      if (value === null && !found.nillable) {
        throw new SfError(400, 'REQUIRED_FIELD_MISSING', `Required fields are missing: [${found.name}]`, [
          found.name,
        ]);
      }
      if (value !== null && found.type === 'boolean' && typeof value !== 'boolean') {
        throw new SfError(
          400,
          'JSON_PARSER_ERROR',
          `Cannot deserialize instance of boolean from VALUE_STRING value ${String(value)} or request may be missing a required field`,
        );
      }
      if (
        value !== null &&
        found.restrictedPicklist &&
        !found.picklistValues.some((v) => v.active && v.value === value)
      ) {
        throw new SfError(
          400,
          'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST',
          `${found.label}: bad value for restricted picklist field: ${String(value)}`,
          [found.name],
        );
      }
      values[found.name] = value;
    }
    if (creating) {
      const missing = fieldsOf(sobject)
        .filter((f) => f.createable && !f.nillable && !f.defaultedOnCreate && !f.deprecatedAndHidden)
        .filter((f) => values[f.name] === undefined)
        .map((f) => f.name);
      if (missing.length) {
        throw new SfError(
          400,
          'REQUIRED_FIELD_MISSING',
          `Required fields are missing: [${missing.join(', ')}]`,
          missing,
        );
      }
    }
    return values;
  };

  /** `Sforce-Query-Options: batchSize=n`: 200 to 2,000, default 2,000. */
  const batchSizeOf = (header: string): number | undefined => {
    const size = /batchSize\s*=\s*(\d+)/i.exec(header)?.[1];
    // Out-of-range sizes are taken to the nearest bound (verify: the reference names the bounds only).
    return size ? Math.min(maxBatchSize, Math.max(minBatchSize, Number(size))) : undefined;
  };

  /** One batch from a cursor, and the URL of the next while rows remain. */
  const batch = (locator: string, offset: number) => {
    const cursor = cursors.get(locator);
    if (!cursor || cursor.usedMs + cursorIdleMs < now()) {
      cursors.delete(locator);
      throw new SfError(400, 'INVALID_QUERY_LOCATOR', 'invalid query locator');
    }
    cursor.usedMs = now();
    const page = cursor.rows.slice(offset, offset + cursor.batchSize);
    const following = offset + page.length;
    const done = following >= cursor.rows.length;
    if (done) cursors.delete(locator);
    return {
      totalSize: cursor.rows.length,
      done,
      ...(!done && { nextRecordsUrl: `${version}/query/${locator}-${following}` }),
      records: page.map((record) => shaped(cursor.sobject, record, cursor.select)),
    };
  };

  const runQuery = (ctx: Context, all: boolean) => {
    const q = typeof ctx.query.q === 'string' ? ctx.query.q : '';
    if (!q) throw new SfError(400, 'MALFORMED_QUERY', 'A query string is required');
    const query = parseSoql(q, fieldsOf);
    const at = now();
    const seen = [...rows.get(query.sobject)!.values()]
      .map((row) => versionAt(row, at))
      .filter((v): v is Version => v !== undefined && !purged(v, at) && (all || v.deletedMs === undefined))
      .map((v) => v.record)
      .filter(query.where);
    const compare = (a: FakeRecord, b: FakeRecord) => {
      for (const { field: f, desc, nullsLast } of query.orderBy) {
        const [x, y] = [comparable(f, a[f.name]), comparable(f, b[f.name])];
        if (x === y) continue;
        if (x === null) return nullsLast ? 1 : -1;
        if (y === null) return nullsLast ? -1 : 1;
        const order = x < y ? -1 : 1;
        return desc ? -order : order;
      }
      const [x, y] = [unordered(a.Id), unordered(b.Id)];
      return x < y ? -1 : x > y ? 1 : 0;
    };
    const start = query.offset ?? 0;
    const result = seen
      .sort(compare)
      .slice(start, query.limit === undefined ? undefined : start + query.limit);
    const requested = batchSizeOf(ctx.get('sforce-query-options'));
    const batchSize = requested ?? maxBatchSize;
    if (!query.select) {
      ctx.body = { totalSize: result.length, done: true, records: [] };
      return;
    }
    fake.logListing(ctx, {
      object: query.sobject,
      pageSize: Math.min(batchSize, query.limit ?? Infinity),
      maxPageSize: maxBatchSize,
    });
    const locator = `01g${randomBytes(6).toString('hex').toUpperCase()}`;
    cursors.set(locator, {
      sobject: query.sobject,
      select: query.select,
      rows: result,
      batchSize,
      usedMs: at,
    });
    // A user has at most 10 cursors open: another releases the oldest.
    while (cursors.size > maxOpenCursors) cursors.delete(cursors.keys().next().value!);
    ctx.body = batch(locator, 0);
  };

  router.get(`${version}/query`, (ctx) => runQuery(ctx, false));
  router.get(`${version}/queryAll`, (ctx) => runQuery(ctx, true));
  for (const resourceName of ['query', 'queryAll']) {
    router.get(`${version}/${resourceName}/:locator`, (ctx) => {
      const match = /^(01g[0-9A-F]+)-(\d+)$/.exec(ctx.params.locator);
      if (!match) throw new SfError(400, 'INVALID_QUERY_LOCATOR', 'invalid query locator');
      const cursor = cursors.get(match[1]);
      if (cursor) {
        fake.logListing(ctx, {
          object: cursor.sobject,
          pageSize: cursor.batchSize,
          maxPageSize: maxBatchSize,
        });
      }
      ctx.body = batch(match[1], Number(match[2]));
    });
  }

  router.get(`${version}/sobjects`, (ctx) => {
    ctx.body = {
      encoding: 'UTF-8',
      maxBatchSize: 200,
      sobjects: Object.entries(sobjects).map(([name, o]) => ({
        name,
        label: o.label,
        keyPrefix: o.prefix,
        custom: false,
        queryable: true,
        retrieveable: true,
        replicateable: true,
        searchable: true,
        createable: true,
        updateable: true,
        deletable: true,
        urls: {
          sobject: `${version}/sobjects/${name}`,
          describe: `${version}/sobjects/${name}/describe`,
          rowTemplate: `${version}/sobjects/${name}/{ID}`,
        },
      })),
    };
  });

  router.get(`${version}/sobjects/:sobject/describe`, (ctx) => {
    const sobject = resource(ctx.params.sobject);
    ctx.body = {
      name: sobject,
      label: sobjects[sobject].label,
      keyPrefix: sobjects[sobject].prefix,
      custom: false,
      queryable: true,
      replicateable: true,
      createable: true,
      updateable: true,
      deletable: true,
      fields: fieldsOf(sobject),
    };
  });

  /** `start`/`end` of getUpdated and getDeleted: ISO 8601, seconds ignored, at most 30 days back. */
  const replicationWindow = (query: Record<string, unknown>): [number, number] => {
    const parse = (name: string) => {
      const text = query[name];
      const ms = typeof text === 'string' ? Date.parse(text) : NaN;
      if (Number.isNaN(ms)) {
        throw new SfError(400, 'INVALID_REPLICATION_DATE', `${name} is missing or not an ISO 8601 dateTime`);
      }
      return toMinute(ms);
    };
    const [start, end] = [parse('start'), parse('end')];
    if (start >= end)
      throw new SfError(400, 'INVALID_REPLICATION_DATE', 'startDate must chronologically precede endDate');
    if (start < toMinute(now() - replicationMs)) {
      throw new SfError(400, 'INVALID_REPLICATION_DATE', 'startDate cannot be more than 30 days ago');
    }
    return [start, end];
  };
  /**
   * Where a replicating client may resume: the window's end, but never past now nor past the stamp
   * of a change that is not committed yet (Salesforce: "the start time of that long-running
   * transaction until it completes").
   */
  const latestDateCovered = (sobject: string, end: number) => {
    let covered = Math.min(end, now());
    for (const row of rows.get(sobject)!.values()) {
      for (const v of row.versions) {
        if (v.visibleFromMs > now()) covered = Math.min(covered, sfParse(v.record.SystemModstamp));
      }
    }
    return sfTime(toMinute(covered));
  };

  router.get(`${version}/sobjects/:sobject/updated`, (ctx) => {
    const sobject = resource(ctx.params.sobject);
    const [start, end] = replicationWindow(ctx.query);
    const ids = [...rows.get(sobject)!.values()]
      .map((row) => versionAt(row, now()))
      .filter((v): v is Version => v !== undefined && v.deletedMs === undefined)
      .filter((v) => {
        const stamp = sfParse(v.record.SystemModstamp);
        return stamp >= start && stamp < end;
      })
      .map((v) => v.record.Id);
    if (ids.length > maxReplicationIds) {
      throw new SfError(
        400,
        'EXCEEDED_ID_LIMIT',
        'record limit reached. cannot submit more than 600000 records',
      );
    }
    ctx.body = { ids, latestDateCovered: latestDateCovered(sobject, end) };
  });

  router.get(`${version}/sobjects/:sobject/deleted`, (ctx) => {
    const sobject = resource(ctx.params.sobject);
    const [start, end] = replicationWindow(ctx.query);
    const at = now();
    const seen = [...rows.get(sobject)!.values()]
      .map((row) => versionAt(row, at))
      .filter((v): v is Version => v !== undefined && v.deletedMs !== undefined);
    const lastPurged = Math.max(-Infinity, ...seen.filter((v) => purged(v, at)).map((v) => v.deletedMs!));
    ctx.body = {
      deletedRecords: seen
        .filter((v) => !purged(v, at) && v.deletedMs! >= start && v.deletedMs! < end)
        .map((v) => ({ id: v.record.Id, deletedDate: sfTime(v.deletedMs!) })),
      earliestDateAvailable: sfTime(Number.isFinite(lastPurged) ? lastPurged : toMinute(at - recycleBinMs)),
      latestDateCovered: latestDateCovered(sobject, end),
    };
  });

  router.get(`${version}/sobjects/:sobject/:id`, (ctx) => {
    const sobject = resource(ctx.params.sobject);
    const record = liveRecord(sobject, ctx.params.id);
    const wanted =
      typeof ctx.query.fields === 'string' ? ctx.query.fields.split(',').map((f) => f.trim()) : undefined;
    if (wanted) {
      const names = new Map(
        fieldsOf(sobject)
          .filter((f) => !f.deprecatedAndHidden)
          .map((f) => [f.name.toLowerCase(), f.name]),
      );
      const unknown = wanted.find((name) => !names.has(name.toLowerCase()));
      if (unknown)
        throw new SfError(400, 'INVALID_FIELD', `No such column '${unknown}' on entity '${sobject}'`);
      ctx.body = shaped(
        sobject,
        record,
        wanted.map((name) => names.get(name.toLowerCase())!),
      );
      return;
    }
    ctx.body = shaped(sobject, record);
  });

  router.post(`${version}/sobjects/:sobject`, (ctx) => {
    const sobject = resource(ctx.params.sobject);
    const id = insert(sobject, checkedBody(sobject, ctx.request.body, true), now());
    ctx.status = 201;
    ctx.body = { id, success: true, errors: [] };
  });

  router.patch(`${version}/sobjects/:sobject/:id`, (ctx) => {
    const sobject = resource(ctx.params.sobject);
    liveRecord(sobject, ctx.params.id);
    const values = checkedBody(sobject, ctx.request.body, false);
    edit(rowOf(sobject, ctx.params.id)!, values, now(), now());
    ctx.status = 204;
  });

  router.delete(`${version}/sobjects/:sobject/:id`, (ctx) => {
    const sobject = resource(ctx.params.sobject);
    liveRecord(sobject, ctx.params.id);
    edit(rowOf(sobject, ctx.params.id)!, {}, now(), now(), true);
    ctx.status = 204;
  });

  await fake.start();

  const rowFor = (sobject: string, id: string): Row => {
    const row = rowOf(known(sobject), id);
    if (!row || row.versions.at(-1)!.deletedMs !== undefined)
      throw new Error(`no ${sobject} ${id} in the fake`);
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
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    setClock: (clock) => fake.setClock(clock),
    seed(sobject, modifiedTimes) {
      known(sobject);
      return modifiedTimes.map((ms) =>
        insert(
          sobject,
          { ...sobjects[sobject].seed, [sobjects[sobject].name]: `${sobject} ${counter + 1}` },
          ms,
        ),
      );
    },
    touch(sobject, id, modifiedMs, options) {
      edit(rowFor(sobject, id), {}, modifiedMs, options?.visibleFromMs ?? modifiedMs);
    },
    remove(sobject, id, atMs) {
      edit(rowFor(sobject, id), {}, atMs, atMs, true);
    },
    stored(sobject, id) {
      const latest = rowOf(sobject, id)?.versions.at(-1);
      return latest && latest.deletedMs === undefined ? latest.record : undefined;
    },
    exhaustLimit() {
      exhausted = true;
    },
    removeField(sobject, name) {
      hidden.add(`${sobject}.${name}`);
    },
    stop: () => fake.stop(),
  };
}

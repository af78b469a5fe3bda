import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';

/**
 * A local stand-in for Pipedrive's API as its public reference describes it
 * (https://developers.pipedrive.com/docs/api/v1, the v2 OpenAPI document):
 *
 * - v2 lists of persons, organizations and deals: `updated_since` (inclusive, `update_time` later
 *   than or equal) and `updated_until` (exclusive, earlier than) in RFC 3339; times kept and written
 *   in whole seconds (`2025-01-01T10:20:00Z`); `sort_by` id / update_time / add_time with
 *   `sort_direction`; `limit` 100 by default and at most 500 (more is refused with 400); a keyset
 *   `cursor` naming the first item of the next page (`{field, fieldValue, sortDirection, id}`,
 *   base64url, as the reference's example decodes), answered in `additional_data.next_cursor`,
 *   `null` at the end; `ids`; `custom_fields` (at most 15 keys) and `include_fields`.
 * - v2 records: persons keep `emails` / `phones` as `[{value, primary, label}]`, custom fields
 *   under `custom_fields` keyed by the field's 40-character hash, `is_deleted`.
 * - Deleting marks the record deleted (permanently gone after 30 days): it leaves lists and gets.
 *   Only deals can be listed once deleted (`status=deleted`, up to 30 days back, `update_time` the
 *   deletion); persons and organizations deleted are in no list (a webhook is the only sign).
 * - v2 create / PATCH / DELETE answering `{success, data}`: the name (title) required, members the
 *   reference does not list refused, custom field values under `custom_fields` only.
 * - v2 search (`/<object>/search`: `term`, `fields`, `exact_match` ignoring case, reduced items).
 * - Field metadata twice, as Pipedrive serves it: v1 (`/v1/personFields`..., `key`, `edit_flag`
 *   for custom fields, `active_flag`, `mandatory_flag`, `options` and `options_deleted`, paged
 *   with `start`), and v2 (`/api/v2/personFields`..., `field_code`, `is_custom_field`,
 *   `is_optional_response_field`, `subfields`, `required_fields` on request, cursor paged). Both
 *   call the person's email and phone `email` / `phone`, where v2 records say `emails` / `phones`.
 * - OAuth bearer tokens, or the API token as `x-api-token` or `api_token`; errors as
 *   `{success: false, error, error_info, data, additional_data}`; `x-ratelimit-*` on every answer
 *   and `Retry-After` on a 429.
 */

export type FakeRecord = Record<string, unknown> & { id: number; update_time: string; is_deleted: boolean };

/** A field as `/v1/<object>Fields` describes it. */
export interface FakeField {
  id: number;
  key: string;
  name: string;
  field_type: string;
  order_nr: number;
  add_time: string;
  update_time: string;
  active_flag: boolean;
  edit_flag: boolean;
  index_visible_flag: boolean;
  details_visible_flag: boolean;
  add_visible_flag: boolean;
  important_flag: boolean;
  bulk_edit_allowed: boolean;
  searchable_flag: boolean;
  filtering_allowed: boolean;
  sortable_flag: boolean;
  mandatory_flag: boolean;
  options: { id: number | string; label: string }[] | null;
  options_deleted?: { id: number | string; label: string }[];
}

export interface FakePipedrive extends ConformanceFake {
  records(object: string): FakeRecord[];
  reset(): void;
}

const objects = ['persons', 'organizations', 'deals'] as const;
type PipedriveObject = (typeof objects)[number];

const fieldLists: Record<string, PipedriveObject> = {
  personFields: 'persons',
  organizationFields: 'organizations',
  dealFields: 'deals',
};
/** The member v2 requires on create. */
const requiredOf: Record<PipedriveObject, string> = {
  persons: 'name',
  organizations: 'name',
  deals: 'title',
};

/** What v2 create and update take, per object (the reference's request bodies). */
const writable: Record<PipedriveObject, string[]> = {
  persons: [
    'name',
    'owner_id',
    'org_id',
    'add_time',
    'update_time',
    'emails',
    'phones',
    'visible_to',
    'label_ids',
    'marketing_status',
    'custom_fields',
  ],
  organizations: [
    'name',
    'owner_id',
    'add_time',
    'update_time',
    'visible_to',
    'label_ids',
    'address',
    'custom_fields',
  ],
  deals: [
    'title',
    'owner_id',
    'person_id',
    'org_id',
    'pipeline_id',
    'stage_id',
    'value',
    'currency',
    'is_deleted',
    'is_archived',
    'archive_time',
    'status',
    'probability',
    'lost_reason',
    'visible_to',
    'close_time',
    'won_time',
    'lost_time',
    'expected_close_date',
    'label_ids',
    'custom_fields',
  ],
};

/** Optional members a v2 list adds on `include_fields` (counts of related items). */
const includable: Record<PipedriveObject, string[]> = {
  persons: ['open_deals_count', 'closed_deals_count', 'activities_count', 'notes_count', 'followers_count'],
  organizations: ['open_deals_count', 'people_count', 'activities_count', 'notes_count', 'followers_count'],
  deals: ['products_count', 'activities_count', 'notes_count', 'followers_count', 'participants_count'],
};

/** Custom field hashes (40 characters, as Pipedrive makes them). */
export const pipedriveCustomFields = {
  personTier: '5c1a0e6b9d2f4c8a1b3e7d9f0a2c4e6b8d0f1a3c',
  personLinkedIn: 'a7e3c1d9b5f2e8a4c6d0b1f3e5a7c9d2b4f6e8a0',
  /** Deleted by an admin: v1 lists it with `active_flag: false`, v2 not at all, records never. */
  personLegacyScore: 'd3adf1e1dd3adf1e1dd3adf1e1dd3adf1e1dd3ad',
  organizationWebsite: 'b8f4d2e0c6a1b3d5f7e9c0a2b4d6f8e1c3a5b7d9',
  dealPriority: 'c9a5e3f1d7b2c4e6a8f0d1b3c5e7a9f2d4b6c8e0',
} as const;

interface FieldSpec {
  key: string;
  name: string;
  type: string;
  /** A custom field (v1 `edit_flag`, v2 `is_custom_field`). */
  custom?: boolean;
  mandatory?: boolean;
  /** Set by Pipedrive, not by a write (v1 `bulk_edit_allowed: false`). */
  system?: boolean;
  /** Deleted custom field (v1 `active_flag: false`; absent from v2 and from records). */
  inactive?: boolean;
  /** Left out of records unless `include_fields` names it (v2 `is_optional_response_field`). */
  optional?: boolean;
  options?: { id: number | string; label: string }[];
  deletedOptions?: { id: number | string; label: string }[];
  subfields?: { field_code: string; field_name: string; field_type: string }[];
}

const addressSubfields = [
  ['value', 'Address value', 'varchar'],
  ['street_number', 'House number', 'varchar'],
  ['route', 'Street/road name', 'varchar'],
  ['subpremise', 'Apartment/suite', 'varchar'],
  ['locality', 'District', 'varchar'],
  ['admin_area_level_1', 'State/province', 'varchar'],
  ['admin_area_level_2', 'County', 'varchar'],
  ['country', 'Country', 'varchar'],
  ['postal_code', 'Postal code', 'varchar'],
  ['formatted_address', 'Formatted address', 'varchar'],
].map(([field_code, field_name, field_type]) => ({
  field_code,
  field_name: `${field_name} of Address`,
  field_type,
}));

const fieldSpecs: Record<PipedriveObject, FieldSpec[]> = {
  persons: [
    { key: 'id', name: 'ID', type: 'int', system: true },
    { key: 'name', name: 'Name', type: 'varchar', mandatory: true },
    { key: 'first_name', name: 'First name', type: 'varchar' },
    { key: 'last_name', name: 'Last name', type: 'varchar' },
    { key: 'owner_id', name: 'Owner', type: 'user' },
    { key: 'org_id', name: 'Organization', type: 'org' },
    { key: 'email', name: 'Email', type: 'varchar' },
    { key: 'phone', name: 'Phone', type: 'phone' },
    { key: 'visible_to', name: 'Visible to', type: 'visible_to' },
    { key: 'add_time', name: 'Person created', type: 'date', system: true },
    { key: 'update_time', name: 'Update time', type: 'date', system: true },
    { key: 'open_deals_count', name: 'Open deals', type: 'int', system: true, optional: true },
    {
      key: pipedriveCustomFields.personTier,
      name: 'Tier',
      type: 'enum',
      custom: true,
      options: [
        { id: 31, label: 'Gold' },
        { id: 32, label: 'Silver' },
      ],
      deletedOptions: [{ id: 33, label: 'Bronze' }],
    },
    { key: pipedriveCustomFields.personLinkedIn, name: 'LinkedIn', type: 'varchar', custom: true },
    {
      key: pipedriveCustomFields.personLegacyScore,
      name: 'Legacy score',
      type: 'double',
      custom: true,
      inactive: true,
    },
  ],
  organizations: [
    { key: 'id', name: 'ID', type: 'int', system: true },
    { key: 'name', name: 'Name', type: 'varchar', mandatory: true },
    { key: 'owner_id', name: 'Owner', type: 'user' },
    { key: 'address', name: 'Address', type: 'address', subfields: addressSubfields },
    { key: 'visible_to', name: 'Visible to', type: 'visible_to' },
    { key: 'add_time', name: 'Organization created', type: 'date', system: true },
    { key: 'update_time', name: 'Update time', type: 'date', system: true },
    { key: 'people_count', name: 'People', type: 'int', system: true, optional: true },
    { key: pipedriveCustomFields.organizationWebsite, name: 'Website', type: 'varchar', custom: true },
  ],
  deals: [
    { key: 'id', name: 'ID', type: 'int', system: true },
    { key: 'title', name: 'Title', type: 'varchar', mandatory: true },
    {
      key: 'value',
      name: 'Value',
      type: 'monetary',
      subfields: [
        { field_code: 'value', field_name: 'Amount of Value', field_type: 'double' },
        { field_code: 'currency', field_name: 'Currency of Value', field_type: 'varchar' },
      ],
    },
    { key: 'owner_id', name: 'Owner', type: 'user' },
    { key: 'person_id', name: 'Contact person', type: 'people' },
    { key: 'org_id', name: 'Organization', type: 'org' },
    { key: 'stage_id', name: 'Stage', type: 'stage' },
    {
      key: 'status',
      name: 'Status',
      type: 'status',
      options: [
        { id: 'open', label: 'Open' },
        { id: 'won', label: 'Won' },
        { id: 'lost', label: 'Lost' },
        { id: 'deleted', label: 'Deleted' },
      ],
    },
    { key: 'probability', name: 'Probability', type: 'double' },
    { key: 'expected_close_date', name: 'Expected close date', type: 'date' },
    { key: 'add_time', name: 'Deal created', type: 'date', system: true },
    { key: 'update_time', name: 'Update time', type: 'date', system: true },
    { key: 'products_count', name: 'Products', type: 'int', system: true, optional: true },
    {
      key: pipedriveCustomFields.dealPriority,
      name: 'Priority',
      type: 'enum',
      custom: true,
      options: [
        { id: 41, label: 'Low' },
        { id: 42, label: 'High' },
      ],
    },
  ],
};

const fieldsCreated = '2024-01-02 09:00:00';

/** The fields as `/v1/<object>Fields` lists them (inactive ones too, with `active_flag: false`). */
function v1Fields(object: PipedriveObject): FakeField[] {
  return fieldSpecs[object].map((spec, index) => ({
    id: index + 1 + objects.indexOf(object) * 100,
    key: spec.key,
    name: spec.name,
    order_nr: index,
    field_type: spec.type,
    add_time: fieldsCreated,
    update_time: fieldsCreated,
    active_flag: !spec.inactive,
    edit_flag: !!spec.custom,
    index_visible_flag: true,
    details_visible_flag: true,
    add_visible_flag: !spec.system,
    important_flag: false,
    bulk_edit_allowed: !spec.system,
    searchable_flag: spec.type === 'varchar' || spec.type === 'phone',
    filtering_allowed: true,
    sortable_flag: true,
    mandatory_flag: !!spec.mandatory,
    options: spec.options ?? null,
    ...(spec.deletedOptions && { options_deleted: spec.deletedOptions }),
  }));
}

/** The fields as `/api/v2/<object>Fields` lists them: active ones only. */
function v2Fields(object: PipedriveObject, include: Set<string>): Record<string, unknown>[] {
  return fieldSpecs[object]
    .filter((spec) => !spec.inactive)
    .map((spec) => ({
      field_name: spec.name,
      field_code: spec.key,
      field_type: spec.type,
      options: spec.options ?? null,
      subfields: spec.subfields ?? null,
      is_custom_field: !!spec.custom,
      is_optional_response_field: !!spec.optional,
      ...(include.has('ui_visibility') && {
        ui_visibility: { add_visible_flag: !spec.system, details_visible_flag: true },
      }),
      ...(include.has('important_fields') && { important_fields: { enabled: false, stage_ids: [] } }),
      ...(include.has('required_fields') && { required_fields: { enabled: !!spec.mandatory } }),
    }));
}

const activeCustomFields = (object: PipedriveObject) =>
  fieldSpecs[object].filter((spec) => spec.custom && !spec.inactive);

/** What `fields` a search takes, per object. */
const searchFields: Record<PipedriveObject, string[]> = {
  persons: ['custom_fields', 'email', 'notes', 'phone', 'name'],
  organizations: ['address', 'custom_fields', 'notes', 'name'],
  deals: ['custom_fields', 'notes', 'title'],
};

/** The texts a search field looks in: v2 records keep emails and phones as `[{value, primary, label}]`. */
function searchedValues(object: PipedriveObject, record: FakeRecord, field: string): unknown[] {
  const listed = (name: string) => ((record[name] ?? []) as { value: unknown }[]).map((item) => item.value);
  if (field === 'email') return listed('emails');
  if (field === 'phone') return listed('phones');
  if (field === 'address') return [(record.address as { value?: unknown } | null)?.value];
  if (field === 'custom_fields') {
    // Only text-like custom fields are searchable.
    const custom = (record.custom_fields ?? {}) as Record<string, unknown>;
    return activeCustomFields(object)
      .filter((spec) => ['varchar', 'text', 'varchar_auto', 'phone', 'address', 'double'].includes(spec.type))
      .map((spec) => custom[spec.key]);
  }
  if (field === 'notes') return [];
  return [record[field]];
}

/** A search result's item: a reduced record, emails and phones as plain strings. */
function reducedItem(object: PipedriveObject, record: FakeRecord): Record<string, unknown> {
  const type = object.replace(/s$/, '');
  const common = { id: record.id, type, owner: { id: record.owner_id }, custom_fields: [], notes: [] };
  if (object === 'persons') {
    return {
      ...common,
      name: record.name,
      phones: searchedValues(object, record, 'phone'),
      emails: searchedValues(object, record, 'email'),
      visible_to: record.visible_to,
      organization: record.org_id ? { id: record.org_id, name: null, address: null } : null,
    };
  }
  if (object === 'organizations') {
    return {
      ...common,
      name: record.name,
      address: searchedValues(object, record, 'address')[0] ?? null,
      visible_to: record.visible_to,
    };
  }
  return {
    ...common,
    title: record.title,
    value: record.value,
    currency: record.currency,
    status: record.status,
    visible_to: record.visible_to,
    person: record.person_id ? { id: record.person_id } : null,
    organization: record.org_id ? { id: record.org_id } : null,
    stage: { id: record.stage_id },
    is_archived: record.is_archived,
  };
}

/** Pipedrive keeps times in whole seconds. */
const toSecond = (ms: number) => Math.floor(ms / 1000) * 1000;

/** RFC 3339 without fractions, as Pipedrive v2 writes times. */
function rfc3339(ms: number): string {
  return new Date(toSecond(ms)).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const rfc3339Pattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function timeParameter(ctx: Context, name: string): number | undefined {
  const value = ctx.query[name];
  if (value === undefined) return undefined;
  const text = String(value);
  // The reference asks for RFC 3339 (e.g. 2025-01-01T10:20:00Z); the comparison is with the
  // whole-second `update_time`, so 12:00:00.700 lets a 12:00:00 change through `updated_until`
  // and keeps it out of `updated_since`.
  const ms = Date.parse(text);
  if (!rfc3339Pattern.test(text) || Number.isNaN(ms)) {
    throw new FakeHttpError(400, `Validation failed: ${name}: Parameter must be a valid RFC 3339 date-time`);
  }
  return ms;
}

function limitParameter(ctx: Context): number {
  if (ctx.query.limit === undefined) return 100;
  const limit = Number(ctx.query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) {
    throw new FakeHttpError(400, 'Validation failed: limit: Parameter must be an integer between 1 and 500');
  }
  return limit;
}

interface Cursor {
  field: string;
  fieldValue: number | string;
  sortDirection: 'asc' | 'desc';
  id: number;
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function decodeCursor(text: string): Cursor {
  try {
    const cursor = JSON.parse(Buffer.from(text, 'base64url').toString()) as Partial<Cursor>;
    if (
      typeof cursor.field === 'string' &&
      (typeof cursor.fieldValue === 'number' || typeof cursor.fieldValue === 'string') &&
      (cursor.sortDirection === 'asc' || cursor.sortDirection === 'desc') &&
      typeof cursor.id === 'number'
    ) {
      return cursor as Cursor;
    }
  } catch {
    // fall through
  }
  throw new FakeHttpError(400, 'Validation failed: cursor: Invalid cursor');
}

/** A simple offset cursor, for lists that are not of records (field lists, search results). */
const offsetCursor = (offset: number) => Buffer.from(JSON.stringify({ offset })).toString('base64url');
function offsetOf(ctx: Context): number {
  if (typeof ctx.query.cursor !== 'string') return 0;
  try {
    const offset = (JSON.parse(Buffer.from(ctx.query.cursor, 'base64url').toString()) as { offset?: unknown })
      .offset;
    if (typeof offset === 'number' && Number.isInteger(offset) && offset >= 0) return offset;
  } catch {
    // fall through
  }
  throw new FakeHttpError(400, 'Validation failed: cursor: Invalid cursor');
}

/** One record as the fake keeps it: the version listings show now, and the one before a late commit. */
interface Row {
  id: number;
  record: FakeRecord;
  modifiedMs: number;
  /** Listings and gets show `record` from then on, `prior` before (a change that commits late). */
  visibleFromMs?: number;
  prior?: { record: FakeRecord; modifiedMs: number };
  deletedMs?: number;
}

const thirtyDays = 30 * 86_400_000;

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

/** An OAuth access token (`Authorization: Bearer`), or an API token (`x-api-token` header, `api_token` query). */
function pipedriveCredential(ctx: Context): string | undefined {
  const header = ctx.get('x-api-token');
  if (header) return header;
  if (typeof ctx.query.api_token === 'string') return ctx.query.api_token;
  return bearerCredential(ctx);
}

/** A record as v2 returns it with nothing set: every member the reference lists, null where unset. */
function blankRecord(object: PipedriveObject, id: number, ms: number): FakeRecord {
  const time = rfc3339(ms);
  const custom = Object.fromEntries(activeCustomFields(object).map((spec) => [spec.key, null]));
  if (object === 'persons') {
    return {
      id,
      name: `Person ${id}`,
      first_name: 'Person',
      last_name: String(id),
      owner_id: 1,
      org_id: null,
      add_time: time,
      update_time: time,
      emails: [],
      phones: [],
      is_deleted: false,
      visible_to: 3,
      label_ids: [],
      picture_id: null,
      custom_fields: custom,
    };
  }
  if (object === 'organizations') {
    return {
      id,
      name: `Organization ${id}`,
      owner_id: 1,
      add_time: time,
      update_time: time,
      is_deleted: false,
      visible_to: 3,
      address: null,
      label_ids: [],
      custom_fields: custom,
    };
  }
  return {
    id,
    title: `Deal ${id}`,
    creator_user_id: 1,
    owner_id: 1,
    person_id: null,
    org_id: null,
    pipeline_id: 1,
    stage_id: 1,
    value: 0,
    currency: 'USD',
    add_time: time,
    update_time: time,
    stage_change_time: null,
    is_deleted: false,
    is_archived: false,
    archive_time: null,
    status: 'open',
    probability: null,
    lost_reason: null,
    visible_to: 3,
    close_time: null,
    won_time: null,
    lost_time: null,
    expected_close_date: null,
    label_ids: [],
    origin: 'API',
    origin_id: null,
    channel: null,
    channel_id: null,
    arr: null,
    mrr: null,
    acv: null,
    custom_fields: custom,
  };
}

export async function startFakePipedrive(): Promise<FakePipedrive> {
  const rows = new Map<PipedriveObject, Map<number, Row>>();
  const nextId = new Map<PipedriveObject, number>();
  let remaining = 80;

  const fake = new FakeProvider({
    credentialOf: pipedriveCredential,
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
              error_info:
                error.status === 404 ? 'Object was not found.' : 'Please check developers.pipedrive.com',
              data: null,
              additional_data: null,
            },
    rateLimitHeaders: () => ({
      'x-ratelimit-limit': '80',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': '2',
      'retry-after': '2',
    }),
  });

  const reset = () => {
    for (const object of objects) {
      rows.set(object, new Map());
      nextId.set(object, 1);
    }
    fake.requests.length = 0;
  };
  reset();

  const newId = (object: PipedriveObject) => {
    const id = nextId.get(object)!;
    nextId.set(object, id + 1);
    return id;
  };

  /** The version of a row readers see now, or undefined (not committed yet, or deleted). */
  const visible = (row: Row, now = fake.now()): { record: FakeRecord; modifiedMs: number } | undefined => {
    if (row.deletedMs !== undefined) return undefined;
    if (row.visibleFromMs === undefined || row.visibleFromMs <= now) return row;
    return row.prior;
  };
  /** Deleted deals as `status=deleted` shows them: for 30 days after the deletion. */
  const deletedVisible = (row: Row, now = fake.now()) =>
    row.deletedMs !== undefined && now - row.deletedMs <= thirtyDays ? row : undefined;

  const router = fake.router;
  router.use(async (ctx, next) => {
    remaining = remaining > 1 ? remaining - 1 : 80;
    ctx.set('x-ratelimit-limit', '80');
    ctx.set('x-ratelimit-remaining', String(remaining));
    ctx.set('x-ratelimit-reset', '2');
    await next();
  });

  const objectOf = (ctx: Context): PipedriveObject => {
    const object = ctx.params.object;
    if (!(objects as readonly string[]).includes(object)) throw new FakeHttpError(404, 'Unknown method .');
    return object as PipedriveObject;
  };
  const rowOf = (object: PipedriveObject, id: string): Row => {
    const row = /^\d+$/.test(id) ? rows.get(object)!.get(Number(id)) : undefined;
    if (!row || !visible(row)) throw new FakeHttpError(404, 'Entity was not found');
    return row;
  };

  /** A record as a v2 answer carries it: `custom_fields` narrowed, optional members added on request. */
  const shaped = (object: PipedriveObject, record: FakeRecord, ctx: Context): FakeRecord => {
    const out: FakeRecord = { ...record };
    if (typeof ctx.query.custom_fields === 'string') {
      const keys = ctx.query.custom_fields.split(',').filter(Boolean);
      if (keys.length > 15) {
        throw new FakeHttpError(400, 'Validation failed: custom_fields: A maximum of 15 keys is allowed');
      }
      const custom = (record.custom_fields ?? {}) as Record<string, unknown>;
      out.custom_fields = Object.fromEntries(
        keys.filter((key) => key in custom).map((key) => [key, custom[key]]),
      );
    }
    if (typeof ctx.query.include_fields === 'string') {
      for (const name of ctx.query.include_fields.split(',').filter(Boolean)) {
        if (!includable[object].includes(name)) {
          throw new FakeHttpError(
            400,
            `Validation failed: include_fields: Parameter must be one or more of ${includable[object].join(', ')}`,
          );
        }
        out[name] = 0;
      }
    }
    return out;
  };

  const checkBody = (object: PipedriveObject, body: unknown, creating: boolean): Record<string, unknown> => {
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new FakeHttpError(400, 'Validation failed: body: Invalid request body');
    const values = body as Record<string, unknown>;
    for (const name of Object.keys(values)) {
      if (!writable[object].includes(name)) {
        throw new FakeHttpError(400, `Validation failed: ${name}: Parameter is not allowed for this request`);
      }
    }
    const required = requiredOf[object];
    const value = values[required];
    if ((creating || required in values) && (typeof value !== 'string' || value.trim() === '')) {
      throw new FakeHttpError(
        400,
        `Validation failed: ${required}: Parameter '${required}' must be a non-empty string`,
      );
    }
    for (const name of ['emails', 'phones']) {
      if (name in values) {
        const list = values[name];
        if (
          !Array.isArray(list) ||
          list.some(
            (item) =>
              !item || typeof item !== 'object' || typeof (item as { value?: unknown }).value !== 'string',
          )
        ) {
          throw new FakeHttpError(
            400,
            `Validation failed: ${name}: Parameter must be an array of {value, primary, label}`,
          );
        }
      }
    }
    if ('custom_fields' in values) {
      const custom = values.custom_fields;
      if (!custom || typeof custom !== 'object' || Array.isArray(custom)) {
        throw new FakeHttpError(400, 'Validation failed: custom_fields: Parameter must be an object');
      }
      const specs = new Map(activeCustomFields(object).map((spec) => [spec.key, spec]));
      for (const [key, given] of Object.entries(custom)) {
        const spec = specs.get(key);
        if (!spec)
          throw new FakeHttpError(400, `Validation failed: custom_fields: Unknown custom field '${key}'`);
        if (spec.type === 'enum' && given !== null && !spec.options!.some((option) => option.id === given)) {
          throw new FakeHttpError(400, `Validation failed: custom_fields.${key}: Invalid option ID`);
        }
      }
    }
    for (const name of ['add_time', 'update_time']) {
      if (
        name in values &&
        (typeof values[name] !== 'string' || Number.isNaN(Date.parse(values[name] as string)))
      ) {
        throw new FakeHttpError(400, `Validation failed: ${name}: Parameter must be a date-time`);
      }
    }
    return values;
  };

  /** Applies a write's members to a record, as v2 stores them. */
  const apply = (record: FakeRecord, values: Record<string, unknown>) => {
    for (const [name, value] of Object.entries(values)) {
      if (name === 'custom_fields') {
        Object.assign(record.custom_fields as object, value);
      } else if (name === 'add_time' || name === 'update_time') {
        record[name] = rfc3339(Date.parse(value as string));
      } else if (name === 'emails' || name === 'phones') {
        record[name] = (value as { value: string; primary?: boolean; label?: string }[]).map(
          (item, index) => ({
            value: item.value,
            primary: item.primary ?? index === 0,
            label: item.label ?? 'work',
          }),
        );
      } else {
        record[name] = value;
      }
    }
    if ('name' in values && 'first_name' in record) {
      const [first, ...rest] = String(values.name).split(' ');
      Object.assign(record, { first_name: first, last_name: rest.join(' ') || null });
    }
  };

  // Field metadata, registered before the record routes whose paths they share.
  router.get('/api/v2/:fields', async (ctx, next) => {
    const object = fieldLists[ctx.params.fields];
    if (!object) return next();
    const limit = limitParameter(ctx);
    const offset = offsetOf(ctx);
    const include = new Set(
      typeof ctx.query.include_fields === 'string' ? ctx.query.include_fields.split(',') : [],
    );
    const all = v2Fields(object, include);
    const page = all.slice(offset, offset + limit);
    const next_ = offset + page.length;
    ctx.body = {
      success: true,
      data: page,
      additional_data: { next_cursor: next_ < all.length ? offsetCursor(next_) : null },
    };
  });

  router.get('/api/v2/:object', (ctx) => {
    const object = objectOf(ctx);
    const limit = limitParameter(ctx);
    fake.logListing(ctx, { object, pageSize: limit, maxPageSize: 500 });
    shaped(object, blankRecord(object, 0, 0), ctx); // refuses a wrong custom_fields or include_fields
    const since = timeParameter(ctx, 'updated_since');
    const until = timeParameter(ctx, 'updated_until');
    const now = fake.now();

    let statuses: Set<string> | undefined;
    if (typeof ctx.query.status === 'string') {
      if (object !== 'deals')
        throw new FakeHttpError(400, 'Validation failed: status: Parameter is not allowed');
      statuses = new Set(ctx.query.status.split(','));
      for (const status of statuses) {
        if (!['open', 'won', 'lost', 'deleted'].includes(status)) {
          throw new FakeHttpError(
            400,
            'Validation failed: status: Parameter must be one of open, won, lost, deleted',
          );
        }
      }
    }

    const cursor = typeof ctx.query.cursor === 'string' ? decodeCursor(ctx.query.cursor) : undefined;
    const sortBy = cursor?.field ?? String(ctx.query.sort_by ?? 'id');
    if (!['id', 'update_time', 'add_time'].includes(sortBy)) {
      throw new FakeHttpError(
        400,
        'Validation failed: sort_by: Parameter must be one of id, update_time, add_time',
      );
    }
    const direction = cursor?.sortDirection ?? (ctx.query.sort_direction === 'desc' ? 'desc' : 'asc');
    if (
      ctx.query.sort_direction !== undefined &&
      !['asc', 'desc'].includes(String(ctx.query.sort_direction))
    ) {
      throw new FakeHttpError(400, 'Validation failed: sort_direction: Parameter must be one of asc, desc');
    }

    // `ids`: up to 100 records by id, those that exist and are visible.
    const ids = typeof ctx.query.ids === 'string' ? new Set(ctx.query.ids.split(',')) : undefined;
    if (ids && ids.size > 100) throw new FakeHttpError(400, 'Validation failed: ids: At most 100 ids');

    const wanted = (row: Row) => {
      if (statuses?.has('deleted') && deletedVisible(row, now)) return deletedVisible(row, now);
      const seen = visible(row, now);
      if (!seen) return undefined;
      if (statuses && !statuses.has(String(seen.record.status))) return undefined;
      return seen;
    };
    const sortKey = (record: FakeRecord): number =>
      sortBy === 'id' ? record.id : Date.parse(String(record[sortBy]));
    const found = [...rows.get(object)!.values()]
      .map(wanted)
      .filter((seen): seen is { record: FakeRecord; modifiedMs: number } => !!seen)
      .map((seen) => seen.record)
      .filter((record) => {
        const ms = Date.parse(record.update_time);
        return (
          (since === undefined || ms >= since) &&
          (until === undefined || ms < until) &&
          (ids === undefined || ids.has(String(record.id)))
        );
      })
      .sort((a, b) => (sortKey(a) - sortKey(b) || a.id - b.id) * (direction === 'desc' ? -1 : 1));

    // The cursor names the first item of the next page by its sort value and id (keyset paging).
    let start = 0;
    if (cursor) {
      const value = sortBy === 'id' ? Number(cursor.fieldValue) : Date.parse(String(cursor.fieldValue));
      start = found.findIndex((record) => {
        const order = sortKey(record) - value || record.id - cursor.id;
        return direction === 'desc' ? order <= 0 : order >= 0;
      });
      if (start < 0) start = found.length;
    }
    const page = found.slice(start, start + limit);
    const following = found[start + limit];
    ctx.body = {
      success: true,
      data: page.map((record) => shaped(object, record, ctx)),
      additional_data: {
        next_cursor: following
          ? encodeCursor({
              field: sortBy,
              fieldValue: sortBy === 'id' ? following.id : String(following[sortBy]),
              sortDirection: direction,
              id: following.id,
            })
          : null,
      },
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
    const limit = limitParameter(ctx);
    fake.logListing(ctx, { object, pageSize: limit, maxPageSize: 500 });
    const matches = (text: unknown) =>
      typeof text === 'string' &&
      (exact ? text.toLowerCase() === term.toLowerCase() : text.toLowerCase().includes(term.toLowerCase()));
    const found = [...rows.get(object)!.values()]
      .map((row) => visible(row)?.record)
      .filter((record): record is FakeRecord => !!record)
      .filter((record) => fields.some((name) => searchedValues(object, record, name).some(matches)))
      .sort((a, b) => a.id - b.id);
    const offset = offsetOf(ctx);
    const page = found.slice(offset, offset + limit);
    const next = offset + page.length;
    ctx.body = {
      success: true,
      data: { items: page.map((record) => ({ result_score: 1, item: reducedItem(object, record) })) },
      additional_data: { next_cursor: next < found.length ? offsetCursor(next) : null },
    };
  });

  router.get('/api/v2/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    ctx.body = { success: true, data: shaped(object, visible(rowOf(object, ctx.params.id))!.record, ctx) };
  });

  router.post('/api/v2/:object', (ctx) => {
    const object = objectOf(ctx);
    const values = checkBody(object, ctx.request.body, true);
    const id = newId(object);
    const now = toSecond(fake.now());
    const record = blankRecord(object, id, now);
    apply(record, values);
    rows.get(object)!.set(id, { id, record, modifiedMs: Date.parse(record.update_time) });
    ctx.body = { success: true, data: record };
  });

  router.patch('/api/v2/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = rowOf(object, ctx.params.id);
    const values = checkBody(object, ctx.request.body, false);
    apply(row.record, values);
    if (!('update_time' in values)) row.record.update_time = rfc3339(fake.now());
    Object.assign(row, {
      modifiedMs: Date.parse(row.record.update_time),
      visibleFromMs: undefined,
      prior: undefined,
    });
    ctx.body = { success: true, data: row.record };
  });

  const markDeleted = (object: PipedriveObject, row: Row, atMs: number) => {
    const ms = toSecond(atMs);
    Object.assign(row.record, { is_deleted: true, update_time: rfc3339(ms) });
    if (object === 'deals') row.record.status = 'deleted';
    Object.assign(row, { deletedMs: ms, modifiedMs: ms, visibleFromMs: undefined, prior: undefined });
  };

  router.delete('/api/v2/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = rowOf(object, ctx.params.id);
    markDeleted(object, row, fake.now());
    ctx.body = { success: true, data: { id: row.id } };
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
    if (!Number.isInteger(start) || start < 0 || !Number.isInteger(limit) || limit < 1) {
      throw new FakeHttpError(400, 'Invalid start or limit');
    }
    const all = v1Fields(object);
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

  const known = (object: string): PipedriveObject => {
    if (!(objects as readonly string[]).includes(object))
      throw new Error(`the Pipedrive fake has no ${object}`);
    return object as PipedriveObject;
  };
  const liveRow = (object: string, id: string): Row | undefined => {
    const row = rows.get(known(object))!.get(Number(id));
    return row && row.deletedMs === undefined ? row : undefined;
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
    setClock: (now) => fake.setClock(now),
    records: (object) =>
      [...rows.get(known(object))!.values()]
        .filter((row) => row.deletedMs === undefined)
        .map((row) => row.record),
    seed(object, modifiedTimes) {
      const name = known(object);
      return modifiedTimes.map((ms) => {
        const id = newId(name);
        const record = blankRecord(name, id, ms);
        rows.get(name)!.set(id, { id, record, modifiedMs: toSecond(ms) });
        return String(id);
      });
    },
    stored: (object, id) => liveRow(object, id)?.record,
    touch(object, id, modifiedMs, options) {
      const row = liveRow(object, id);
      if (!row) throw new Error(`no ${object} ${id}`);
      const now = fake.now();
      const committedLate = options?.visibleFromMs !== undefined && options.visibleFromMs > now;
      const before = visible(row, now);
      row.prior =
        committedLate && before
          ? { record: structuredClone(before.record), modifiedMs: before.modifiedMs }
          : undefined;
      row.record.update_time = rfc3339(modifiedMs);
      row.modifiedMs = toSecond(modifiedMs);
      row.visibleFromMs = options?.visibleFromMs;
    },
    remove(object, id, atMs) {
      const row = liveRow(object, id);
      if (!row) throw new Error(`no ${object} ${id}`);
      markDeleted(known(object), row, atMs);
    },
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    reset,
    stop: () => fake.stop(),
  };
}

import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { FakeHttpError, FakeProvider, RecordStore, type StoredRecord } from '../kit/fake-provider.js';
import { zendeskWebhookRoutes } from './zendeskSupport-webhooks.js';

/**
 * A local stand-in for the Zendesk Support (Ticketing) API v2, written from Zendesk's reference
 * (https://developer.zendesk.com/api-reference/ticketing/introduction/) and its guide to the
 * incremental exports; notes and sources in /work/notes/fakes/zendeskSupport.md.
 *
 * - Auth: OAuth `Bearer` tokens, or an API token as Basic `{email}/token:{token}`. A 401 answers
 *   `{"error": "Couldn't authenticate you"}`.
 * - Times are whole seconds (`2011-05-05T10:38:52Z`, `generated_timestamp` in Unix seconds).
 * - Lists `GET /api/v2/{tickets,users,organizations}[.json]`: cursor pages with `page[size]` (at
 *   most 100; `{meta: {has_more, after_cursor, before_cursor}, links: {next, prev}}`), or offset
 *   pages (`page`, `per_page` at most 100, default 100, no further than 10,000 records) without it.
 *   Lists leave out deleted records and archived tickets (closed for 120 days).
 * - Incremental exports, cursor based (tickets, users): `start_time` (Unix seconds, items changed
 *   at or after it) on the first request, `cursor` after; `per_page` at most 1,000, default 1,000;
 *   `{<resource>, after_url, after_cursor, before_url, before_cursor, end_of_stream}`, with an
 *   `after_cursor` on the last page too (the next export resumes from it). Time based (tickets,
 *   users, organizations): `{<resource>, count, end_time, next_page, end_of_stream}`; the next page
 *   starts at `end_time`, inclusive, so the items of that second come again, and a page never splits
 *   items of one second (it may exceed `per_page`). Tickets are exported by `generated_timestamp`.
 *   Every export leaves out the most recent minute, refuses a `start_time` less than a minute old,
 *   and shares a limit of 10 requests a minute (the cursor user export has its own, 20), answered
 *   429 with `Retry-After` (enforced when started with `exportRateLimit`).
 * - Deletions: a deleted ticket leaves lists and gets, is listed by `GET /api/v2/deleted_tickets`,
 *   and shows in the ticket exports with `status: "deleted"` (unless `exclude_deleted=true`). A
 *   deleted user stays, `active: false`: its get still answers, lists leave it out,
 *   `GET /api/v2/deleted_users` and the user exports show it. A deleted organization is gone
 *   (nothing reveals it).
 * - Records carry every field Zendesk sends: tickets `custom_fields: [{id, value}]` (and the same
 *   `fields`) for every ticket field, users `user_fields` and organizations `organization_fields`
 *   keyed by field `key`, null when unset.
 * - Field lists `ticket_fields`, `user_fields`, `organization_fields`, inactive ones included
 *   (`active: false`); system ticket fields give `system_field_options`, custom ones
 *   `custom_field_options`.
 * - Writes take the record under its singular name; create 201, update `PUT` 200, ticket creates
 *   honour `Idempotency-Key`; a ticket delete answers 204, a user delete 200 with the user. Errors
 *   `{error, description}`, 422 `RecordInvalid` with `details` per field.
 * - Webhooks subscribed to Zendesk events: see zendeskSupport-webhooks.ts.
 * - `X-Rate-Limit`/`X-Rate-Limit-Remaining` (and `ratelimit-*`) on answers; `Retry-After` on a 429.
 */

const resources = { tickets: 'ticket', users: 'user', organizations: 'organization' } as const;
type Resource = keyof typeof resources;
type ZendeskRecord = Record<string, unknown> & { id: number };
type Row = StoredRecord<ZendeskRecord>;

export interface FakeZendeskOptions {
  /** Enforce the incremental exports' own rate limits (10 a minute; 20 for the cursor user export). */
  exportRateLimit?: boolean;
}

/** A fake Zendesk: the conformance interface, plus what Zendesk's own tests need. */
export interface FakeZendesk extends ConformanceFake {
  /**
   * A system update of a ticket (an SLA or metric recomputation): `generated_timestamp` moves, and
   * with it the ticket's place in the exports, while `updated_at` stays.
   */
  systemUpdate(ticketId: string, atMs: number): void;
}

const MINUTE = 60_000;
const LIST_MAX = 100;
const EXPORT_MAX = 1000;
/** Offset pagination stops at the 100th page of 100. */
const OFFSET_RECORD_LIMIT = 10_000;

const seconds = (ms: number) => Math.floor(ms / 1000);
const wholeSecond = (ms: number) => seconds(ms) * 1000;
const zendeskTime = (ms: number) => new Date(wholeSecond(ms)).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A 422 `RecordInvalid`, with the per-field `details` Zendesk gives. */
class RecordInvalid extends FakeHttpError {
  constructor(readonly details: Record<string, Record<string, unknown>[]>) {
    super(422, 'Record validation errors', 'RecordInvalid');
  }
}
const invalid = (field: string, description: string, error = 'InvalidValue', extra = {}) =>
  new RecordInvalid({ [field]: [{ description, error, ...extra }] });

const options = (...pairs: [string, string][]) =>
  pairs.map(([value, name], i) => ({
    id: 10_000 + i,
    name,
    raw_name: name,
    value,
    default: false,
    position: i,
    url: null,
  }));
const systemOptions = (...values: string[]) =>
  values.map((value) => ({ name: value[0].toUpperCase() + value.slice(1), value }));

const fieldDates = { created_at: '2020-01-01T00:00:00Z', updated_at: '2020-01-01T00:00:00Z' };

function ticketField(
  id: number,
  type: string,
  title: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const custom = id >= 360_000;
  return {
    id,
    url: null,
    type,
    title,
    raw_title: title,
    description: '',
    raw_description: '',
    position: id,
    active: true,
    required: false,
    collapsed_for_agents: false,
    regexp_for_validation: null,
    title_in_portal: title,
    raw_title_in_portal: title,
    visible_in_portal: !custom,
    editable_in_portal: !custom,
    required_in_portal: false,
    tag: null,
    removable: custom,
    agent_description: null,
    ...fieldDates,
    ...extra,
  };
}

const TICKET_FIELDS: Record<string, unknown>[] = [
  ticketField(1, 'subject', 'Subject'),
  ticketField(2, 'description', 'Description', { required: true }),
  ticketField(3, 'status', 'Status', {
    system_field_options: systemOptions('new', 'open', 'pending', 'hold', 'solved', 'closed'),
  }),
  ticketField(4, 'tickettype', 'Type', {
    system_field_options: systemOptions('question', 'incident', 'problem', 'task'),
  }),
  ticketField(5, 'priority', 'Priority', {
    system_field_options: systemOptions('low', 'normal', 'high', 'urgent'),
  }),
  ticketField(6, 'group', 'Group'),
  ticketField(7, 'assignee', 'Assignee', { required: true }),
  ticketField(360_001, 'tagger', 'Plan', {
    custom_field_options: options(['plan_gold', 'Gold'], ['plan_silver', 'Silver']),
  }),
  ticketField(360_002, 'checkbox', 'VIP', { tag: 'vip' }),
  ticketField(360_003, 'decimal', 'Contract value', { required: true }),
  ticketField(360_004, 'multiselect', 'Products', {
    custom_field_options: options(['product_printer', 'Printer'], ['product_scanner', 'Scanner']),
  }),
  ticketField(360_005, 'date', 'Renewal'),
  // Deactivated: kept in the list (`active: false`), and tickets keep their values.
  ticketField(360_006, 'text', 'Legacy reference', { active: false }),
];

function customField(
  id: number,
  key: string,
  type: string,
  title: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id,
    url: null,
    key,
    type,
    title,
    raw_title: title,
    description: '',
    raw_description: '',
    position: id % 100,
    active: true,
    system: false,
    regexp_for_validation: null,
    tag: null,
    ...fieldDates,
    ...extra,
  };
}

const USER_FIELDS: Record<string, unknown>[] = [
  customField(7001, 'plan_tier', 'dropdown', 'Plan tier', {
    custom_field_options: options(['gold', 'Gold'], ['silver', 'Silver']),
  }),
  customField(7002, 'renewal_date', 'date', 'Renewal date'),
  customField(7003, 'newsletter', 'checkbox', 'Newsletter', { tag: 'newsletter' }),
  customField(7004, 'legacy_id', 'text', 'Legacy id', { active: false }),
];

const ORGANIZATION_FIELDS: Record<string, unknown>[] = [
  customField(8001, 'seats', 'integer', 'Seats'),
  customField(8002, 'notes_long', 'textarea', 'Long notes'),
  customField(8003, 'churned', 'checkbox', 'Churned', { active: false }),
];

const fieldLists: Record<string, Record<string, unknown>[]> = {
  ticket_fields: TICKET_FIELDS,
  user_fields: USER_FIELDS,
  organization_fields: ORGANIZATION_FIELDS,
};

/** An unset custom field: a checkbox is false, anything else null. */
const unset = (field: Record<string, unknown>) => (field.type === 'checkbox' ? false : null);
const customTicketFields = TICKET_FIELDS.filter((field) => field.removable);

const TICKET_STATUSES = ['new', 'open', 'pending', 'hold', 'solved', 'closed'];
const TICKET_PRIORITIES = ['low', 'normal', 'high', 'urgent'];
const TICKET_TYPES = ['question', 'incident', 'problem', 'task'];

/** Zendesk's export cursors look like base64 of `1576613539.0||467|`: seconds, then the id. */
const encodeCursor = (sec: number, id: number) => Buffer.from(`${sec}.0||${id}|`).toString('base64');
function decodeCursor(cursor: string): [number, number] {
  const match = /^(\d+)\.0\|\|(\d+)\|$/.exec(Buffer.from(cursor, 'base64').toString('utf8'));
  if (!match) throw new FakeHttpError(400, 'Invalid cursor', 'InvalidPaginationParameter');
  return [Number(match[1]), Number(match[2])];
}
/** List cursors (`page[after]`) are opaque too: base64 of the last id. */
const encodeListCursor = (id: number) => Buffer.from(`id:${id}`).toString('base64url');
function decodeListCursor(cursor: string): number {
  const match = /^id:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw new FakeHttpError(400, 'Invalid cursor', 'InvalidPaginationParameter');
  return Number(match[1]);
}

/** `Authorization: Bearer <token>`, or Basic `{email}/token:{token}` → the token. */
function zendeskCredential(ctx: Context): string | undefined {
  const header = ctx.get('authorization');
  const bearer = /^Bearer\s+(.+)$/i.exec(header)?.[1];
  if (bearer) return bearer;
  const basic = /^Basic\s+(.+)$/i.exec(header)?.[1];
  if (!basic) return undefined;
  // Passwords (`{email}:{password}`) are refused: Zendesk deprecated them for the API.
  return /^[^:/]+\/token:(.+)$/.exec(Buffer.from(basic, 'base64').toString('utf8'))?.[1];
}

export async function startFakeZendesk(settings: FakeZendeskOptions = {}): Promise<FakeZendesk> {
  const stores: Record<Resource, RecordStore<ZendeskRecord>> = {
    tickets: new RecordStore(),
    users: new RecordStore(),
    organizations: new RecordStore(),
  };
  /** Ticket deletions, for `GET /api/v2/deleted_tickets`. */
  const deletedBy = new Map<number, { deleted_at: string; previous_state: string }>();
  const idempotent = new Map<string, { body: string; status: number; answer: unknown }>();
  const exportCalls = new Map<string, { window: number; count: number }>();
  let nextId = 1;

  const fake = new FakeProvider({
    credentialOf: zendeskCredential,
    errorBody: (error) =>
      error.status === 401
        ? { error: "Couldn't authenticate you" }
        : error.status === 429
          ? { error: 'APIRateLimitExceeded', description: error.message }
          : {
              error: error.code ?? (error.status === 404 ? 'RecordNotFound' : 'InvalidValue'),
              description: error.message,
              ...(error instanceof RecordInvalid && { details: error.details }),
            },
    rateLimitHeaders: () => ({
      'Retry-After': '60',
      'X-Rate-Limit': '700',
      'X-Rate-Limit-Remaining': '0',
      'ratelimit-limit': '700',
      'ratelimit-remaining': '0',
      'ratelimit-reset': '60',
    }),
  });
  const now = () => fake.now();

  const router = fake.router;
  router.use(async (ctx, next) => {
    ctx.set('X-Rate-Limit', '700');
    ctx.set('X-Rate-Limit-Remaining', '699');
    ctx.set('ratelimit-limit', '700');
    ctx.set('ratelimit-remaining', '699');
    ctx.set('ratelimit-reset', String(60 - (seconds(now()) % 60)));
    await next();
  });

  const notFound = () => new FakeHttpError(404, 'Not found', 'RecordNotFound');
  const resourceOf = (name: string): Resource => {
    if (!Object.hasOwn(resources, name)) throw new FakeHttpError(404, 'Not found', 'InvalidEndpoint');
    return name as Resource;
  };
  /** `tickets.json` or `tickets` → `tickets`. */
  const bare = (segment: string) => segment.replace(/\.json$/, '');
  const idOf = (segment: string) => {
    const id = /^(\d+)(?:\.json)?$/.exec(segment)?.[1];
    if (!id) throw notFound();
    return Number(id);
  };
  const origin = (ctx: Context) => `${ctx.protocol}://${ctx.host}`;

  /** The row a get, update or delete reaches: never a deleted ticket or organization. */
  function reachable(resource: Resource, id: number): Row {
    const row = stores[resource].rows.get(String(id));
    if (!row || (row.deleted && resource !== 'users')) throw notFound();
    return row;
  }

  /** Where the row sits in the exports: `generated_timestamp` for tickets, else `updated_at` (seconds). */
  const exportSecond = (row: Row) => seconds(row.modifiedMs);

  function stamp(row: Row, ms: number, options: { visibleFromMs?: number; system?: boolean } = {}) {
    row.modifiedMs = wholeSecond(ms);
    row.visibleFromMs = options.visibleFromMs;
    row.record.generated_timestamp = seconds(ms);
    if (!options.system) row.record.updated_at = zendeskTime(ms);
  }

  const shaped = (resource: Resource, row: Row): ZendeskRecord => {
    const record = { ...row.record };
    if (resource !== 'tickets') delete record.generated_timestamp;
    if (resource === 'tickets') record.fields = record.custom_fields;
    return structuredClone(record);
  };

  function create(resource: Resource, values: Record<string, unknown>, ms: number, base: string): Row {
    const id = nextId++;
    const common = {
      id,
      url: `${base}/api/v2/${resource}/${id}.json`,
      created_at: zendeskTime(ms),
      updated_at: zendeskTime(ms),
      generated_timestamp: seconds(ms),
    };
    const defaults: Record<Resource, () => Record<string, unknown>> = {
      tickets: () => ({
        external_id: null,
        via: { channel: 'api', source: { from: {}, to: {}, rel: null } },
        type: null,
        subject: null,
        raw_subject: null,
        description: null,
        priority: null,
        status: 'new',
        recipient: null,
        requester_id: 9001,
        submitter_id: 9001,
        assignee_id: null,
        organization_id: null,
        group_id: null,
        collaborator_ids: [],
        follower_ids: [],
        email_cc_ids: [],
        forum_topic_id: null,
        problem_id: null,
        has_incidents: false,
        is_public: true,
        due_at: null,
        tags: [],
        custom_fields: customTicketFields.map((field) => ({ id: field.id, value: unset(field) })),
        satisfaction_rating: null,
        sharing_agreement_ids: [],
        custom_status_id: 1,
        followup_ids: [],
        ticket_form_id: 1,
        brand_id: 1,
        allow_channelback: false,
        allow_attachments: true,
        from_messaging_channel: false,
      }),
      users: () => ({
        external_id: null,
        name: null,
        email: null,
        alias: null,
        active: true,
        verified: false,
        shared: false,
        shared_agent: false,
        locale: 'en-US',
        locale_id: 1,
        time_zone: 'Eastern Time (US & Canada)',
        iana_time_zone: 'America/New_York',
        last_login_at: null,
        two_factor_auth_enabled: false,
        phone: null,
        shared_phone_number: null,
        photo: null,
        signature: null,
        details: null,
        notes: null,
        role: 'end-user',
        role_type: null,
        custom_role_id: null,
        moderator: false,
        ticket_restriction: 'requested',
        only_private_comments: false,
        restricted_agent: true,
        suspended: false,
        default_group_id: null,
        report_csv: false,
        organization_id: null,
        tags: [],
        user_fields: Object.fromEntries(USER_FIELDS.map((field) => [field.key, unset(field)])),
      }),
      organizations: () => ({
        external_id: null,
        name: null,
        shared_tickets: false,
        shared_comments: false,
        domain_names: [],
        details: null,
        notes: null,
        group_id: null,
        tags: [],
        organization_fields: Object.fromEntries(
          ORGANIZATION_FIELDS.map((field) => [field.key, unset(field)]),
        ),
      }),
    };
    const record = { ...defaults[resource](), ...common } as ZendeskRecord;
    apply(resource, record, values);
    const row: Row = { record, modifiedMs: wholeSecond(ms) };
    stores[resource].rows.set(String(id), row);
    return row;
  }

  /** Merges a write's values into a record: custom fields by id or key, unknown members ignored. */
  function apply(resource: Resource, record: ZendeskRecord, values: Record<string, unknown>) {
    for (const [name, value] of Object.entries(values)) {
      if (resource === 'tickets' && (name === 'custom_fields' || name === 'fields')) {
        const current = record.custom_fields as { id: number; value: unknown }[];
        for (const entry of (Array.isArray(value) ? value : []) as { id?: unknown; value?: unknown }[]) {
          const slot = current.find((field) => field.id === Number(entry?.id));
          // A value for a field the account does not have is dropped.
          if (slot) slot.value = entry.value ?? null;
        }
      } else if (name === 'user_fields' || name === 'organization_fields') {
        const fields = resource === 'users' ? USER_FIELDS : ORGANIZATION_FIELDS;
        const current = record[name] as Record<string, unknown>;
        for (const [key, fieldValue] of Object.entries((value as Record<string, unknown>) ?? {})) {
          if (fields.some((field) => field.key === key)) current[key] = fieldValue;
        }
      } else if (Object.hasOwn(record, name)) {
        // Members the resource does not have are ignored, as Zendesk does.
        record[name] = value;
      }
    }
    if (resource === 'tickets') record.raw_subject = record.subject;
  }

  /** A write's body: the record under its singular name, checked as Zendesk validates it. */
  function writeValues(resource: Resource, body: unknown, existing?: ZendeskRecord): Record<string, unknown> {
    const one = resources[resource];
    const values = (body as Record<string, unknown> | undefined)?.[one];
    if (!values || typeof values !== 'object' || Array.isArray(values)) {
      throw new FakeHttpError(400, `Parameter ${one} is required`, 'InvalidValue');
    }
    const record = { ...(values as Record<string, unknown>) };
    const blank = (name: string) =>
      record[name] === undefined || record[name] === null || record[name] === '';
    for (const readOnly of ['id', 'url', 'created_at', 'updated_at', 'generated_timestamp']) {
      delete record[readOnly];
    }
    if (resource === 'tickets') {
      const comment = record.comment as { body?: unknown; html_body?: unknown } | undefined;
      delete record.comment;
      // `description` is read-only: the first comment is the description.
      delete record.description;
      if (!existing) {
        const text = comment?.body ?? comment?.html_body;
        if (typeof text !== 'string' || text === '') {
          throw invalid('base', 'Description: cannot be blank', 'BlankValue', {
            ticket_field_id: 2,
            ticket_field_type: 'FieldDescription',
          });
        }
        record.description = text;
      } else if (existing.status === 'closed') {
        throw invalid('status', 'Status: closed prevents ticket update', 'ClosedTicketUpdate');
      }
      const enums: [string, string[], string][] = [
        ['status', TICKET_STATUSES, 'Status'],
        ['priority', TICKET_PRIORITIES, 'Priority'],
        ['type', TICKET_TYPES, 'Type'],
      ];
      for (const [name, allowed, label] of enums) {
        if (!blank(name) && !allowed.includes(String(record[name]))) {
          throw invalid(name, `${label}: ${String(record[name])} is not valid`);
        }
      }
    }
    if (resource === 'users') {
      if (!existing && blank('name')) throw invalid('name', 'Name:  is too short (minimum is 1 character)');
      if (!blank('email')) {
        for (const row of stores.users.rows.values()) {
          if (row.record !== existing && !row.deleted && row.record.email === record.email) {
            throw invalid(
              'email',
              `Email: ${String(record.email)} is already being used by another user`,
              'DuplicateValue',
            );
          }
        }
      }
    }
    if (resource === 'organizations') {
      if ((!existing && blank('name')) || (existing && 'name' in record && blank('name'))) {
        throw invalid('name', 'Name: cannot be blank', 'BlankValue');
      }
      if (!blank('name')) {
        for (const row of stores.organizations.rows.values()) {
          if (row.record !== existing && !row.deleted && row.record.name === record.name) {
            throw invalid('name', 'Name: has already been taken', 'DuplicateValue');
          }
        }
      }
    }
    return record;
  }

  /** The exports' own rate limit, counted per minute of the provider's clock. */
  function countExport(ctx: Context, bucket: 'incremental-exports' | 'incremental-exports-cursor') {
    const limit = bucket === 'incremental-exports' ? 10 : 20;
    const window = Math.floor(now() / MINUTE);
    const calls = exportCalls.get(bucket);
    const count = calls && calls.window === window ? calls.count + 1 : 1;
    exportCalls.set(bucket, { window, count });
    const resets = Math.max(1, Math.ceil(((window + 1) * MINUTE - now()) / 1000));
    const remaining = Math.max(0, limit - count);
    if (bucket === 'incremental-exports-cursor') {
      ctx.set(
        'Zendesk-RateLimit-incremental-exports-cursor',
        `total=${limit}; remaining=${remaining}; resets=${resets}`,
      );
    }
    if (settings.exportRateLimit && count > limit) {
      throw new FakeHttpError(
        429,
        'Number of allowed incremental export API requests per minute exceeded',
        'APIRateLimitExceeded',
        {
          'Retry-After': String(resets),
          ...(bucket === 'incremental-exports-cursor' && {
            'Zendesk-RateLimit-incremental-exports-cursor': `total=${limit}; remaining=0; resets=${resets}`,
          }),
        },
      );
    }
  }

  /** `start_time`: Unix seconds, at least a minute old. */
  function startTimeOf(ctx: Context): number {
    const raw = ctx.query.start_time;
    if (typeof raw !== 'string' || !/^\d+$/.test(raw)) {
      throw new FakeHttpError(
        400,
        'start_time is required and must be a Unix epoch time in seconds',
        'InvalidValue',
      );
    }
    const start = Number(raw);
    if (start > seconds(now()) - 60) {
      throw new FakeHttpError(
        400,
        'Too recent start_time. Use a start_time older than 1 minute',
        'InvalidValue',
      );
    }
    return start;
  }

  function perPageOf(ctx: Context, resource: string): number {
    const raw = ctx.query.per_page;
    const perPage = raw === undefined || raw === '' ? EXPORT_MAX : Number(raw);
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > EXPORT_MAX) {
      throw new FakeHttpError(
        400,
        `per_page must be between 1 and ${EXPORT_MAX}`,
        'InvalidPaginationParameter',
      );
    }
    fake.logListing(ctx, { object: resource, pageSize: perPage, maxPageSize: EXPORT_MAX });
    return perPage;
  }

  /**
   * What an export can show now, in export order (second, then id): versions visible by now and
   * older than the most recent minute; deleted tickets unless `exclude_deleted`; deleted users (as
   * inactive); never deleted organizations.
   */
  function exportable(ctx: Context, resource: Resource): Row[] {
    const horizon = seconds(now()) - 60;
    const excludeDeleted = ctx.query.exclude_deleted === 'true';
    return [...stores[resource].rows.values()]
      .filter(
        (row) =>
          exportSecond(row) < horizon &&
          (row.visibleFromMs ?? row.modifiedMs) <= now() &&
          (!row.deleted || (resource === 'tickets' ? !excludeDeleted : resource === 'users')),
      )
      .sort((a, b) => exportSecond(a) - exportSecond(b) || a.record.id - b.record.id);
  }

  const exported = (resource: Resource, row: Row): ZendeskRecord =>
    row.deleted && resource === 'tickets'
      ? { ...shaped(resource, row), status: 'deleted' }
      : shaped(resource, row);

  // Cursor-based incremental exports: tickets and users.
  router.get('/api/v2/incremental/:resource/:mode', (ctx) => {
    const resource = resourceOf(ctx.params.resource);
    if (bare(ctx.params.mode) !== 'cursor' || resource === 'organizations') throw notFound();
    countExport(ctx, resource === 'users' ? 'incremental-exports-cursor' : 'incremental-exports');
    const perPage = perPageOf(ctx, resource);
    const cursor =
      typeof ctx.query.cursor === 'string' && ctx.query.cursor !== '' ? ctx.query.cursor : undefined;
    let after: (row: Row) => boolean;
    if (cursor) {
      const [sec, id] = decodeCursor(cursor);
      after = (row) => exportSecond(row) > sec || (exportSecond(row) === sec && row.record.id > id);
    } else {
      const start = startTimeOf(ctx);
      after = (row) => exportSecond(row) >= start;
    }
    const listed = exportable(ctx, resource).filter(after);
    const page = listed.slice(0, perPage);
    const last = page.at(-1);
    const afterCursor = last ? encodeCursor(exportSecond(last), last.record.id) : (cursor ?? null);
    const beforeCursor =
      cursor && page.length ? encodeCursor(exportSecond(page[0]), page[0].record.id) : null;
    const base = `${origin(ctx)}/api/v2/incremental/${resource}/cursor.json`;
    const link = (value: string) =>
      `${base}?cursor=${encodeURIComponent(value)}&per_page=${perPage}` +
      (ctx.query.exclude_deleted === 'true' ? '&exclude_deleted=true' : '');
    ctx.body = {
      [resource]: page.map((row) => exported(resource, row)),
      after_url: afterCursor ? link(afterCursor) : null,
      after_cursor: afterCursor,
      before_url: beforeCursor ? link(beforeCursor) : null,
      before_cursor: beforeCursor,
      end_of_stream: listed.length <= perPage,
    };
  });

  // Time-based incremental exports: tickets, users and organizations.
  router.get('/api/v2/incremental/:file', (ctx) => {
    const resource = resourceOf(bare(ctx.params.file));
    countExport(ctx, 'incremental-exports');
    const perPage = perPageOf(ctx, resource);
    const start = startTimeOf(ctx);
    const listed = exportable(ctx, resource).filter((row) => exportSecond(row) >= start);
    let end = Math.min(perPage, listed.length);
    // A page never splits the items of one second: it goes on past per_page to the last of them.
    while (end > 0 && end < listed.length && exportSecond(listed[end]) === exportSecond(listed[end - 1]))
      end++;
    const page = listed.slice(0, end);
    const endTime = page.length ? exportSecond(page.at(-1)!) : start;
    ctx.body = {
      [resource]: page.map((row) => exported(resource, row)),
      count: page.length,
      end_time: endTime,
      next_page:
        `${origin(ctx)}/api/v2/incremental/${resource}.json?per_page=${perPage}&start_time=${endTime}` +
        (ctx.query.exclude_deleted === 'true' ? '&exclude_deleted=true' : ''),
      end_of_stream: end >= listed.length,
    };
  });

  /** A list page: cursor pages with `page[size]`, offset pages without. */
  function listPage(ctx: Context, object: string, rows: ZendeskRecord[], path: string) {
    const size = ctx.query['page[size]'];
    if (size === undefined) {
      const perPage = ctx.query.per_page === undefined ? LIST_MAX : Number(ctx.query.per_page);
      const pageNumber = ctx.query.page === undefined ? 1 : Number(ctx.query.page);
      if (
        !Number.isInteger(perPage) ||
        perPage < 1 ||
        perPage > LIST_MAX ||
        !Number.isInteger(pageNumber) ||
        pageNumber < 1
      ) {
        throw new FakeHttpError(
          400,
          `per_page must be between 1 and ${LIST_MAX}`,
          'InvalidPaginationParameter',
        );
      }
      fake.logListing(ctx, { object, pageSize: perPage, maxPageSize: LIST_MAX });
      if (pageNumber * perPage > OFFSET_RECORD_LIMIT) {
        throw new FakeHttpError(
          400,
          'Offset pagination is limited to the first 10,000 records. Use cursor pagination instead.',
          'InvalidPaginationParameter',
        );
      }
      const page = rows.slice((pageNumber - 1) * perPage, pageNumber * perPage);
      const at = (n: number) => `${origin(ctx)}${path}?page=${n}&per_page=${perPage}`;
      ctx.body = {
        [object]: page,
        next_page: pageNumber * perPage < rows.length ? at(pageNumber + 1) : null,
        previous_page: pageNumber > 1 ? at(pageNumber - 1) : null,
        count: rows.length,
      };
      return;
    }
    const pageSize = Number(size);
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > LIST_MAX) {
      throw new FakeHttpError(
        400,
        `page[size] must be between 1 and ${LIST_MAX}`,
        'InvalidPaginationParameter',
      );
    }
    fake.logListing(ctx, { object, pageSize, maxPageSize: LIST_MAX });
    const afterRaw = ctx.query['page[after]'];
    const beforeRaw = ctx.query['page[before]'];
    let window: ZendeskRecord[];
    if (typeof beforeRaw === 'string') {
      const beforeId = decodeListCursor(beforeRaw);
      window = rows.filter((row) => row.id < beforeId).slice(-pageSize);
    } else {
      const afterId = typeof afterRaw === 'string' ? decodeListCursor(afterRaw) : undefined;
      window = rows.filter((row) => afterId === undefined || row.id > afterId).slice(0, pageSize);
    }
    const hasMore = window.length > 0 && rows.some((row) => row.id > window.at(-1)!.id);
    const after = window.length ? encodeListCursor(window.at(-1)!.id) : null;
    const before = window.length ? encodeListCursor(window[0].id) : null;
    const at = (key: string, cursor: string) =>
      `${origin(ctx)}${path}?page[size]=${pageSize}&page[${key}]=${cursor}`;
    ctx.body = {
      [object]: window,
      meta: { has_more: hasMore, after_cursor: after, before_cursor: before },
      links: {
        prev: before && rows.some((row) => row.id < window[0].id) ? at('before', before) : null,
        next: hasMore && after ? at('after', after) : null,
      },
    };
  }

  // Webhooks (zendeskSupport-webhooks.ts), before the routes that take any name.
  zendeskWebhookRoutes(router, now);

  router.get('/api/v2/:file', (ctx) => {
    const name = bare(ctx.params.file);
    if (Object.hasOwn(fieldLists, name)) {
      listPage(ctx, name, fieldLists[name] as ZendeskRecord[], `/api/v2/${name}.json`);
      return;
    }
    if (name === 'deleted_tickets') {
      const rows = [...deletedBy.entries()]
        .map(([id, deletion]) => ({ row: stores.tickets.rows.get(String(id)), deletion }))
        .filter(({ row }) => row?.deleted)
        .map(({ row, deletion }) => ({
          id: row!.record.id,
          subject: row!.record.subject,
          description: row!.record.description,
          actor: { id: 9001, name: 'Admin' },
          deleted_at: deletion.deleted_at,
          previous_state: deletion.previous_state,
        }));
      listPage(ctx, name, rows, '/api/v2/deleted_tickets.json');
      return;
    }
    if (name === 'deleted_users') {
      const rows = stores.users.removed().map((row) => shaped('users', row));
      listPage(ctx, name, rows, '/api/v2/deleted_users.json');
      return;
    }
    const resource = resourceOf(name);
    // Closed tickets are archived 120 days after their last change: lists leave them out.
    const archived = (row: Row) =>
      resource === 'tickets' && row.record.status === 'closed' && row.modifiedMs < now() - 120 * 86_400_000;
    const rows = stores[resource]
      .live()
      .filter((row) => !archived(row))
      .sort((a, b) => a.record.id - b.record.id)
      .map((row) => shaped(resource, row));
    listPage(ctx, resource, rows, `/api/v2/${resource}.json`);
  });

  router.get('/api/v2/:resource/:file', (ctx) => {
    const resource = resourceOf(ctx.params.resource);
    ctx.body = { [resources[resource]]: shaped(resource, reachable(resource, idOf(ctx.params.file))) };
  });

  router.post('/api/v2/:file', (ctx) => {
    const resource = resourceOf(bare(ctx.params.file));
    const key = resource === 'tickets' ? ctx.get('idempotency-key') : '';
    const body = JSON.stringify(ctx.request.body ?? null);
    const seen = key ? idempotent.get(key) : undefined;
    if (seen) {
      if (seen.body !== body) {
        throw new FakeHttpError(
          400,
          'Request parameters do not match the original request',
          'IdempotentRequestError',
        );
      }
      ctx.set('x-idempotency-lookup', 'hit');
      ctx.status = seen.status;
      ctx.body = seen.answer;
      return;
    }
    const row = create(resource, writeValues(resource, ctx.request.body), now(), origin(ctx));
    ctx.status = 201;
    ctx.set('Location', `${origin(ctx)}/api/v2/${resource}/${row.record.id}.json`);
    ctx.body = {
      [resources[resource]]: shaped(resource, row),
      ...(resource === 'tickets' && { audit: { id: nextId++, ticket_id: row.record.id, events: [] } }),
    };
    if (key) {
      ctx.set('x-idempotency-lookup', 'miss');
      idempotent.set(key, { body, status: 201, answer: ctx.body });
    }
  });

  router.put('/api/v2/:resource/:file', (ctx) => {
    const resource = resourceOf(ctx.params.resource);
    const row = reachable(resource, idOf(ctx.params.file));
    if (row.deleted) throw notFound();
    apply(resource, row.record, writeValues(resource, ctx.request.body, row.record));
    stamp(row, now());
    ctx.body = {
      [resources[resource]]: shaped(resource, row),
      ...(resource === 'tickets' && { audit: { id: nextId++, ticket_id: row.record.id, events: [] } }),
    };
  });

  function remove(resource: Resource, row: Row, atMs: number) {
    const previous = String(row.record.status);
    stores[resource].remove(String(row.record.id), wholeSecond(atMs));
    stamp(row, atMs);
    if (resource === 'tickets')
      deletedBy.set(row.record.id, { deleted_at: zendeskTime(atMs), previous_state: previous });
    // A user's delete is soft: the user stays, inactive.
    if (resource === 'users') row.record.active = false;
  }

  router.delete('/api/v2/:resource/:file', (ctx) => {
    const resource = resourceOf(ctx.params.resource);
    const row = reachable(resource, idOf(ctx.params.file));
    if (row.deleted) throw notFound();
    remove(resource, row, now());
    if (resource === 'users') {
      ctx.body = { user: shaped('users', row) };
      return;
    }
    if (resource === 'organizations') {
      // An organization's delete is permanent: nothing lists it again.
      stores.organizations.rows.delete(String(row.record.id));
    }
    ctx.status = 204;
  });

  await fake.start();

  const rowOf = (object: string, id: string): Row => {
    const row = stores[resourceOf(object)].rows.get(id);
    if (!row) throw new Error(`no ${object} ${id}`);
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
    seed(object, modifiedTimes) {
      const resource = resourceOf(object);
      return modifiedTimes.map((ms) => {
        const values: Record<string, unknown> =
          resource === 'tickets'
            ? { subject: `Ticket ${nextId}`, description: 'Seeded', status: 'open' }
            : resource === 'users'
              ? { name: `User ${nextId}`, email: `user${nextId}@example.com` }
              : { name: `Organization ${nextId}` };
        const row = create(resource, values, ms, fake.url);
        return String(row.record.id);
      });
    },
    touch(object, id, modifiedMs, options) {
      // Deleted rows too: a deletion can be dated like any change.
      stamp(rowOf(object, id), modifiedMs, { visibleFromMs: options?.visibleFromMs });
    },
    systemUpdate(ticketId, atMs) {
      stamp(rowOf('tickets', ticketId), atMs, { system: true });
    },
    remove(object, id, atMs) {
      const resource = resourceOf(object);
      const row = rowOf(object, id);
      if (row.deleted) return;
      remove(resource, row, atMs);
      if (resource === 'organizations') stores.organizations.rows.delete(id);
    },
    stored(object, id) {
      return stores[resourceOf(object)].get(id)?.record;
    },
    stop: () => fake.stop(),
  };
}

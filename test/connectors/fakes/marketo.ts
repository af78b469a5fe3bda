import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  asConformanceFake,
  bearerCredential,
  FakeHttpError,
  FakeProvider,
  RequestWindow,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for Marketo's REST API (Lead Database), written from Adobe's reference
 * (https://experienceleague.adobe.com/en/docs/marketo-developer/marketo/rest/lead-database/leads,
 * .../lead-database/activities, .../rest/error-codes, and the endpoint reference
 * https://developer.adobe.com/marketo-apis/api/mapi):
 *
 * - Every answer is JSON `{requestId, success, result?, errors?, warnings?}`. An API error is not
 *   an HTTP status: it answers HTTP 200 with `success: false` and `errors: [{code, message}]`, the
 *   code a string: 600 empty access token, 601 invalid, 602 expired, 606 rate limit (100 calls per
 *   20 seconds), 610 resource not found, 1003 invalid data, 1004 lead not found, 1005 lead already
 *   exists, 1006 field not found. Access tokens go as `Authorization: Bearer` (the `access_token`
 *   query parameter is no longer accepted).
 * - Leads: `GET /rest/v1/leads.json?filterType=&filterValues=` (both required, up to 300 values;
 *   `filterType` one of the searchable fields, not `updatedAt`; more than 1000 matches is error
 *   1003), `fields` (comma list; default email, updatedAt, createdAt, lastName, firstName, id; a
 *   field without a value is left out of the record), `batchSize` ≤ 300 (default 300), an opaque
 *   `nextPageToken` when more follow. `GET /rest/v1/lead/{id}.json` (an unknown id: an empty
 *   `result`). Times ISO 8601 UTC to the second (`2024-01-01T00:00:00Z`).
 * - Writes: `POST /rest/v1/leads.json` `{action: createOnly|updateOnly|createOrUpdate (default),
 *   lookupField (default email), input: [...]}` (≤ 300): `success: true` with one result per input,
 *   `{id, status: created|updated}` or `{status: "skipped", reasons: [{code, message}]}` (a lead
 *   that exists, one not found, an unknown or read-only field). `POST /rest/v1/leads/delete.json`
 *   (or `DELETE /rest/v1/leads.json`) `{input: [{id}]}` → `{id, status: "deleted"}`.
 * - Fields: `GET /rest/v1/leads/describe.json` (`{id, displayName, dataType, length, rest: {name,
 *   readOnly}, soap}`), `describe2.json` (`{name, searchableFields, fields: [{name, displayName,
 *   dataType, length, updateable, crmManaged}]}`) and `/rest/v1/leads/schema/fields.json` (`{name,
 *   displayName, dataType, length, isHidden, isHtmlEncodingInEmail, isSensitive, isCustom,
 *   isApiCreated}`): only the last says which fields are custom; none says which are required.
 * - Changes: no listing filters leads by time. `GET /rest/v1/activities/pagingtoken.json?
 *   sinceDatetime=` gives a `nextPageToken` at that time (activities at or after it, to the second),
 *   which `GET /rest/v1/activities.json?activityTypeIds=` (required, ≤ 10; `leadIds` ≤ 30),
 *   `/activities/leadchanges.json?fields=` (required: New Lead (12) and Change Data Value (13)
 *   activities, the latter only for the fields named, each with `fields: [{id, name, newValue,
 *   oldValue}]`) and `/activities/deletedleads.json` (Delete Lead (37); deletions older than 14 days
 *   may be pruned) page through, `batchSize` ≤ 300. Every page answers a `nextPageToken` and
 *   `moreResult`; the token of the last page continues later with newer activities. Marketo scans
 *   its activity log a stretch at a time: a page may hold fewer records than asked, even none, with
 *   `moreResult: true`, and an empty page leaves `result` out. Activities are listed in the order
 *   Marketo records them, so one committed late follows those recorded before it. Deleting a lead
 *   deletes its activities (its Delete Lead activity stays).
 * - Activities never change and are not deleted by users: `touch` on an activity stands for a new
 *   one recorded in its place (same id, new date), `remove` for one that expired.
 */

type Lead = Record<string, unknown> & { id: number };
type Activity = {
  id: number;
  marketoGUID: string;
  leadId: number;
  activityDate: string;
  activityTypeId: number;
  primaryAttributeValueId?: number;
  primaryAttributeValue?: string;
  attributes: { name: string; value: unknown }[];
  fields?: { id: number; name: string; newValue: unknown; oldValue: unknown }[];
};
/** An activity in the log: listed in `order` (when it became visible, then when it was recorded). */
type Logged = { activity: Activity; visibleMs: number; seq: number };

const PAGE_MAX = 300;
const FILTER_VALUES_MAX = 300;
const FILTER_MATCHES_MAX = 1000;
const ACTIVITY_TYPES_MAX = 10;
const LEAD_IDS_MAX = 30;
const RATE_CALLS = 100;
const RATE_WINDOW_MS = 20_000;
/** How many log entries one activities page scans, whatever its filter keeps. */
const SCAN_STRETCH = 300;
const DELETION_RETENTION_MS = 14 * 86_400_000;
const NEW_LEAD = 12;
const CHANGE_DATA_VALUE = 13;
const DELETE_LEAD = 37;
/** The types a seeded activity cycles through: Visit Webpage, Fill Out Form, Open Email, Click Email. */
const SEEDED_TYPES = [1, 2, 10, 11];
const DEFAULT_FIELDS = ['email', 'updatedAt', 'createdAt', 'lastName', 'firstName', 'id'];

interface LeadField {
  id: number;
  name: string;
  displayName: string;
  dataType: string;
  length?: number;
  readOnly: boolean;
  custom: boolean;
  searchable: boolean;
}
const leadFields: LeadField[] = [
  {
    id: 1,
    name: 'id',
    displayName: 'Id',
    dataType: 'integer',
    readOnly: true,
    custom: false,
    searchable: true,
  },
  {
    id: 2,
    name: 'email',
    displayName: 'Email Address',
    dataType: 'email',
    length: 255,
    readOnly: false,
    custom: false,
    searchable: true,
  },
  {
    id: 3,
    name: 'firstName',
    displayName: 'First Name',
    dataType: 'string',
    length: 255,
    readOnly: false,
    custom: false,
    searchable: false,
  },
  {
    id: 4,
    name: 'lastName',
    displayName: 'Last Name',
    dataType: 'string',
    length: 255,
    readOnly: false,
    custom: false,
    searchable: false,
  },
  {
    id: 5,
    name: 'company',
    displayName: 'Company Name',
    dataType: 'string',
    length: 255,
    readOnly: false,
    custom: false,
    searchable: true,
  },
  {
    id: 6,
    name: 'title',
    displayName: 'Job Title',
    dataType: 'string',
    length: 255,
    readOnly: false,
    custom: false,
    searchable: false,
  },
  {
    id: 7,
    name: 'phone',
    displayName: 'Phone Number',
    dataType: 'phone',
    length: 255,
    readOnly: false,
    custom: false,
    searchable: false,
  },
  {
    id: 8,
    name: 'leadSource',
    displayName: 'Person Source',
    dataType: 'string',
    length: 255,
    readOnly: false,
    custom: false,
    searchable: true,
  },
  {
    id: 9,
    name: 'leadScore',
    displayName: 'Lead Score',
    dataType: 'integer',
    readOnly: false,
    custom: false,
    searchable: false,
  },
  {
    id: 10,
    name: 'accountTier',
    displayName: 'Account Tier',
    dataType: 'string',
    length: 255,
    readOnly: false,
    custom: true,
    searchable: true,
  },
  {
    id: 11,
    name: 'createdAt',
    displayName: 'Created At',
    dataType: 'datetime',
    readOnly: true,
    custom: false,
    searchable: false,
  },
  {
    id: 12,
    name: 'updatedAt',
    displayName: 'Updated At',
    dataType: 'datetime',
    readOnly: true,
    custom: false,
    searchable: false,
  },
];
const fieldByName = new Map(leadFields.map((field) => [field.name, field]));

const wholeSecond = (ms: number) => Math.floor(ms / 1000) * 1000;
const marketoTime = (ms: number) => new Date(wholeSecond(ms)).toISOString().replace('.000Z', 'Z');
const requestId = () => `${randomBytes(3).toString('hex')}#${randomBytes(5).toString('hex')}`;

/** An API error: HTTP 200 with `success: false`, as Marketo answers them. */
const apiError = (code: string, message: string) => new FakeHttpError(200, message, code);

const encodeToken = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
function decodeToken<T>(text: unknown): T {
  try {
    return JSON.parse(Buffer.from(String(text), 'base64url').toString('utf8')) as T;
  } catch {
    throw apiError('1003', `Invalid nextPageToken '${String(text)}'`);
  }
}

const listOf = (value: unknown) =>
  value === undefined
    ? []
    : String(Array.isArray(value) ? value.join(',') : value)
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);

export async function startFakeMarketo(): Promise<ConformanceFake> {
  const leads = new Map<string, { lead: Lead; modifiedMs: number }>();
  const log: Logged[] = [];
  let nextLeadId = 1001;
  let nextActivityId = 5001;
  let seq = 0;
  const budget = new RequestWindow(RATE_CALLS, RATE_WINDOW_MS, false);

  const fake: FakeProvider = new FakeProvider({
    // Checked by the routes instead: Marketo answers a bad token with HTTP 200 and code 601/602.
    credentialOf: (): string => fake.credential,
    errorBody: (error) => ({
      requestId: requestId(),
      success: false,
      errors: [
        {
          code:
            error.code ??
            (error.status === 429
              ? '606'
              : error.status >= 500
                ? '608'
                : error.status === 404
                  ? '610'
                  : '1003'),
          message:
            error.status === 429
              ? `Max rate limit '${RATE_CALLS}' exceeded with in '${RATE_WINDOW_MS / 1000}' secs`
              : error.status >= 500 && !error.code
                ? 'API Temporarily Unavailable'
                : error.message,
        },
      ],
    }),
    rateLimitCode: '606',
  });
  const now = () => fake.now();
  const router = fake.router;

  router.use(async (ctx, next) => {
    const token = bearerCredential(ctx);
    if (!token) throw apiError('600', 'Access token not specified');
    if (token !== fake.credential) {
      throw /^valid-credential-\d+$/.test(token)
        ? apiError('602', 'Access token expired')
        : apiError('601', 'Access token invalid');
    }
    // 100 calls per 20 seconds per instance, on the fake's own (real) time.
    const taken = budget.take();
    if (!taken.allowed)
      throw apiError(
        '606',
        `Max rate limit '${RATE_CALLS}' exceeded with in '${RATE_WINDOW_MS / 1000}' secs`,
      );
    await next();
  });

  const ok = (ctx: Context, result?: unknown[], extra: Record<string, unknown> = {}) => {
    ctx.body = { requestId: requestId(), success: true, ...(result && { result }), ...extra };
  };

  // Activities.

  const record = (
    activity: Omit<Activity, 'id' | 'marketoGUID' | 'activityDate'>,
    atMs: number,
    visibleMs = atMs,
  ): Activity => {
    const id = nextActivityId++;
    const full: Activity = { id, marketoGUID: String(id), activityDate: marketoTime(atMs), ...activity };
    log.push({ activity: full, visibleMs: Math.max(atMs, visibleMs), seq: seq++ });
    return full;
  };
  const nameOf = (lead: Lead) => [lead.firstName, lead.lastName].filter(Boolean).join(' ');
  const newLeadActivity = (lead: Lead, atMs: number) =>
    record(
      {
        leadId: lead.id,
        activityTypeId: NEW_LEAD,
        primaryAttributeValue: nameOf(lead),
        attributes: [
          { name: 'Source Type', value: 'Web service API' },
          { name: 'Created Date', value: marketoTime(atMs).slice(0, 10) },
        ],
      },
      atMs,
    );
  const changeActivity = (lead: Lead, field: string, oldValue: unknown, atMs: number, visibleMs?: number) => {
    const described = fieldByName.get(field)!;
    return record(
      {
        leadId: lead.id,
        activityTypeId: CHANGE_DATA_VALUE,
        primaryAttributeValueId: described.id,
        primaryAttributeValue: described.displayName,
        attributes: [
          { name: 'New Value', value: lead[field] },
          { name: 'Old Value', value: oldValue },
          { name: 'Reason', value: 'Web service API' },
          { name: 'Source', value: 'Web service API' },
        ],
        fields: [{ id: described.id, name: field, newValue: lead[field], oldValue }],
      },
      atMs,
      visibleMs,
    );
  };

  /** A paging position: after this log entry (visible time, then record order). */
  type Position = { visibleMs: number; seq: number };
  const after = (entry: Logged, position: Position) =>
    entry.visibleMs > position.visibleMs ||
    (entry.visibleMs === position.visibleMs && entry.seq > position.seq);
  const ordered = () => [...log].sort((a, b) => a.visibleMs - b.visibleMs || a.seq - b.seq);

  router.get('/rest/v1/activities/pagingtoken.json', (ctx) => {
    const text = ctx.query.sinceDatetime;
    if (text === undefined) throw apiError('1003', 'sinceDatetime cannot be blank');
    const raw = String(text);
    const since = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(raw) ? `${raw}T00:00:00Z` : raw);
    if (Number.isNaN(since)) throw apiError('1003', `Invalid sinceDatetime '${raw}'`);
    ok(ctx, undefined, { nextPageToken: encodeToken({ visibleMs: wholeSecond(since), seq: -1 }) });
  });

  /** One page of the activity log from the token, kept by `keep`. */
  const activityPage = (ctx: Context, object: string, keep: (entry: Logged) => boolean) => {
    if (ctx.query.nextPageToken === undefined) throw apiError('1003', 'nextPageToken cannot be blank');
    const position = decodeToken<Position>(ctx.query.nextPageToken);
    const size = ctx.query.batchSize === undefined ? PAGE_MAX : Number(ctx.query.batchSize);
    if (!Number.isInteger(size) || size < 1 || size > PAGE_MAX)
      throw apiError(
        '1003',
        `Invalid batchSize '${String(ctx.query.batchSize)}', must be between 1 and ${PAGE_MAX}`,
      );
    fake.logListing(ctx, { object, pageSize: size, maxPageSize: PAGE_MAX });
    const pending = ordered().filter((entry) => entry.visibleMs <= now() && after(entry, position));
    const result: Activity[] = [];
    let last: Position = position;
    let scanned = 0;
    for (const entry of pending) {
      if (result.length === size || scanned === SCAN_STRETCH) break;
      scanned++;
      last = { visibleMs: entry.visibleMs, seq: entry.seq };
      if (keep(entry)) result.push(entry.activity);
    }
    ok(ctx, result.length ? result : undefined, {
      nextPageToken: encodeToken(last),
      moreResult: scanned < pending.length,
    });
  };

  router.get('/rest/v1/activities.json', (ctx) => {
    const types = listOf(ctx.query.activityTypeIds).map(Number);
    if (!types.length) throw apiError('1003', 'activityTypeIds cannot be blank');
    if (types.length > ACTIVITY_TYPES_MAX || types.some((type) => !Number.isInteger(type)))
      throw apiError('1003', `Invalid activityTypeIds, at most ${ACTIVITY_TYPES_MAX} type ids`);
    const leadIds = listOf(ctx.query.leadIds).map(Number);
    if (leadIds.length > LEAD_IDS_MAX) throw apiError('1003', `At most ${LEAD_IDS_MAX} leadIds`);
    activityPage(
      ctx,
      'activities',
      ({ activity }) =>
        types.includes(activity.activityTypeId) && (!leadIds.length || leadIds.includes(activity.leadId)),
    );
  });

  router.get('/rest/v1/activities/leadchanges.json', (ctx) => {
    const fields = listOf(ctx.query.fields);
    if (!fields.length) throw apiError('1003', 'fields cannot be blank');
    const unknown = fields.find((field) => !fieldByName.has(field));
    if (unknown) throw apiError('1006', `Field '${unknown}' not found`);
    activityPage(
      ctx,
      'leads',
      ({ activity }) =>
        activity.activityTypeId === NEW_LEAD ||
        (activity.activityTypeId === CHANGE_DATA_VALUE && fields.includes(activity.fields![0].name)),
    );
  });

  router.get('/rest/v1/activities/deletedleads.json', (ctx) => {
    activityPage(
      ctx,
      'leads',
      ({ activity }) =>
        activity.activityTypeId === DELETE_LEAD &&
        Date.parse(activity.activityDate) >= now() - DELETION_RETENTION_MS,
    );
  });

  router.get('/rest/v1/activities/types.json', (ctx) =>
    ok(
      ctx,
      [
        [1, 'Visit Webpage'],
        [2, 'Fill Out Form'],
        [10, 'Open Email'],
        [11, 'Click Email'],
        [NEW_LEAD, 'New Lead'],
        [CHANGE_DATA_VALUE, 'Change Data Value'],
        [DELETE_LEAD, 'Delete Lead'],
      ].map(([id, name]) => ({
        id,
        name,
        description: String(name),
        primaryAttribute: { name: 'Lead ID', dataType: 'integer' },
      })),
    ),
  );

  // Leads.

  const present = (lead: Lead, fields: string[]) =>
    Object.fromEntries(
      fields
        .filter((field) => lead[field] !== undefined && lead[field] !== null)
        .map((field) => [field, lead[field]]),
    ) as Lead;
  const fieldsOf = (ctx: Context) => {
    const fields = ctx.query.fields === undefined ? DEFAULT_FIELDS : listOf(ctx.query.fields);
    const unknown = fields.find((field) => !fieldByName.has(field));
    if (unknown) throw apiError('1006', `Field '${unknown}' not found`);
    return fields.includes('id') ? fields : ['id', ...fields];
  };

  router.get('/rest/v1/leads.json', (ctx) => {
    const filterType = ctx.query.filterType === undefined ? undefined : String(ctx.query.filterType);
    if (!filterType) throw apiError('1003', 'filterType cannot be blank');
    if (!fieldByName.get(filterType)?.searchable)
      throw apiError('1003', `Invalid filterType '${filterType}'`);
    const values = listOf(ctx.query.filterValues);
    if (!values.length) throw apiError('1003', 'filterValues cannot be blank');
    if (values.length > FILTER_VALUES_MAX)
      throw apiError('1003', `At most ${FILTER_VALUES_MAX} filterValues`);
    const size = ctx.query.batchSize === undefined ? PAGE_MAX : Number(ctx.query.batchSize);
    if (!Number.isInteger(size) || size < 1 || size > PAGE_MAX)
      throw apiError(
        '1003',
        `Invalid batchSize '${String(ctx.query.batchSize)}', must be between 1 and ${PAGE_MAX}`,
      );
    fake.logListing(ctx, { object: 'leads', pageSize: size, maxPageSize: PAGE_MAX });
    const fields = fieldsOf(ctx);
    const matches = [...leads.values()]
      .filter(({ lead }) => values.includes(String(lead[filterType])))
      .sort((a, b) => a.lead.id - b.lead.id);
    if (matches.length > FILTER_MATCHES_MAX) throw apiError('1003', 'Too many results match the filter');
    const offset =
      ctx.query.nextPageToken === undefined
        ? 0
        : decodeToken<{ offset: number }>(ctx.query.nextPageToken).offset;
    const page = matches.slice(offset, offset + size);
    ok(
      ctx,
      page.map(({ lead }) => present(lead, fields)),
      offset + size < matches.length ? { nextPageToken: encodeToken({ offset: offset + size }) } : {},
    );
  });

  router.get('/rest/v1/lead/:file', (ctx) => {
    const id = /^(\d+)\.json$/.exec(ctx.params.file)?.[1];
    if (!id) throw new FakeHttpError(404, 'Requested resource not found', '610');
    const row = leads.get(id);
    ok(ctx, row ? [present(row.lead, fieldsOf(ctx))] : []);
  });

  const createLead = (values: Record<string, unknown>, atMs: number): Lead => {
    const id = nextLeadId++;
    const lead: Lead = { ...values, id, createdAt: marketoTime(atMs), updatedAt: marketoTime(atMs) };
    leads.set(String(id), { lead, modifiedMs: wholeSecond(atMs) });
    newLeadActivity(lead, atMs);
    return lead;
  };
  const updateLead = (lead: Lead, values: Record<string, unknown>, atMs: number, visibleMs?: number) => {
    for (const [field, value] of Object.entries(values)) {
      if (field === 'id' || lead[field] === value) continue;
      const old = lead[field] ?? null;
      lead[field] = value;
      changeActivity(lead, field, old, atMs, visibleMs);
    }
    lead.updatedAt = marketoTime(atMs);
    leads.get(String(lead.id))!.modifiedMs = wholeSecond(atMs);
  };
  const deleteLead = (lead: Lead, atMs: number) => {
    leads.delete(String(lead.id));
    // A deleted lead's activity history goes with it.
    for (let index = log.length - 1; index >= 0; index--)
      if (log[index].activity.leadId === lead.id) log.splice(index, 1);
    record(
      {
        leadId: lead.id,
        activityTypeId: DELETE_LEAD,
        primaryAttributeValue: nameOf(lead),
        attributes: [{ name: 'Remove from CRM', value: false }],
      },
      atMs,
    );
  };

  type Outcome = { id?: number; status: string; reasons?: { code: string; message: string }[] };
  const skipped = (code: string, message: string): Outcome => ({
    status: 'skipped',
    reasons: [{ code, message }],
  });

  router.post('/rest/v1/leads.json', (ctx) => {
    const body = (ctx.request.body ?? {}) as { action?: string; lookupField?: string; input?: unknown };
    const action = body.action ?? 'createOrUpdate';
    if (!['createOnly', 'updateOnly', 'createOrUpdate', 'createDuplicate'].includes(action))
      throw apiError('1003', `Invalid action '${action}'`);
    const lookupField = body.lookupField ?? 'email';
    if (!fieldByName.get(lookupField)?.searchable)
      throw apiError('1003', `Invalid lookupField '${lookupField}'`);
    if (!Array.isArray(body.input) || !body.input.length) throw apiError('1003', 'input cannot be blank');
    if (body.input.length > PAGE_MAX) throw apiError('1003', `At most ${PAGE_MAX} records in input`);
    const at = now();
    const result = (body.input as Record<string, unknown>[]).map((input): Outcome => {
      for (const field of Object.keys(input)) {
        const described = fieldByName.get(field);
        if (!described) return skipped('1006', `Field '${field}' not found`);
        if (described.readOnly && !(field === 'id' && lookupField === 'id'))
          return skipped('1006', `Field '${field}' is not updateable`);
      }
      const lookup = input[lookupField];
      const existing =
        lookup === undefined
          ? undefined
          : [...leads.values()].find(({ lead }) => String(lead[lookupField]) === String(lookup))?.lead;
      if (existing && action !== 'createDuplicate') {
        if (action === 'createOnly') return skipped('1005', 'Lead already exists');
        updateLead(existing, input, at);
        return { id: existing.id, status: 'updated' };
      }
      if (action === 'updateOnly') return skipped('1004', 'Lead not found');
      if (lookupField === 'id') return skipped('1006', "Field 'id' is not updateable");
      return { id: createLead(input, at).id, status: 'created' };
    });
    ok(ctx, result);
  });

  const deleteInput = (ctx: Context) => {
    const body = (ctx.request.body ?? {}) as { input?: { id?: unknown }[] };
    const ids = Array.isArray(body.input) ? body.input.map((item) => String(item?.id)) : listOf(ctx.query.id);
    if (!ids.length) throw apiError('1003', 'input cannot be blank');
    if (ids.length > PAGE_MAX) throw apiError('1003', `At most ${PAGE_MAX} records in input`);
    ok(
      ctx,
      ids.map((id): Outcome => {
        const row = leads.get(id);
        if (!row) return { id: Number(id), ...skipped('1004', 'Lead not found') };
        deleteLead(row.lead, now());
        return { id: Number(id), status: 'deleted' };
      }),
    );
  };
  router.post('/rest/v1/leads/delete.json', deleteInput);
  router.delete('/rest/v1/leads.json', deleteInput);

  router.get('/rest/v1/leads/describe.json', (ctx) =>
    ok(
      ctx,
      leadFields.map((field) => ({
        id: field.id,
        displayName: field.displayName,
        dataType: field.dataType,
        ...(field.length && { length: field.length }),
        rest: { name: field.name, readOnly: field.readOnly },
        soap: { name: field.name.charAt(0).toUpperCase() + field.name.slice(1), readOnly: field.readOnly },
      })),
    ),
  );
  router.get('/rest/v1/leads/describe2.json', (ctx) =>
    ok(ctx, [
      {
        name: 'API Lead',
        searchableFields: leadFields.filter((field) => field.searchable).map((field) => [field.name]),
        fields: leadFields.map((field) => ({
          name: field.name,
          displayName: field.displayName,
          dataType: field.dataType,
          ...(field.length && { length: field.length }),
          updateable: !field.readOnly,
          crmManaged: false,
        })),
      },
    ]),
  );
  router.get('/rest/v1/leads/schema/fields.json', (ctx) =>
    ok(
      ctx,
      leadFields.map((field) => ({
        name: field.name,
        displayName: field.displayName,
        dataType: field.dataType,
        ...(field.length && { length: field.length }),
        isHidden: false,
        isHtmlEncodingInEmail: false,
        isSensitive: false,
        isCustom: field.custom,
        isApiCreated: field.custom,
      })),
    ),
  );

  await fake.start();

  // The lead seeded activities belong to.
  const visitor = createLead(
    { email: 'visitor@example.com', firstName: 'Web', lastName: 'Visitor', company: 'Visitors' },
    Date.UTC(2023, 0, 1),
  );
  let seeded = 0;

  const activityOf = (id: string) => {
    const entry = log.find((logged) => logged.activity.marketoGUID === id);
    if (!entry) throw new Error(`no activity ${id}`);
    return entry;
  };
  const leadOf = (id: string) => {
    const row = leads.get(id);
    if (!row) throw new Error(`no lead ${id}`);
    return row.lead;
  };

  return asConformanceFake(fake, {
    seed: (object, times) =>
      times.map((ms) => {
        const n = ++seeded;
        if (object === 'activities') {
          const type = SEEDED_TYPES[n % SEEDED_TYPES.length];
          return record(
            {
              leadId: visitor.id,
              activityTypeId: type,
              primaryAttributeValueId: n,
              primaryAttributeValue: `asset-${n}`,
              attributes: [{ name: 'Client IP Address', value: '203.0.113.7' }],
            },
            ms,
          ).marketoGUID;
        }
        return String(
          createLead(
            {
              email: `lead${n}@example.com`,
              firstName: `First${n}`,
              lastName: `Last${n}`,
              company: `Org ${n}`,
              title: 'Buyer',
              phone: `+1 555 010 ${n}`,
              leadSource: 'Website',
              leadScore: n,
              accountTier: 'Gold',
            },
            ms,
          ).id,
        );
      }),
    touch(object, id, modifiedMs, options) {
      if (object === 'activities') {
        const entry = activityOf(id);
        entry.activity.activityDate = marketoTime(modifiedMs);
        entry.visibleMs = Math.max(modifiedMs, options?.visibleFromMs ?? modifiedMs);
        entry.seq = seq++;
        return;
      }
      const lead = leadOf(id);
      updateLead(lead, { title: `Title ${++seeded}` }, modifiedMs, options?.visibleFromMs);
    },
    remove(object, id, atMs) {
      if (object === 'activities') {
        log.splice(log.indexOf(activityOf(id)), 1);
        return;
      }
      deleteLead(leadOf(id), atMs);
    },
    stored: (object, id) =>
      object === 'activities'
        ? log.find((logged) => logged.activity.marketoGUID === id)?.activity
        : leads.get(id)?.lead,
  });
}

import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  basicUserCredential,
  bearerCredential,
  FakeHttpError,
  FakeProvider,
  type StoredRecord,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for Greenhouse's Harvest API v1 (https://developers.greenhouse.io/harvest.html),
 * written from its reference (authentication, pagination, throttling, candidates, applications,
 * jobs):
 *
 * - Auth: an OAuth access token (`Bearer`) or the Harvest API key as the Basic user name. Writes
 *   need `On-Behalf-Of: <user id>` naming a user of the organization (for the audit log); without
 *   one, or with an unknown user, the write is refused.
 * - Times ISO 8601 with milliseconds (`2017-09-29T12:56:05.244Z`).
 * - Lists: `per_page` 1 to 500 (default 100), `page` (from 1), a `Link` header with `next`,
 *   `prev` and `last` URLs (the query kept) while more follow; records in id order.
 *   Candidates and jobs: `created_before`, `created_after`, `updated_before` ("before": excluded),
 *   `updated_after` ("at or after": included); applications have no `updated_at` and filter by
 *   `last_activity_after` (included) instead.
 * - Candidates: `POST /v1/candidates` (201; `first_name`, `last_name` and at least one
 *   application `{job_id}` required), `PATCH /v1/candidates/{id}` (200, the candidate), `DELETE
 *   /v1/candidates/{id}` (200 `{message}`): a deleted candidate is gone, and no listing reveals
 *   deletions (applications and jobs likewise).
 * - Errors `{message}` or `{message: "Validation error", errors: [{message, field}]}`;
 *   `X-RateLimit-Limit`/`-Remaining` on answers (50 requests per 10 seconds), a 429 with
 *   `Retry-After`.
 */

type GreenhouseRecord = Record<string, unknown> & { id: number };
type Row = StoredRecord<GreenhouseRecord> & { createdMs: number };

const objects = ['candidates', 'applications', 'jobs'] as const;
type GreenhouseObject = (typeof objects)[number];
const PER_PAGE_MAX = 500;
const PER_PAGE_DEFAULT = 100;
const USERS = [4080, 4081];
const FIXTURE_JOB = 4001;
const candidateMembers = [
  'first_name',
  'last_name',
  'company',
  'title',
  'is_private',
  'phone_numbers',
  'addresses',
  'email_addresses',
  'website_addresses',
  'social_media_addresses',
  'educations',
  'employments',
  'tags',
  'custom_fields',
  'recruiter',
  'coordinator',
  'applications',
];
/** The list filters each object takes, and the time each compares. */
const filters: Record<GreenhouseObject, string[]> = {
  candidates: [
    'created_before',
    'created_after',
    'updated_before',
    'updated_after',
    'job_id',
    'email',
    'candidate_ids',
  ],
  applications: ['created_before', 'created_after', 'last_activity_after', 'job_id', 'status'],
  jobs: [
    'created_before',
    'created_after',
    'updated_before',
    'updated_after',
    'status',
    'department_id',
    'office_id',
  ],
};

const iso = (ms: number) => new Date(ms).toISOString();
const validation = (field: string, message: string) =>
  Object.assign(new FakeHttpError(422, 'Validation error', 'validation'), { errors: [{ message, field }] });

export async function startFakeGreenhouse(): Promise<ConformanceFake> {
  const stores: Record<GreenhouseObject, Map<number, Row>> = {
    candidates: new Map(),
    applications: new Map(),
    jobs: new Map(),
  };
  let nextId = 10_001;

  const fake: FakeProvider = new FakeProvider({
    credentialOf: (ctx) => bearerCredential(ctx) ?? basicUserCredential(ctx),
    errorBody: (error) => ({
      message:
        error.status === 401
          ? 'Invalid Basic Auth credentials'
          : error.status === 429
            ? 'Request limit exceeded. Please wait and try again.'
            : error.message,
      ...((error as { errors?: unknown }).errors !== undefined && {
        errors: (error as { errors?: unknown }).errors,
      }),
    }),
    rateLimitHeaders: () => ({
      'x-ratelimit-limit': '50',
      'x-ratelimit-remaining': '0',
      'retry-after': '10',
    }),
  });
  const now = () => fake.now();
  const router = fake.router;

  router.use(async (ctx, next) => {
    ctx.set('x-ratelimit-limit', '50');
    ctx.set('x-ratelimit-remaining', '49');
    await next();
  });

  /** The time a record's listing filters and modification time use. */
  const modifiedField = (object: GreenhouseObject) =>
    object === 'applications' ? 'last_activity_at' : 'updated_at';

  const put = (object: GreenhouseObject, record: GreenhouseRecord, ms: number): Row => {
    const row: Row = { record, modifiedMs: ms, createdMs: ms };
    stores[object].set(record.id, row);
    return row;
  };
  const stamp = (object: GreenhouseObject, row: Row, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = ms;
    row.visibleFromMs = visibleFromMs;
    row.record[modifiedField(object)] = iso(ms);
  };

  const job = (id: number, ms: number, name: string): GreenhouseRecord => ({
    id,
    name,
    requisition_id: `REQ-${id}`,
    notes: null,
    confidential: false,
    status: 'open',
    created_at: iso(ms),
    opened_at: iso(ms),
    closed_at: null,
    updated_at: iso(ms),
    is_template: false,
    copied_from_id: null,
    departments: [{ id: 301, name: 'Engineering', parent_id: null, child_ids: [], external_id: null }],
    offices: [{ id: 401, name: 'Paris', location: { name: 'Paris, France' }, primary_contact_user_id: null }],
    hiring_team: { hiring_managers: [], recruiters: [], coordinators: [], sourcers: [] },
    custom_fields: { employment_type: 'Full-time' },
    keyed_custom_fields: {
      employment_type: { name: 'Employment Type', type: 'single_select', value: 'Full-time' },
    },
    openings: [],
  });
  const fixtureMs = Date.UTC(2020, 0, 1);
  put('jobs', job(FIXTURE_JOB, fixtureMs, 'Analyst'), fixtureMs);

  const application = (id: number, candidateId: number, jobId: number, ms: number): GreenhouseRecord => ({
    id,
    candidate_id: candidateId,
    prospect: false,
    applied_at: iso(ms),
    rejected_at: null,
    last_activity_at: iso(ms),
    location: null,
    source: { id: 7, public_name: 'Jobs page on your website' },
    credited_to: null,
    rejection_reason: null,
    rejection_details: null,
    jobs: [{ id: jobId, name: stores.jobs.get(jobId)?.record.name ?? 'Analyst' }],
    job_post_id: null,
    status: 'active',
    current_stage: { id: 501, name: 'Application Review' },
    answers: [],
    prospective_office: null,
    prospective_department: null,
    prospect_detail: { prospect_pool: null, prospect_stage: null, prospect_owner: null },
    custom_fields: {},
    keyed_custom_fields: {},
    attachments: [],
  });
  const candidate = (id: number, values: Record<string, unknown>, applicationIds: number[], ms: number) => ({
    id,
    first_name: null,
    last_name: null,
    company: null,
    title: null,
    created_at: iso(ms),
    updated_at: iso(ms),
    last_activity: iso(ms),
    is_private: false,
    photo_url: null,
    attachments: [],
    application_ids: applicationIds,
    phone_numbers: [],
    addresses: [],
    email_addresses: [],
    website_addresses: [],
    social_media_addresses: [],
    recruiter: null,
    coordinator: null,
    can_email: true,
    tags: [],
    educations: [],
    employments: [],
    custom_fields: {},
    keyed_custom_fields: {},
    ...values,
  });

  const objectOf = (ctx: Context): GreenhouseObject => {
    const object = ctx.params.object as GreenhouseObject;
    if (!objects.includes(object)) throw new FakeHttpError(404, 'Resource not found');
    return object;
  };
  const rowOf = (object: GreenhouseObject, id: string): Row => {
    const row = stores[object].get(Number(id));
    if (!row || row.deleted) throw new FakeHttpError(404, `${object.slice(0, -1)} not found`);
    return row;
  };
  const timeParam = (ctx: Context, name: string): number | undefined => {
    const value = ctx.query[name];
    if (value === undefined) return undefined;
    const ms = typeof value === 'string' ? Date.parse(value) : NaN;
    if (Number.isNaN(ms)) throw validation(name, 'must be a timestamp in ISO-8601 format');
    return ms;
  };

  router.get('/v1/:object', (ctx) => {
    const object = objectOf(ctx);
    for (const name of Object.keys(ctx.query)) {
      if (!['per_page', 'page', 'skip_count', ...filters[object]].includes(name))
        throw validation(name, 'is not a valid parameter');
    }
    const perPage = ctx.query.per_page === undefined ? PER_PAGE_DEFAULT : Number(ctx.query.per_page);
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > PER_PAGE_MAX)
      throw validation('per_page', `must be between 1 and ${PER_PAGE_MAX}`);
    const page = ctx.query.page === undefined ? 1 : Number(ctx.query.page);
    if (!Number.isInteger(page) || page < 1) throw validation('page', 'must be a positive integer');
    fake.logListing(ctx, { object, pageSize: perPage, maxPageSize: PER_PAGE_MAX });
    const createdBefore = timeParam(ctx, 'created_before');
    const createdAfter = timeParam(ctx, 'created_after');
    const updatedBefore = timeParam(ctx, 'updated_before');
    const updatedAfter = timeParam(ctx, object === 'applications' ? 'last_activity_after' : 'updated_after');
    const found = [...stores[object].values()]
      .filter((row) => !row.deleted && (row.visibleFromMs ?? row.modifiedMs) <= now())
      .filter(
        (row) =>
          (createdBefore === undefined || row.createdMs < createdBefore) &&
          (createdAfter === undefined || row.createdMs >= createdAfter) &&
          (updatedBefore === undefined || row.modifiedMs < updatedBefore) &&
          (updatedAfter === undefined || row.modifiedMs >= updatedAfter),
      )
      .sort((a, b) => a.record.id - b.record.id);
    const lastPage = Math.max(1, Math.ceil(found.length / perPage));
    const link = (n: number) => {
      const params = new URLSearchParams(ctx.querystring);
      params.set('page', String(n));
      params.set('per_page', String(perPage));
      return `${ctx.protocol}://${ctx.host}/v1/${object}?${params.toString()}`;
    };
    const links = [
      ...(page < lastPage ? [`<${link(page + 1)}>; rel="next"`] : []),
      ...(page > 1 ? [`<${link(page - 1)}>; rel="prev"`] : []),
      `<${link(lastPage)}>; rel="last"`,
    ];
    ctx.set('link', links.join(', '));
    ctx.body = found.slice((page - 1) * perPage, page * perPage).map((row) => row.record);
  });

  router.get('/v1/:object/:id', (ctx) => {
    ctx.body = rowOf(objectOf(ctx), ctx.params.id).record;
  });

  const onBehalfOf = (ctx: Context) => {
    const user = ctx.get('on-behalf-of');
    if (!user) throw validation('On-Behalf-Of', 'header is required for this request');
    if (!USERS.includes(Number(user))) throw new FakeHttpError(403, `Invalid On-Behalf-Of user: ${user}`);
  };
  const candidateValues = (ctx: Context, creating: boolean): Record<string, unknown> => {
    const body = ctx.request.body as Record<string, unknown> | undefined;
    if (!ctx.is('json') || !body || typeof body !== 'object' || Array.isArray(body))
      throw new FakeHttpError(400, 'The request body must be JSON');
    for (const name of Object.keys(body)) {
      if (!candidateMembers.includes(name) || (name === 'applications' && !creating))
        throw validation(name, 'is not a permitted attribute');
    }
    if (creating) {
      for (const name of ['first_name', 'last_name']) {
        if (typeof body[name] !== 'string' || !body[name]) throw validation(name, 'is required');
      }
    }
    return body;
  };

  router.post('/v1/candidates', (ctx) => {
    onBehalfOf(ctx);
    const { applications, ...values } = candidateValues(ctx, true);
    if (!Array.isArray(applications) || !applications.length)
      throw validation('applications', 'at least one application is required');
    for (const wanted of applications as { job_id?: unknown }[]) {
      if (!stores.jobs.get(Number(wanted?.job_id)))
        throw validation('applications', `job ${String(wanted?.job_id)} not found`);
    }
    const ms = now();
    const id = nextId++;
    const applicationIds = (applications as { job_id: number }[]).map((wanted) => {
      const applicationId = nextId++;
      put('applications', application(applicationId, id, Number(wanted.job_id), ms), ms);
      return applicationId;
    });
    const row = put('candidates', candidate(id, values, applicationIds, ms), ms);
    ctx.status = 201;
    ctx.body = row.record;
  });

  router.patch('/v1/candidates/:id', (ctx) => {
    onBehalfOf(ctx);
    const row = rowOf('candidates', ctx.params.id);
    Object.assign(row.record, candidateValues(ctx, false));
    stamp('candidates', row, now());
    ctx.body = row.record;
  });

  router.delete('/v1/candidates/:id', (ctx) => {
    onBehalfOf(ctx);
    rowOf('candidates', ctx.params.id);
    stores.candidates.delete(Number(ctx.params.id));
    ctx.body = { message: `Candidate ${ctx.params.id} has been deleted.` };
  });

  await fake.start();

  const storedRow = (object: string, id: string): Row => {
    const row = stores[object as GreenhouseObject].get(Number(id));
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
    setClock: (clock) => fake.setClock(clock),
    seed: (object, times) =>
      times.map((ms) => {
        const name = object as GreenhouseObject;
        const id = nextId++;
        const record =
          name === 'candidates'
            ? candidate(
                id,
                { first_name: `First${id}`, last_name: `Last${id}`, company: `Company ${id}` },
                [],
                ms,
              )
            : name === 'applications'
              ? application(id, 9, FIXTURE_JOB, ms)
              : job(id, ms, `Job ${id}`);
        return String(put(name, record, ms).record.id);
      }),
    touch(object, id, modifiedMs, options) {
      stamp(object as GreenhouseObject, storedRow(object, id), modifiedMs, options?.visibleFromMs);
    },
    remove(object, id) {
      stores[object as GreenhouseObject].delete(Number(id));
    },
    stored: (object, id) => {
      const row = stores[object as GreenhouseObject].get(Number(id));
      return row && !row.deleted ? row.record : undefined;
    },
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    stop: () => fake.stop(),
  };
}

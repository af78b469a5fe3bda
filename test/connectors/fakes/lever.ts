import { randomUUID } from 'node:crypto';
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
 * A local stand-in for Lever's API v1 (https://hire.lever.co/developer/documentation), written
 * from its reference (authentication, pagination, rate limits, errors, opportunities, postings,
 * users):
 *
 * - Auth: an OAuth access token (`Bearer`) or the API key as the Basic user name.
 * - Times are Unix milliseconds (`createdAt`, `updatedAt`).
 * - Lists `{data, hasNext, next}`: `limit` 1 to 100 (default 100), `offset` = the `next` token of
 *   the previous page (opaque; it stands for the position after the page's last record, records
 *   being in creation order), absent on the last page.
 * - Opportunities: `updated_at_start` (from that instant on: included) and `updated_at_end`
 *   (before that instant: excluded), in milliseconds; `archived`; `expand`/`include` taken and
 *   ignored. Created by `POST /v1/opportunities?perform_as=<user id>` (201, `{data}`); there is
 *   no general update (stages, tags, links, archive state each have their own endpoint). An
 *   archived opportunity stays listed (`archived: {reason, archivedAt}`); one deleted in Lever
 *   leaves the list and is listed by `GET /v1/opportunities/deleted` (`{id, deletedAt}`,
 *   `deleted_at_start` included, `deleted_at_end` excluded, ms).
 * - Postings: `state`, `team`, `department`, `location`, `commitment`, `level`, `tag`, no time
 *   filter; records carry `updatedAt`. Users: `includeDeactivated`; no modification time.
 * - Errors `{code, message}` (`BadRequestError`, `UnauthorizedError`, `ResourceNotFound`,
 *   `TooManyRequests`); at most 10 requests a second (bursts to 20), then 429.
 */

type LeverRecord = Record<string, unknown> & { id: string };
type Row = StoredRecord<LeverRecord> & { seq: number; createdMs: number };

const objects = ['opportunities', 'postings', 'users'] as const;
type LeverObject = (typeof objects)[number];
const LIMIT_MAX = 100;
const USER_ID = '9c3b9d3e-2b3a-4a42-9f0c-7c0ad0f3e001';
const opportunityMembers = [
  'name',
  'headline',
  'stage',
  'location',
  'phones',
  'emails',
  'links',
  'tags',
  'sources',
  'origin',
  'owner',
  'followers',
  'postings',
  'createdAt',
  'archived',
  'contact',
];
const listParams: Record<LeverObject, string[]> = {
  opportunities: [
    'updated_at_start',
    'updated_at_end',
    'created_at_start',
    'created_at_end',
    'archived',
    'expand',
    'include',
    'tag',
    'email',
    'posting_id',
    'stage_id',
  ],
  postings: [
    'state',
    'team',
    'department',
    'location',
    'commitment',
    'level',
    'tag',
    'group',
    'include',
    'expand',
  ],
  users: ['includeDeactivated', 'email', 'accessRole'],
};

const codeOf: Record<number, string> = {
  400: 'BadRequestError',
  401: 'UnauthorizedError',
  403: 'ForbiddenError',
  404: 'ResourceNotFound',
  429: 'TooManyRequests',
};

export async function startFakeLever(): Promise<ConformanceFake> {
  const stores: Record<LeverObject, Map<string, Row>> = {
    opportunities: new Map(),
    postings: new Map(),
    users: new Map(),
  };
  let seq = 1;

  const fake: FakeProvider = new FakeProvider({
    credentialOf: (ctx) => bearerCredential(ctx) ?? basicUserCredential(ctx),
    errorBody: (error) => ({
      code: codeOf[error.status] ?? (error.status >= 500 ? 'InternalServerError' : 'BadRequestError'),
      message:
        error.status === 401
          ? 'Invalid API key or access token'
          : error.status === 429
            ? 'Too many requests, please retry later'
            : error.message,
    }),
  });
  const now = () => fake.now();
  const router = fake.router;

  const put = (object: LeverObject, record: LeverRecord, ms: number): Row => {
    const row: Row = { record, modifiedMs: ms, createdMs: ms, seq: seq++ };
    stores[object].set(record.id, row);
    return row;
  };
  const stamp = (row: Row, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = ms;
    row.visibleFromMs = visibleFromMs;
    row.record.updatedAt = ms;
  };

  const fixtureMs = Date.UTC(2020, 0, 1);
  put(
    'users',
    {
      id: USER_ID,
      name: 'Rachel Recruiter',
      username: 'rachel',
      email: 'rachel@example.com',
      createdAt: fixtureMs,
      deactivatedAt: null,
      externalDirectoryId: null,
      accessRole: 'super admin',
      photo: null,
      linkedContactIds: null,
      jobTitle: 'Recruiter',
      managerId: null,
    },
    fixtureMs,
  );

  const opportunity = (values: Record<string, unknown>, ms: number): LeverRecord => ({
    id: randomUUID(),
    name: null,
    headline: '',
    contact: randomUUID(),
    emails: [],
    phones: [],
    confidentiality: 'non-confidential',
    location: '',
    links: [],
    createdAt: ms,
    updatedAt: ms,
    lastInteractionAt: ms,
    lastAdvancedAt: ms,
    snoozedUntil: null,
    archived: null,
    stage: '00922a60-7c15-422b-b086-f62000824fd7',
    stageChanges: [
      { toStageId: '00922a60-7c15-422b-b086-f62000824fd7', toStageIndex: 0, updatedAt: ms, userId: USER_ID },
    ],
    owner: USER_ID,
    tags: [],
    sources: [],
    origin: 'sourced',
    sourcedBy: USER_ID,
    applications: [],
    followers: [USER_ID],
    isAnonymized: false,
    dataProtection: null,
    ...values,
  });
  const posting = (n: number, ms: number): LeverRecord => ({
    id: randomUUID(),
    text: `Posting ${n}`,
    createdAt: ms,
    updatedAt: ms,
    user: USER_ID,
    owner: USER_ID,
    hiringManager: USER_ID,
    confidentiality: 'non-confidential',
    categories: {
      team: 'Engineering',
      department: 'R&D',
      location: 'Paris',
      commitment: 'Full-time',
      level: null,
    },
    content: { description: '', descriptionHtml: '', lists: [], closing: '', closingHtml: '' },
    country: 'FR',
    followers: [USER_ID],
    tags: [],
    state: 'published',
    distributionChannels: ['public'],
    reqCode: null,
    requisitionCodes: [],
    salaryDescription: '',
    salaryRange: null,
    urls: { list: 'https://jobs.lever.co/acme', show: `https://jobs.lever.co/acme/${n}`, apply: '' },
    workplaceType: 'onsite',
  });

  const objectOf = (ctx: Context): LeverObject => {
    const object = ctx.params.object as LeverObject;
    if (!objects.includes(object)) throw new FakeHttpError(404, `Cannot find resource ${ctx.path}`);
    return object;
  };
  const msParam = (ctx: Context, name: string): number | undefined => {
    const value = ctx.query[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !/^\d+$/.test(value))
      throw new FakeHttpError(400, `Invalid ${name}: expected a timestamp in milliseconds`);
    return Number(value);
  };

  /** The opaque `next`/`offset` token: the position after the page's last record. */
  const tokenOf = (key: [number, number]) => Buffer.from(`${key[0]}.${key[1]}`).toString('base64url');
  const offsetOf = (ctx: Context): [number, number] | undefined => {
    if (ctx.query.offset === undefined) return undefined;
    const match = /^(\d+)\.(\d+)$/.exec(Buffer.from(String(ctx.query.offset), 'base64url').toString('utf8'));
    if (!match) throw new FakeHttpError(400, 'Invalid offset token');
    return [Number(match[1]), Number(match[2])];
  };
  const compareKeys = (a: [number, number], b: [number, number]) => a[0] - b[0] || a[1] - b[1];

  router.get('/v1/:object', (ctx) => {
    const object = objectOf(ctx);
    for (const name of Object.keys(ctx.query)) {
      if (!['limit', 'offset', ...listParams[object]].includes(name))
        throw new FakeHttpError(400, `Unrecognized query parameter: ${name}`);
    }
    const limit = ctx.query.limit === undefined ? LIMIT_MAX : Number(ctx.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > LIMIT_MAX)
      throw new FakeHttpError(400, `Invalid limit: must be between 1 and ${LIMIT_MAX}`);
    fake.logListing(ctx, { object, pageSize: limit, maxPageSize: LIMIT_MAX });
    const start = object === 'opportunities' ? msParam(ctx, 'updated_at_start') : undefined;
    const end = object === 'opportunities' ? msParam(ctx, 'updated_at_end') : undefined;
    const createdStart = object === 'opportunities' ? msParam(ctx, 'created_at_start') : undefined;
    const createdEnd = object === 'opportunities' ? msParam(ctx, 'created_at_end') : undefined;
    const archived = ctx.query.archived === undefined ? undefined : ctx.query.archived === 'true';
    const after = offsetOf(ctx);
    const key = (row: Row): [number, number] => [row.createdMs, row.seq];
    const compare = compareKeys;
    const found = [...stores[object].values()]
      .filter((row) => !row.deleted && (row.visibleFromMs ?? row.modifiedMs) <= now())
      .filter(
        (row) =>
          (start === undefined || row.modifiedMs >= start) &&
          (end === undefined || row.modifiedMs < end) &&
          (createdStart === undefined || row.createdMs >= createdStart) &&
          (createdEnd === undefined || row.createdMs < createdEnd) &&
          (archived === undefined || (row.record.archived !== null) === archived) &&
          (object !== 'users' ||
            ctx.query.includeDeactivated === 'true' ||
            row.record.deactivatedAt === null),
      )
      .sort((a, b) => compare(key(a), key(b)))
      .filter((row) => !after || compare(key(row), after) > 0);
    const page = found.slice(0, limit);
    const hasNext = found.length > limit;
    const last = page.at(-1);
    ctx.body = {
      data: page.map((row) => row.record),
      hasNext,
      ...(hasNext && last && { next: tokenOf(key(last)) }),
    };
  });

  // Deleted opportunities: `{id, deletedAt}` from `deleted_at_start` (included) to `deleted_at_end`
  // (excluded), in deletion order, paged as the other lists.
  router.get('/v1/opportunities/deleted', (ctx) => {
    for (const name of Object.keys(ctx.query)) {
      if (!['limit', 'offset', 'deleted_at_start', 'deleted_at_end'].includes(name))
        throw new FakeHttpError(400, `Unrecognized query parameter: ${name}`);
    }
    const limit = ctx.query.limit === undefined ? LIMIT_MAX : Number(ctx.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > LIMIT_MAX)
      throw new FakeHttpError(400, `Invalid limit: must be between 1 and ${LIMIT_MAX}`);
    fake.logListing(ctx, { object: 'opportunities', pageSize: limit, maxPageSize: LIMIT_MAX });
    const start = msParam(ctx, 'deleted_at_start');
    const end = msParam(ctx, 'deleted_at_end');
    const after = offsetOf(ctx);
    const key = (row: Row): [number, number] => [row.deletedMs!, row.seq];
    const found = [...stores.opportunities.values()]
      .filter(
        (row) =>
          row.deleted &&
          (start === undefined || row.deletedMs! >= start) &&
          (end === undefined || row.deletedMs! < end),
      )
      .sort((a, b) => compareKeys(key(a), key(b)))
      .filter((row) => !after || compareKeys(key(row), after) > 0);
    const page = found.slice(0, limit);
    const hasNext = found.length > limit;
    const last = page.at(-1);
    ctx.body = {
      data: page.map((row) => ({ id: row.record.id, deletedAt: row.deletedMs })),
      hasNext,
      ...(hasNext && last && { next: tokenOf(key(last)) }),
    };
  });

  router.get('/v1/:object/:id', (ctx) => {
    const row = stores[objectOf(ctx)].get(ctx.params.id);
    if (!row || row.deleted) throw new FakeHttpError(404, `Resource not found: ${ctx.params.id}`);
    ctx.body = { data: row.record };
  });

  router.post('/v1/opportunities', (ctx) => {
    const performAs = ctx.query.perform_as;
    if (!performAs) throw new FakeHttpError(400, 'Missing required query parameter: perform_as');
    if (!stores.users.get(String(performAs)))
      throw new FakeHttpError(400, `Invalid perform_as user: ${String(performAs)}`);
    const body = ctx.request.body as Record<string, unknown> | undefined;
    if (!ctx.is('json') || !body || typeof body !== 'object' || Array.isArray(body))
      throw new FakeHttpError(400, 'Request body must be JSON');
    for (const name of Object.keys(body)) {
      if (!opportunityMembers.includes(name)) throw new FakeHttpError(400, `Unrecognized field: ${name}`);
    }
    const ms = now();
    const row = put('opportunities', opportunity({ ...body, sourcedBy: String(performAs) }, ms), ms);
    ctx.status = 201;
    ctx.body = { data: row.record };
  });

  await fake.start();

  const storedRow = (object: string, id: string): Row => {
    const row = stores[object as LeverObject].get(id);
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
        const name = object as LeverObject;
        const n = seq;
        const record =
          name === 'opportunities'
            ? opportunity(
                {
                  name: `Candidate ${n}`,
                  headline: `Company ${n}`,
                  emails: [`o${n}@example.com`],
                  location: 'Paris',
                },
                ms,
              )
            : name === 'postings'
              ? posting(n, ms)
              : {
                  ...stores.users.get(USER_ID)!.record,
                  id: randomUUID(),
                  name: `User ${n}`,
                  email: `u${n}@example.com`,
                  createdAt: ms,
                };
        return put(name, record, ms).record.id;
      }),
    touch(object, id, modifiedMs, options) {
      stamp(storedRow(object, id), modifiedMs, options?.visibleFromMs);
    },
    remove(object, id, atMs) {
      // Deleted in Lever (not through the API): gone from the lists; opportunities are then listed
      // by `/opportunities/deleted`.
      Object.assign(storedRow(object, id), { deleted: true, deletedMs: atMs });
    },
    stored: (object, id) => {
      const row = stores[object as LeverObject].get(id);
      return row && !row.deleted ? row.record : undefined;
    },
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    stop: () => fake.stop(),
  };
}

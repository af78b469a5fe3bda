import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  asConformanceFake,
  basicUserCredential,
  FakeHttpError,
  FakeProvider,
  RequestWindow,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for Ashby's public API, written from its reference
 * (https://developers.ashbyhq.com/reference/introduction, candidatelist, candidatecreate,
 * candidateupdate, candidateinfo, applicationlist, and the pagination and incremental sync guide
 * https://developers.ashbyhq.com/docs/pagination-and-incremental-sync):
 *
 * - RPC style: every call is `POST /<object>.<action>` with a JSON body, the API key as the Basic
 *   user name (no password). Answers `{success: true, results, moreDataAvailable?, nextCursor?,
 *   syncToken?}`; a failed call answers HTTP 200 `{success: false, errors: [...], errorInfo: {code,
 *   message}}` (a missing or revoked key 401, a rate limit 429).
 * - `candidate.list`, `application.list`: `limit` (at most and by default 100), `cursor` (the
 *   previous page's `nextCursor` while `moreDataAvailable`), `syncToken`. A walk without a token
 *   lists everything (oldest created first); its last page answers a `syncToken`, and a walk that
 *   passes it lists only what changed since that walk began (oldest change first), ending with the
 *   next token. A token unused for more than a week fails `sync_token_expired`: walk everything
 *   again. `application.list` also takes `createdAfter` (epoch milliseconds, exclusive).
 * - Records `{id, createdAt, updatedAt, ...}`, times ISO 8601 UTC with milliseconds. A candidate's
 *   address is `primaryEmailAddress: {value, type, isPrimary}`.
 * - `candidate.create {name, email?, phoneNumber?, ...}` and `candidate.update {candidateId, ...}`
 *   (only what is sent changes) answer the candidate as `results`; `candidate.info {id}`,
 *   `application.info {applicationId}` answer one. Nothing is deleted through the API; a candidate
 *   deleted in the app (or an application with it) leaves every listing, and no sync reveals it.
 * - Rate limit: 1,000 requests a minute per key; 429 with `Retry-After`.
 */

type Record_ = Record<string, unknown> & { id: string; createdAt: string; updatedAt: string };
type Row = { record: Record_; createdMs: number; modifiedMs: number; visibleFromMs?: number };
type AshbyObject = 'candidate' | 'application';

const PAGE_MAX = 100;
const MINUTE_LIMIT = 1000;
const TOKEN_LIFETIME_MS = 7 * 86_400_000;

const ashbyTime = (ms: number) => new Date(ms).toISOString();
const uuid = (n: number) =>
  `${n.toString(16).padStart(8, '0')}-a5b1-4c0d-8e1f-${n.toString(16).padStart(12, '0')}`;

/** A failed call: HTTP 200, `success: false`, as Ashby answers them. */
const failure = (code: string, message: string) => new FakeHttpError(200, message, code);

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
function decode<T>(text: unknown, what: string): T {
  try {
    return JSON.parse(Buffer.from(String(text), 'base64url').toString('utf8')) as T;
  } catch {
    throw failure('invalid_input', `Invalid ${what}`);
  }
}

/** Where a walk is: a full walk or a sync since `since`, begun at `startedMs`, after `last`. */
type Walk = { object: AshbyObject; sync?: number; startedMs: number; last?: [number, string] };

export async function startFakeAshby(): Promise<ConformanceFake> {
  const stores: Record<AshbyObject, Map<string, Row>> = { candidate: new Map(), application: new Map() };
  let next = 1;
  const budget = new RequestWindow(MINUTE_LIMIT, 60_000, false);

  const fake: FakeProvider = new FakeProvider({
    credentialOf: basicUserCredential,
    errorBody: (error) => {
      const code =
        error.status === 401
          ? 'invalid_api_key'
          : error.status === 429
            ? 'rate_limit_exceeded'
            : error.status >= 500
              ? 'internal_error'
              : (error.code ?? 'invalid_input');
      return { success: false, errors: [code], errorInfo: { code, message: error.message } };
    },
    rateLimitHeaders: () => ({ 'Retry-After': '1' }),
  });
  const now = () => fake.now();
  const router = fake.router;

  router.use(
    budget.refusing(
      (headers) => new FakeHttpError(429, 'Rate limit exceeded', 'rate_limit_exceeded', headers),
    ),
  );

  const bodyOf = (ctx: Context) => {
    const body = ctx.request.body;
    if (body !== undefined && (typeof body !== 'object' || Array.isArray(body)))
      throw failure('invalid_input', 'The request body must be a JSON object');
    return (body ?? {}) as Record<string, unknown>;
  };
  const visibleAt = (row: Row) => Math.max(row.modifiedMs, row.visibleFromMs ?? row.modifiedMs);

  const list = (ctx: Context, object: AshbyObject) => {
    const body = bodyOf(ctx);
    const limit = body.limit === undefined ? PAGE_MAX : Number(body.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_MAX)
      throw failure('invalid_input', `limit must be an integer between 1 and ${PAGE_MAX}`);
    fake.logListing(ctx, { object, pageSize: limit, maxPageSize: PAGE_MAX });
    let walk: Walk;
    if (body.cursor !== undefined && body.cursor !== null) {
      walk = decode<Walk>(body.cursor, 'cursor');
      if (walk.object !== object) throw failure('invalid_input', 'The cursor belongs to another list');
    } else if (body.syncToken !== undefined && body.syncToken !== null) {
      const token = decode<{ object: AshbyObject; since: number }>(body.syncToken, 'syncToken');
      if (token.object !== object) throw failure('invalid_input', 'The syncToken belongs to another list');
      if (token.since < now() - TOKEN_LIFETIME_MS)
        throw failure('sync_token_expired', 'The sync token has expired; walk the whole list again');
      walk = { object, sync: token.since, startedMs: now() };
    } else {
      walk = { object, startedMs: now() };
    }
    const createdAfter =
      object === 'application' && body.createdAfter !== undefined ? Number(body.createdAfter) : undefined;
    if (createdAfter !== undefined && !Number.isFinite(createdAfter))
      throw failure('invalid_input', 'createdAfter must be epoch milliseconds');
    const key = (row: Row): [number, string] => [
      walk.sync === undefined ? row.createdMs : visibleAt(row),
      row.record.id,
    ];
    const rows = [...stores[object].values()]
      .filter((row) => visibleAt(row) <= now())
      .filter((row) => walk.sync === undefined || visibleAt(row) >= walk.sync)
      .filter((row) => createdAfter === undefined || row.createdMs > createdAfter)
      .map((row) => ({ row, at: key(row) }))
      .sort((a, b) => a.at[0] - b.at[0] || a.at[1].localeCompare(b.at[1]))
      .filter(
        ({ at }) => !walk.last || at[0] > walk.last[0] || (at[0] === walk.last[0] && at[1] > walk.last[1]),
      );
    const page = rows.slice(0, limit);
    const more = rows.length > limit;
    ctx.body = {
      success: true,
      results: page.map(({ row }) => row.record),
      moreDataAvailable: more,
      ...(more
        ? { nextCursor: encode({ ...walk, last: page.at(-1)!.at }) }
        : { syncToken: encode({ object, since: walk.startedMs }) }),
    };
  };

  router.post('/candidate.list', (ctx) => list(ctx, 'candidate'));
  router.post('/application.list', (ctx) => list(ctx, 'application'));

  const rowOf = (object: AshbyObject, id: unknown): Row => {
    const row = typeof id === 'string' ? stores[object].get(id) : undefined;
    if (!row) throw failure('not_found', `No ${object} with id ${String(id)}`);
    return row;
  };
  router.post('/candidate.info', (ctx) => {
    ctx.body = { success: true, results: rowOf('candidate', bodyOf(ctx).id).record };
  });
  router.post('/application.info', (ctx) => {
    ctx.body = { success: true, results: rowOf('application', bodyOf(ctx).applicationId).record };
  });

  /** Candidate fields a create or update takes, and where they land in the record. */
  const candidateInput = (body: Record<string, unknown>, record: Record_) => {
    for (const [name, value] of Object.entries(body)) {
      if (name === 'candidateId' || name === 'sendNotifications') continue;
      if (value !== null && value !== undefined && typeof value !== 'string')
        throw failure('invalid_input', `${name} must be a string`);
      switch (name) {
        case 'name':
          if (!value) throw failure('invalid_input', 'name cannot be empty');
          record.name = value;
          break;
        case 'email':
          record.primaryEmailAddress = value ? { value, type: 'Personal', isPrimary: true } : null;
          record.emailAddresses = value ? [record.primaryEmailAddress] : [];
          break;
        case 'phoneNumber':
          record.primaryPhoneNumber = value ? { value, type: 'Mobile', isPrimary: true } : null;
          record.phoneNumbers = value ? [record.primaryPhoneNumber] : [];
          break;
        case 'linkedInUrl':
        case 'githubUrl':
        case 'websiteUrl': {
          const type = { linkedInUrl: 'LinkedIn', githubUrl: 'GitHub', websiteUrl: 'Website' }[name];
          const links = ((record.socialLinks as { type: string; url: string }[]) ?? []).filter(
            (link) => link.type !== type,
          );
          record.socialLinks = value ? [...links, { type, url: value }] : links;
          break;
        }
        case 'location':
          record.location = value;
          break;
        default:
          throw failure('invalid_input', `Unknown field ${name}`);
      }
    }
  };

  const newCandidate = (ms: number): Row => {
    const id = uuid(next++);
    const record: Record_ = {
      id,
      createdAt: ashbyTime(ms),
      updatedAt: ashbyTime(ms),
      name: '',
      primaryEmailAddress: null,
      emailAddresses: [],
      primaryPhoneNumber: null,
      phoneNumbers: [],
      socialLinks: [],
      tags: [],
      applicationIds: [],
      customFields: [],
      location: null,
      profileUrl: `https://app.ashbyhq.com/candidates/${id}`,
    };
    const row: Row = { record, createdMs: ms, modifiedMs: ms };
    stores.candidate.set(id, row);
    return row;
  };
  const stamp = (row: Row, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = ms;
    row.visibleFromMs = visibleFromMs;
    row.record.updatedAt = ashbyTime(ms);
  };

  router.post('/candidate.create', (ctx) => {
    const body = bodyOf(ctx);
    if (typeof body.name !== 'string' || !body.name) throw failure('invalid_input', 'name is required');
    const row = newCandidate(now());
    candidateInput(body, row.record);
    ctx.body = { success: true, results: row.record };
  });
  router.post('/candidate.update', (ctx) => {
    const body = bodyOf(ctx);
    const row = rowOf('candidate', body.candidateId);
    candidateInput(body, row.record);
    stamp(row, now());
    ctx.body = { success: true, results: row.record };
  });

  await fake.start();

  const seedOne = (object: AshbyObject, ms: number): string => {
    const n = next;
    if (object === 'candidate') {
      const row = newCandidate(ms);
      candidateInput({ name: `Candidate ${n}`, email: `c${n}@example.com`, location: 'Berlin' }, row.record);
      return row.record.id;
    }
    const candidate = newCandidate(ms);
    candidateInput({ name: `Applicant ${n}`, email: `a${n}@example.com` }, candidate.record);
    const id = uuid(next++);
    candidate.record.applicationIds = [id];
    const record: Record_ = {
      id,
      createdAt: ashbyTime(ms),
      updatedAt: ashbyTime(ms),
      status: 'Active',
      candidate: {
        id: candidate.record.id,
        name: candidate.record.name,
        primaryEmailAddress: candidate.record.primaryEmailAddress,
      },
      job: { id: uuid(0), title: 'Engineer', locationId: null, departmentId: null },
      currentInterviewStage: {
        id: uuid(1),
        title: 'Application Review',
        type: 'PreInterviewScreen',
        orderInInterviewPlan: 0,
      },
      source: null,
      archiveReason: null,
      customFields: [],
    };
    stores.application.set(id, { record, createdMs: ms, modifiedMs: ms });
    return id;
  };
  const storedRow = (object: string, id: string) => rowOf(object as AshbyObject, id);

  return asConformanceFake(fake, {
    seed: (object, times) => times.map((ms) => seedOne(object as AshbyObject, ms)),
    touch(object, id, modifiedMs, options) {
      const row = storedRow(object, id);
      // An edit in the app: a candidate's location, an application's stage.
      if (object === 'candidate') row.record.location = `City ${modifiedMs}`;
      else
        row.record.currentInterviewStage = {
          ...(row.record.currentInterviewStage as object),
          title: `Stage ${modifiedMs}`,
        };
      stamp(row, modifiedMs, options?.visibleFromMs);
    },
    remove(object, id) {
      // Deleted in the app: gone from every listing, and no sync says so.
      stores[object as AshbyObject].delete(id);
    },
    stored: (object, id) => stores[object as AshbyObject].get(id)?.record,
  });
}

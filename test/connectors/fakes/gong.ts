import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  asConformanceFake,
  bearerCredential,
  FakeHttpError,
  FakeProvider,
  RecordStore,
  type StoredRecord,
  RequestWindow,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for Gong's public API v2 (https://gong.app.gong.io/settings/api/documentation:
 * List calls, Retrieve call, List all users, Retrieve user; "Limits" and "Errors" in its
 * introduction), answering as it documents:
 *
 * - OAuth bearer tokens against the customer's own API host (`api_base_url_for_customer`); a stale
 *   one answers 401.
 * - `GET /v2/calls?fromDateTime=&toDateTime=&workspaceId=&cursor=`: calls whose start (`started`)
 *   is at or after `fromDateTime` and before `toDateTime` (ISO 8601). Nothing filters or sorts by
 *   modification, and a call carries no modification time (it changes after it starts: its title,
 *   its processing, its participants). Pages of 100, a size the caller cannot choose; `records:
 *   {totalRecords, currentPageSize, currentPageNumber, cursor?}`, `cursor` absent on the last page.
 *   When nothing matches Gong answers 404 `No calls found corresponding to the provided filters`.
 * - `GET /v2/users?cursor=&includeAvatars=`: every user, pages of 100, no time filter or modification
 *   time (only `created`). A removed user leaves the listing.
 * - `GET /v2/calls/{id}` → `{requestId, call}`; `GET /v2/users/{id}` → `{requestId, user}`.
 * - Deleted calls leave every listing; nothing lists deletions.
 * - Errors `{requestId, errors: [text]}`. Limits: 3 calls a second and 10,000 a day per company;
 *   past them 429 with `Retry-After` (seconds).
 */

type Json = Record<string, unknown>;
type Row = StoredRecord<Json>;

const PAGE_SIZE = 100;
const PER_SECOND = 3;
const WORKSPACE = '623457276584334';

const gongTime = (ms: number) => `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}Z`;

export async function startFakeGong(): Promise<ConformanceFake> {
  const calls = new RecordStore<Json>();
  const users = new RecordStore<Json>();
  let counter = 0;
  const budget = new RequestWindow(PER_SECOND, 1000);

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => ({
      requestId: `req${Math.random().toString(36).slice(2, 12)}`,
      errors: [
        error.status === 401
          ? 'Authentication failed: the access token is invalid or expired'
          : error.message,
      ],
    }),
    rateLimitHeaders: () => ({ 'Retry-After': '1' }),
  });
  const now = () => fake.now();
  const router = fake.router;

  // Three calls a second, on real time.
  router.use(
    budget.refusing(
      (headers) =>
        new FakeHttpError(429, 'API request limit exceeded: 3 calls per second', undefined, headers),
    ),
  );

  const requestId = () => `req${(++counter).toString(36)}x${Math.random().toString(36).slice(2, 8)}`;
  const visible = (row: Row) => (row.visibleFromMs ?? row.modifiedMs) <= now();

  /** A page of 100 after the cursor; `found` in listing order. */
  const page = (ctx: Context, object: string, found: Row[]) => {
    fake.logListing(ctx, { object, pageSize: PAGE_SIZE, maxPageSize: PAGE_SIZE });
    let offset = 0;
    if (ctx.query.cursor !== undefined) {
      try {
        offset = (
          JSON.parse(Buffer.from(String(ctx.query.cursor), 'base64url').toString('utf8')) as { after: number }
        ).after;
      } catch {
        throw new FakeHttpError(400, 'Invalid cursor');
      }
    }
    // The cursor keeps the position by sequence, so a record removed meanwhile shifts nothing.
    const rest = found.filter((row) => Number(row.record.sequence) > offset);
    const shown = rest.slice(0, PAGE_SIZE);
    const more = rest.length > PAGE_SIZE;
    return {
      shown: shown.map(({ record }) => {
        const { sequence: _sequence, ...rest } = record;
        return rest;
      }),
      records: {
        totalRecords: found.length,
        currentPageSize: shown.length,
        currentPageNumber: Math.floor((found.length - rest.length) / PAGE_SIZE),
        ...(more && {
          cursor: Buffer.from(JSON.stringify({ after: Number(shown.at(-1)!.record.sequence) })).toString(
            'base64url',
          ),
        }),
      },
    };
  };
  const timeOf = (ctx: Context, name: string): number | undefined => {
    const text = ctx.query[name];
    if (text === undefined) return undefined;
    const ms = Date.parse(String(text));
    if (Number.isNaN(ms) || !/^\d{4}-\d{2}-\d{2}T/.test(String(text)))
      throw new FakeHttpError(400, `${name} must be an ISO-8601 date-time`);
    return ms;
  };
  const strip = (record: Json) => {
    const { sequence: _sequence, ...rest } = record;
    return rest;
  };

  router.get('/v2/calls', (ctx) => {
    const from = timeOf(ctx, 'fromDateTime');
    const to = timeOf(ctx, 'toDateTime');
    if (ctx.query.workspaceId !== undefined && ctx.query.workspaceId !== WORKSPACE)
      throw new FakeHttpError(400, 'Invalid workspaceId');
    const found = calls
      .live()
      .filter((row) => {
        const started = Date.parse(String(row.record.started));
        return visible(row) && (from === undefined || started >= from) && (to === undefined || started < to);
      })
      .sort((a, b) => Number(a.record.sequence) - Number(b.record.sequence));
    const { shown, records } = page(ctx, 'calls', found);
    if (!shown.length) throw new FakeHttpError(404, 'No calls found corresponding to the provided filters');
    ctx.body = { requestId: requestId(), records, calls: shown };
  });

  router.get('/v2/calls/:id', (ctx) => {
    const row = calls.get(ctx.params.id);
    if (!row) throw new FakeHttpError(404, `Call ${ctx.params.id} not found`);
    ctx.body = { requestId: requestId(), call: strip(row.record) };
  });

  router.get('/v2/users', (ctx) => {
    const found = users.live().filter(visible);
    const { shown, records } = page(ctx, 'users', found);
    if (!shown.length) throw new FakeHttpError(404, 'No users found corresponding to the provided filters');
    ctx.body = {
      requestId: requestId(),
      records,
      users:
        ctx.query.includeAvatars === 'true' ? shown : shown.map(({ avatarUrl: _avatar, ...user }) => user),
    };
  });

  router.get('/v2/users/:id', (ctx) => {
    const row = users.get(ctx.params.id);
    if (!row) throw new FakeHttpError(404, `User ${ctx.params.id} not found`);
    ctx.body = { requestId: requestId(), user: strip(row.record) };
  });

  await fake.start();

  const newId = () => `77823422740${String(++counter).padStart(8, '0')}`;
  const storeOf = (object: string) => {
    if (object === 'calls') return calls;
    if (object === 'users') return users;
    throw new Error(`no object ${object}`);
  };

  return asConformanceFake(fake, {
    seed: (object, times) =>
      times.map((ms) => {
        const id = newId();
        const record: Json =
          object === 'calls'
            ? {
                id,
                url: `https://app.gong.io/call?id=${id}`,
                title: `Discovery call ${counter}`,
                scheduled: gongTime(ms),
                started: gongTime(ms),
                duration: 1800,
                primaryUserId: '234599484848423',
                direction: 'Conference',
                system: 'Zoom',
                scope: 'External',
                media: 'Video',
                language: 'eng',
                workspaceId: WORKSPACE,
                sdrDisposition: null,
                clientUniqueId: null,
                customData: null,
                purpose: null,
                meetingUrl: `https://zoom.us/j/${counter}`,
                isPrivate: false,
                calendarEventId: null,
                sequence: counter,
              }
            : {
                id,
                emailAddress: `user${counter}@example.com`,
                created: gongTime(ms),
                active: true,
                emailAliases: [],
                trustedEmailAddress: null,
                firstName: `First${counter}`,
                lastName: `Last${counter}`,
                title: 'Account Executive',
                phoneNumber: null,
                extension: null,
                personalMeetingUrls: [],
                settings: { webConferencesRecorded: true, preventWebConferenceRecording: false },
                managerId: null,
                meetingConsentPageUrl: null,
                spokenLanguages: [{ language: 'en-US', primary: true }],
                avatarUrl: `https://avatars.gong.io/${id}.png`,
                sequence: counter,
              };
        storeOf(object).put(id, record, ms);
        return id;
      }),
    touch(object, id, modifiedMs, options) {
      const row = storeOf(object).get(id);
      if (!row) throw new Error(`no ${object} ${id}`);
      // Gong changes a call after it starts (a new title, a processed recording) and a user's
      // profile, but writes no modification time on either.
      if (object === 'calls') row.record.title = `Discovery call (edited ${modifiedMs})`;
      else row.record.title = `Senior Account Executive (${modifiedMs})`;
      row.modifiedMs = modifiedMs;
      row.visibleFromMs = options?.visibleFromMs;
    },
    remove(object, id, atMs) {
      storeOf(object).remove(id, atMs);
    },
    stored: (object, id) => {
      const row = storeOf(object).get(id);
      return row && strip(row.record);
    },
  });
}

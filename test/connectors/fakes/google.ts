import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  asConformanceFake,
  bearerCredential,
  FakeHttpError,
  FakeProvider,
  RecordStore,
  type StoredRecord,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for three Google APIs a builder reads a user's calendar, address book and mail with,
 * written from their references:
 *
 * Calendar API v3 (https://developers.google.com/workspace/calendar/api/v3/reference/events/list,
 * .../events/insert, .../events/patch, .../events/delete, .../v3/errors,
 * https://developers.google.com/workspace/calendar/api/guides/sync), host www.googleapis.com:
 * - `GET /calendar/v3/calendars/{calendarId}/events` (`primary`: the user's own calendar) answers
 *   `{kind: "calendar#events", …, items, nextPageToken | nextSyncToken}`. `maxResults` defaults to
 *   250 and is never more than 2500; a page may hold fewer, `nextPageToken` says more follow.
 * - `updatedMin` (RFC 3339): a lower bound on an event's last modification, inclusive here (the
 *   reference says "lower bound"); "entries deleted since this time will always be included
 *   regardless of showDeleted". No upper bound exists. `orderBy=updated` sorts by last modification
 *   ascending; `orderBy=startTime` needs `singleEvents=true`; without `orderBy` the order is
 *   unspecified (creation order here).
 * - `updated`/`created` are RFC 3339 with milliseconds (`2024-01-01T10:00:00.123Z`).
 * - Deleted events are `status: "cancelled"`, listed only with `showDeleted=true`, `updatedMin` or a
 *   `syncToken`. "Deleted events are only guaranteed to have the id field populated. On the
 *   organizer's calendar, cancelled events continue to expose event details … However, incremental
 *   sync requests with showDeleted set to false will not return these details": every event here is
 *   on the user's own (organizer's) calendar, so a cancelled one keeps its details (`updated` = when
 *   it was deleted) when the listing says `showDeleted=true`, and is `kind`, `etag`, `id`, `status`
 *   only otherwise. `events.get` still returns them.
 * - The last page carries `nextSyncToken`; `syncToken` lists every change since (deletions always),
 *   and refuses `updatedMin`, `orderBy`, `timeMin`, `timeMax`, `q`, `iCalUID` beside it (400), and
 *   `showDeleted=false`.
 * - `POST …/events` needs `start` and `end` (`{dateTime}` or `{date}`), answers 200 with the event;
 *   `PATCH …/events/{id}` changes only the members sent; `DELETE …/events/{id}` answers 204 and
 *   cancels the event (410 `deleted` when it already was).
 *
 * People API v1 (https://developers.google.com/people/api/rest/v1/people.connections/list,
 * .../people/createContact, .../people/updateContact, .../people/deleteContact, .../people/get),
 * host people.googleapis.com:
 * - `GET /v1/people/me/connections`: `personFields` is required (a mask of `names`,
 *   `emailAddresses`, `organizations`, …, `metadata`); `resourceName` and `etag` always come back.
 *   `pageSize` 1 to 1000 (0 or none: 100); `sortOrder` `LAST_MODIFIED_ASCENDING` (the default),
 *   `LAST_MODIFIED_DESCENDING`, `FIRST_NAME_ASCENDING`, `LAST_NAME_ASCENDING`, not used when a sync
 *   is requested. Answers `{connections, nextPageToken?, nextSyncToken?, totalPeople, totalItems}`.
 * - No filter by modification time. A contact's modification time is its CONTACT source's
 *   `updateTime` (`metadata.sources[].updateTime`, RFC 3339), present when `personFields` asks for
 *   `metadata`.
 * - `requestSyncToken=true` puts `nextSyncToken` on the last page; `syncToken` lists the contacts
 *   changed since, deleted ones as `{resourceName, etag, metadata: {deleted: true}}`. Sync tokens
 *   expire 7 days after they were issued (400 `FAILED_PRECONDITION`, reason `EXPIRED_SYNC_TOKEN`);
 *   "writes may have a propagation delay of several minutes for sync requests": a change shows in a
 *   sync three minutes after it was made (a full listing shows it at once).
 * - `POST /v1/people:createContact` (200 with the person); `PATCH
 *   /v1/people/{id}:updateContact?updatePersonFields=names,…` replaces the fields named, and needs
 *   the contact's current etag in `metadata.sources[].etag` (400 `FAILED_PRECONDITION` when it
 *   differs, 400 when `metadata.sources` is absent); `DELETE /v1/people/{id}:deleteContact` (200 `{}`).
 *   `names` and `biographies` take one entry at most.
 *
 * Gmail API v1 (https://developers.google.com/workspace/gmail/api/reference/rest/v1/users.messages,
 * .../users.history/list, .../users/getProfile, https://developers.google.com/workspace/gmail/api/guides/sync,
 * .../guides/filtering, .../reference/quota), host gmail.googleapis.com, paths `/gmail/v1/users/me/…`:
 * - `GET …/messages` lists `{id, threadId}` stubs only, newest first: `maxResults` (100, at most
 *   500), `pageToken`, `labelIds`, `includeSpamTrash`, `q` (`after:`/`before:` in epoch seconds or
 *   a date read as midnight PST, and a few other operators); `resultSizeEstimate`.
 * - `GET …/messages/{id}` in `format` full, metadata (`metadataHeaders`), minimal or raw;
 *   `historyId` and `internalDate` (epoch ms) are strings. A message has no modification time.
 * - Writes: insert/import (`raw`: base64url RFC 2822), modify (labels), trash/untrash (the TRASH
 *   label), delete (204, permanent), batchModify/batchDelete. v1 has no update or patch.
 * - `GET …/history?startHistoryId=`: every change after it, in increasing history ids with gaps
 *   (messagesAdded, messagesDeleted, labelsAdded, labelsRemoved); a change gets its id when it
 *   commits on the provider's clock. History is kept a week (`gmailHistoryKeptMs`); an older start
 *   answers 404, after which a client syncs in full. `GET …/profile` gives the current `historyId`.
 * - 15,000 quota units a user a minute (a get 5, history 2, insert 25, …); beyond, 429
 *   `userRateLimitExceeded`.
 *
 * All: OAuth bearer tokens (401 `UNAUTHENTICATED` on a stale one); errors `{error: {code, message,
 * errors: [{message, domain, reason}], status}}`; a 429 is `RESOURCE_EXHAUSTED`. `fields` (a partial
 * response mask such as `items(id,summary),nextPageToken`) trims any answer.
 */

type Json = Record<string, unknown>;
type Row = StoredRecord<Json>;

const EVENTS_PAGE_DEFAULT = 250;
const EVENTS_PAGE_MAX = 2500;
const PEOPLE_PAGE_DEFAULT = 100;
const PEOPLE_PAGE_MAX = 1000;
const SYNC_LAG_MS = 180_000;
const SYNC_TOKEN_LIFE_MS = 7 * 86_400_000;
const OWNER = 'ada@example.com';
const GMAIL_PAGE_DEFAULT = 100;
const GMAIL_PAGE_MAX = 500;
const GMAIL_UNITS_PER_MINUTE = 15_000;
const GMAIL_FIRST_HISTORY_ID = 4_100_000;
/** "A historyId is typically valid for at least a week" (history.list). */
const GMAIL_HISTORY_KEPT_MS = 7 * 86_400_000;
/** System labels, and two of the user's own. */
const GMAIL_LABELS = [
  'INBOX',
  'SPAM',
  'TRASH',
  'UNREAD',
  'STARRED',
  'IMPORTANT',
  'SENT',
  'DRAFT',
  'CHAT',
  'CATEGORY_PERSONAL',
  'CATEGORY_SOCIAL',
  'CATEGORY_PROMOTIONS',
  'CATEGORY_UPDATES',
  'CATEGORY_FORUMS',
  'Label_1',
  'Label_2',
];

const personFieldNames = [
  'addresses',
  'ageRanges',
  'biographies',
  'birthdays',
  'calendarUrls',
  'clientData',
  'coverPhotos',
  'emailAddresses',
  'events',
  'externalIds',
  'genders',
  'imClients',
  'interests',
  'locales',
  'locations',
  'memberships',
  'metadata',
  'miscKeywords',
  'names',
  'nicknames',
  'occupations',
  'organizations',
  'phoneNumbers',
  'photos',
  'relations',
  'sipAddresses',
  'skills',
  'urls',
  'userDefined',
];
/** Fields `updatePersonFields` may name (photos, metadata and the like are not contact data). */
const updatableFields = personFieldNames.filter(
  (name) => !['ageRanges', 'coverPhotos', 'metadata', 'photos', 'skills'].includes(name),
);
const singletonFields = ['names', 'biographies', 'birthdays', 'genders'];

const statusText: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  410: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

const iso = (ms: number) => new Date(ms).toISOString();
const invalid = (message: string, reason = 'invalid') => new FakeHttpError(400, message, reason);

/** A partial-response mask (`items(id,summary),nextPageToken`, `a/b`) as a tree; `null`: the whole member. */
type Mask = Map<string, Mask | null>;

function parseMask(text: string): Mask {
  let at = 0;
  const list = (into: Mask, nested: boolean): Mask => {
    for (;;) {
      let name = '';
      while (at < text.length && !',()'.includes(text[at])) name += text[at++];
      const path = name.trim().split('/');
      let node = into;
      path.forEach((segment, index) => {
        if (!segment) throw invalid(`Invalid field selection ${text}`, 'invalidParameter');
        if (index < path.length - 1) {
          const next = node.get(segment) ?? new Map();
          node.set(segment, next);
          node = next;
        } else if (text[at] === '(') {
          at++;
          node.set(segment, list((node.get(segment) as Mask | undefined) ?? new Map(), true));
        } else node.set(segment, null);
      });
      if (text[at] === ',') {
        at++;
        continue;
      }
      if (text[at] === ')') {
        if (!nested) throw invalid(`Invalid field selection ${text}`, 'invalidParameter');
        at++;
      }
      return into;
    }
  };
  return list(new Map(), false);
}

function project(value: unknown, mask: Mask): unknown {
  if (Array.isArray(value)) return value.map((item) => project(item, mask));
  if (!value || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [name, sub] of mask) {
    const member = (value as Json)[name];
    if (member !== undefined) out[name] = sub ? project(member, sub) : member;
  }
  return out;
}

/** Opaque tokens: base64url JSON. */
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
function decode<T>(token: string, what: string): T {
  try {
    return JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as T;
  } catch {
    throw invalid(`Invalid ${what}.`, 'invalid');
  }
}

function timeParameter(text: unknown, name: string): number {
  const value = String(text);
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value)
    ? Date.parse(value)
    : NaN;
  if (Number.isNaN(ms)) throw invalid(`Invalid value for: ${name}`, 'invalid');
  return ms;
}

/**
 * A Gmail search date (`after:`, `before:`): epoch seconds, or `YYYY/MM/DD` read as midnight PST
 * ("All dates used in the search query are interpreted as midnight on that date in the PST
 * timezone", guides/filtering; UTC-8 here). Undefined when it is neither.
 */
function dateOperand(value: string): number | undefined {
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = /^(\d{4})[/-](\d{1,2})[/-](\d{1,2})$/.exec(value);
  return date ? Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]), 8) : undefined;
}

function pageSizeOf(ctx: Context, name: string, fallback: number, max: number, clamp: boolean): number {
  const text = ctx.query[name];
  if (text === undefined || text === '0') return fallback;
  const size = Number(text);
  if (!Number.isInteger(size) || size < 1 || (!clamp && size > max))
    throw invalid(`${name} must be between 1 and ${max}.`, 'invalid');
  return Math.min(size, max);
}

export interface FakeGoogleOptions {
  /** How long Gmail keeps history records (default a week); an older `startHistoryId` answers 404. */
  gmailHistoryKeptMs?: number;
}

export async function startFakeGoogle({
  gmailHistoryKeptMs = GMAIL_HISTORY_KEPT_MS,
}: FakeGoogleOptions = {}): Promise<ConformanceFake> {
  const events = new RecordStore<Json>();
  const people = new RecordStore<Json>();
  /** Order of creation, for listings without an order of their own. */
  const sequence = new Map<string, number>();
  let counter = 0;

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => {
      const reason =
        error.status === 401
          ? 'authError'
          : error.status === 429
            ? (error.code ?? 'rateLimitExceeded')
            : error.status >= 500
              ? 'backendError'
              : (error.code ?? (error.status === 404 ? 'notFound' : 'invalid'));
      const message =
        error.status === 401
          ? 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.'
          : error.message;
      const status =
        reason === 'failedPrecondition' ? 'FAILED_PRECONDITION' : (statusText[error.status] ?? 'UNKNOWN');
      return {
        error: { code: error.status, message, errors: [{ message, domain: 'global', reason }], status },
      };
    },
    rateLimitCode: 'rateLimitExceeded',
  });
  const now = () => fake.now();
  const router = fake.router;

  // Partial responses (`fields`), the same on every Google API.
  router.use(async (ctx, next) => {
    await next();
    const fields = ctx.query.fields;
    if (typeof fields === 'string' && fields && ctx.body && typeof ctx.body === 'object')
      ctx.body = project(ctx.body, parseMask(fields));
  });

  const visibleAt = (row: Row) => (row.deleted ? row.deletedMs! : (row.visibleFromMs ?? row.modifiedMs));

  // ---- Calendar ----

  const calendarOf = (ctx: Context) => {
    const id = ctx.params.calendarId;
    if (id !== 'primary' && id !== OWNER) throw new FakeHttpError(404, 'Not Found', 'notFound');
  };
  /**
   * A cancelled event keeps its details on the organizer's calendar when the listing asks with
   * `showDeleted=true`; otherwise only its id is guaranteed (kind, etag and status here).
   */
  const presentEvent = (row: Row, details = true): Json =>
    row.deleted && !details
      ? { kind: 'calendar#event', etag: row.record.etag, id: row.record.id, status: 'cancelled' }
      : row.record;
  const eventRow = (id: string): Row => {
    const row = events.rows.get(id);
    if (!row) throw new FakeHttpError(404, 'Not Found', 'notFound');
    return row;
  };
  const stampEvent = (row: Row, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = ms;
    row.visibleFromMs = visibleFromMs;
    row.record.updated = iso(ms);
    row.record.etag = `"${ms}${sequence.get(String(row.record.id))}"`;
  };
  const newEvent = (values: Json, ms: number): Row => {
    const id = `ev${String(++counter).padStart(10, '0')}`;
    sequence.set(id, counter);
    const record: Json = {
      kind: 'calendar#event',
      etag: '',
      id,
      status: 'confirmed',
      htmlLink: `https://www.google.com/calendar/event?eid=${id}`,
      created: iso(ms),
      updated: iso(ms),
      summary: null,
      creator: { email: OWNER, self: true },
      organizer: { email: OWNER, self: true },
      iCalUID: `${id}@google.com`,
      sequence: 0,
      reminders: { useDefault: true },
      eventType: 'default',
      ...values,
    };
    events.put(id, record, ms);
    const row = events.rows.get(id)!;
    stampEvent(row, ms);
    return row;
  };
  const cancelEvent = (id: string, ms: number) => {
    const row = events.remove(id, ms);
    if (!row) return;
    row.record.status = 'cancelled';
    row.record.updated = iso(ms);
    row.record.etag = `"${ms}${sequence.get(id)}"`;
  };
  const checkTimes = (values: Json) => {
    for (const end of ['start', 'end']) {
      const time = values[end] as Json | undefined;
      if (!time || typeof time !== 'object' || (!time.dateTime && !time.date))
        throw new FakeHttpError(400, `Missing ${end} time.`, 'required');
    }
  };
  const readOnlyEvent = ['kind', 'etag', 'id', 'htmlLink', 'created', 'updated', 'creator', 'iCalUID'];
  const eventValues = (ctx: Context): Json => {
    const body = ctx.request.body as Json | undefined;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw invalid('Invalid event.', 'badRequest');
    // Output-only members are ignored, as Calendar does.
    return Object.fromEntries(Object.entries(body).filter(([name]) => !readOnlyEvent.includes(name)));
  };

  router.get('/calendar/v3/calendars/:calendarId/events', (ctx) => {
    calendarOf(ctx);
    const size = pageSizeOf(ctx, 'maxResults', EVENTS_PAGE_DEFAULT, EVENTS_PAGE_MAX, true);
    fake.logListing(ctx, { object: 'events', pageSize: size, maxPageSize: EVENTS_PAGE_MAX });
    const query = ctx.query;
    const showDeleted = query.showDeleted === 'true';
    const orderBy = query.orderBy === undefined ? undefined : String(query.orderBy);
    if (orderBy !== undefined && orderBy !== 'updated' && orderBy !== 'startTime')
      throw invalid('Invalid value for: orderBy', 'invalid');
    if (orderBy === 'startTime' && query.singleEvents !== 'true')
      throw invalid('The requested ordering is not available for the particular query.', 'badRequest');

    type Position = { startedAt: number; after?: [number, number] };
    const position: Position | undefined =
      query.pageToken === undefined ? undefined : decode<Position>(String(query.pageToken), 'page token');
    const startedAt = position?.startedAt ?? now();
    let rows: Row[];
    if (query.syncToken !== undefined) {
      for (const name of ['updatedMin', 'orderBy', 'timeMin', 'timeMax', 'q', 'iCalUID'])
        if (query[name] !== undefined)
          throw invalid(`${name} cannot be used together with a sync token.`, 'invalid');
      if (query.showDeleted === 'false')
        throw invalid('showDeleted cannot be false with a sync token.', 'invalid');
      const { issuedAt } = decode<{ issuedAt: number }>(String(query.syncToken), 'sync token');
      rows = [...events.rows.values()].filter(
        (row) => visibleAt(row) > issuedAt && visibleAt(row) <= startedAt,
      );
    } else {
      const updatedMin =
        query.updatedMin === undefined ? undefined : timeParameter(query.updatedMin, 'updatedMin');
      rows = [...events.rows.values()].filter((row) =>
        row.deleted
          ? row.deletedMs! <= startedAt &&
            (updatedMin !== undefined ? row.deletedMs! >= updatedMin : showDeleted)
          : row.modifiedMs >= (updatedMin ?? -Infinity) && visibleAt(row) <= startedAt,
      );
    }
    const keyOf = (row: Row): [number, number] => [
      orderBy === 'updated' ? row.modifiedMs : 0,
      sequence.get(String(row.record.id))!,
    ];
    const compare = (a: [number, number], b: [number, number]) => a[0] - b[0] || a[1] - b[1];
    const sorted = rows
      .map((row) => ({ row, key: keyOf(row) }))
      .sort((a, b) => compare(a.key, b.key))
      .filter(({ key }) => !position?.after || compare(key, position.after) > 0);
    const page = sorted.slice(0, size);
    const more = sorted.length > size;
    ctx.body = {
      kind: 'calendar#events',
      etag: `"${startedAt}"`,
      summary: OWNER,
      updated: iso(now()),
      timeZone: 'UTC',
      accessRole: 'owner',
      defaultReminders: [],
      ...(more
        ? { nextPageToken: encode({ startedAt, after: page.at(-1)!.key } satisfies Position) }
        : { nextSyncToken: encode({ issuedAt: startedAt }) }),
      items: page.map(({ row }) => presentEvent(row, showDeleted)),
    };
  });

  router.get('/calendar/v3/calendars/:calendarId/events/:eventId', (ctx) => {
    calendarOf(ctx);
    ctx.body = presentEvent(eventRow(ctx.params.eventId));
  });

  router.post('/calendar/v3/calendars/:calendarId/events', (ctx) => {
    calendarOf(ctx);
    const values = eventValues(ctx);
    checkTimes(values);
    ctx.body = newEvent(values, now()).record;
  });

  router.patch('/calendar/v3/calendars/:calendarId/events/:eventId', (ctx) => {
    calendarOf(ctx);
    const row = eventRow(ctx.params.eventId);
    if (row.deleted) throw new FakeHttpError(410, 'Resource has been deleted', 'deleted');
    const values = eventValues(ctx);
    checkTimes({ start: row.record.start, end: row.record.end, ...values });
    Object.assign(row.record, values);
    row.record.sequence = Number(row.record.sequence) + 1;
    stampEvent(row, now());
    ctx.body = row.record;
  });

  router.delete('/calendar/v3/calendars/:calendarId/events/:eventId', (ctx) => {
    calendarOf(ctx);
    const row = eventRow(ctx.params.eventId);
    if (row.deleted) throw new FakeHttpError(410, 'Resource has been deleted', 'deleted');
    cancelEvent(ctx.params.eventId, now());
    ctx.status = 204;
  });

  // ---- People ----

  const personRow = (resourceName: string): Row => {
    const row = people.get(resourceName);
    if (!row) throw new FakeHttpError(404, 'Requested entity was not found.', 'notFound');
    return row;
  };
  const maskOf = (text: unknown, name: string, required: boolean, allowed = personFieldNames): string[] => {
    if (text === undefined || text === '') {
      if (required) throw invalid(`${name} mask is required. Please specify one or more valid paths.`);
      return personFieldNames;
    }
    const fields = String(text)
      .split(',')
      .map((field) => field.trim().replace(/^person\./, ''));
    for (const field of fields)
      if (!allowed.includes(field))
        throw invalid(
          `Invalid ${name} mask path: "${field}". Valid paths are documented at https://developers.google.com/people/api/rest/v1/people/get.`,
        );
    return fields;
  };
  const sourceOf = (row: Row) => ((row.record.metadata as Json).sources as Json[])[0];
  const presentPerson = (row: Row, fields: string[]): Json =>
    row.deleted
      ? {
          resourceName: row.record.resourceName,
          etag: row.record.etag,
          metadata: { deleted: true, objectType: 'PERSON' },
        }
      : Object.fromEntries(
          Object.entries(row.record).filter(
            ([name]) => name === 'resourceName' || name === 'etag' || fields.includes(name),
          ),
        );
  /** Entries as People returns them: each with its own field metadata. */
  const withFieldMetadata = (id: string, values: Json): Json =>
    Object.fromEntries(
      Object.entries(values).map(([name, entries]) => [
        name,
        Array.isArray(entries)
          ? entries.map((entry: Json, index) => {
              const shaped: Json = {
                metadata: { primary: index === 0, source: { type: 'CONTACT', id } },
                ...entry,
              };
              if (name === 'names')
                shaped.displayName = [entry.givenName, entry.familyName].filter(Boolean).join(' ');
              return shaped;
            })
          : entries,
      ]),
    );
  const stampPerson = (row: Row, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = ms;
    row.visibleFromMs = visibleFromMs;
    const etag = `%Eg${encode([row.record.resourceName, ms, ++counter])}`;
    row.record.etag = etag;
    Object.assign(sourceOf(row), { etag: `#${etag.slice(3)}`, updateTime: iso(ms) });
  };
  const personValues = (ctx: Context): Json => {
    const body = ctx.request.body as Json | undefined;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw invalid('Invalid JSON payload received.');
    for (const [name, value] of Object.entries(body)) {
      if (['resourceName', 'etag', 'metadata'].includes(name)) continue;
      if (!personFieldNames.includes(name))
        throw invalid(
          `Invalid JSON payload received. Unknown name "${name}" at 'person': Cannot find field.`,
        );
      if (!Array.isArray(value))
        throw invalid(`Invalid value at 'person.${name}', expected a list of ${name}.`);
      if (singletonFields.includes(name) && value.length > 1)
        throw invalid(`Only one ${name} field is allowed on a contact.`);
    }
    return body;
  };
  const newPerson = (values: Json, ms: number): Row => {
    const number = ++counter;
    const resourceName = `people/c${String(7_000_000_000 + number)}`;
    const sourceId = number.toString(16).padStart(14, '0');
    sequence.set(resourceName, number);
    const contact = Object.fromEntries(
      Object.entries(values).filter(([name]) => personFieldNames.includes(name) && name !== 'metadata'),
    );
    const record: Json = {
      resourceName,
      etag: '',
      metadata: {
        sources: [{ type: 'CONTACT', id: sourceId, etag: '', updateTime: iso(ms) }],
        objectType: 'PERSON',
      },
      ...withFieldMetadata(sourceId, contact),
    };
    people.put(resourceName, record, ms);
    const row = people.rows.get(resourceName)!;
    stampPerson(row, ms);
    return row;
  };

  router.get('/v1/people/me/connections', (ctx) => {
    const query = ctx.query;
    const size = pageSizeOf(ctx, 'pageSize', PEOPLE_PAGE_DEFAULT, PEOPLE_PAGE_MAX, false);
    fake.logListing(ctx, { object: 'connections', pageSize: size, maxPageSize: PEOPLE_PAGE_MAX });
    const fields = maskOf(query.personFields ?? query['requestMask.includeField'], 'personFields', true);
    const sortOrder = String(query.sortOrder ?? 'LAST_MODIFIED_ASCENDING');
    const orders = [
      'LAST_MODIFIED_ASCENDING',
      'LAST_MODIFIED_DESCENDING',
      'FIRST_NAME_ASCENDING',
      'LAST_NAME_ASCENDING',
    ];
    if (!orders.includes(sortOrder)) throw invalid(`Invalid value at 'sort_order' (${sortOrder})`);

    type Position = { startedAt: number; after?: [number | string, number] };
    const position: Position | undefined =
      query.pageToken === undefined ? undefined : decode<Position>(String(query.pageToken), 'page token');
    const startedAt = position?.startedAt ?? now();
    const syncing = query.syncToken !== undefined;
    let rows: Row[];
    if (syncing) {
      const { issuedAt } = decode<{ issuedAt: number }>(String(query.syncToken), 'sync token');
      if (startedAt - issuedAt > SYNC_TOKEN_LIFE_MS)
        throw new FakeHttpError(
          400,
          'Sync token is expired. Clear local cache and retry call without the sync token.',
          'failedPrecondition',
        );
      // A position in the change log: a change enters it (after the propagation delay) once.
      rows = [...people.rows.values()].filter((row) => {
        const at = visibleAt(row) + SYNC_LAG_MS;
        return at > issuedAt && at <= startedAt;
      });
    } else rows = people.live().filter((row) => visibleAt(row) <= startedAt);

    const firstName = (row: Row) =>
      String(((row.record.names as Json[] | undefined)?.[0]?.givenName as string) ?? '');
    const lastName = (row: Row) =>
      String(((row.record.names as Json[] | undefined)?.[0]?.familyName as string) ?? '');
    const order = syncing || query.requestSyncToken === 'true' ? 'LAST_MODIFIED_ASCENDING' : sortOrder;
    const keyOf = (row: Row): [number | string, number] => {
      const seq = sequence.get(String(row.record.resourceName))!;
      if (order === 'FIRST_NAME_ASCENDING') return [firstName(row), seq];
      if (order === 'LAST_NAME_ASCENDING') return [lastName(row), seq];
      return [order === 'LAST_MODIFIED_DESCENDING' ? -row.modifiedMs : row.modifiedMs, seq];
    };
    const compare = (a: [number | string, number], b: [number | string, number]) =>
      (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0) || a[1] - b[1];
    const sorted = rows
      .map((row) => ({ row, key: keyOf(row) }))
      .sort((a, b) => compare(a.key, b.key))
      .filter(({ key }) => !position?.after || compare(key, position.after) > 0);
    const page = sorted.slice(0, size);
    const more = sorted.length > size;
    const sync = syncing || query.requestSyncToken === 'true';
    ctx.body = {
      connections: page.map(({ row }) => presentPerson(row, fields)),
      ...(more && { nextPageToken: encode({ startedAt, after: page.at(-1)!.key } satisfies Position) }),
      ...(!more && sync && { nextSyncToken: encode({ issuedAt: startedAt }) }),
      totalPeople: people.live().length,
      totalItems: people.live().length,
    };
  });

  // Custom methods (`people/c123:updateContact`): the colon stays inside the path's last segment.
  const customMethod = (ctx: Context, verb: string): string => {
    const [person, method] = String(ctx.params.segment).split(':');
    if (method !== verb) throw new FakeHttpError(404, `No route for ${ctx.method} ${ctx.path}`, 'notFound');
    return `people/${person}`;
  };
  const returned = (ctx: Context) => maskOf(ctx.query.personFields, 'personFields', false);

  router.get('/v1/people/:segment', (ctx) => {
    const row = personRow(`people/${ctx.params.segment}`);
    ctx.body = presentPerson(row, maskOf(ctx.query.personFields, 'personFields', true));
  });

  router.post('/v1/:segment', (ctx) => {
    if (ctx.params.segment !== 'people:createContact')
      throw new FakeHttpError(404, `No route for ${ctx.method} ${ctx.path}`, 'notFound');
    ctx.body = presentPerson(newPerson(personValues(ctx), now()), returned(ctx));
  });

  router.patch('/v1/people/:segment', (ctx) => {
    const row = personRow(customMethod(ctx, 'updateContact'));
    const update = maskOf(ctx.query.updatePersonFields, 'updatePersonFields', true, updatableFields);
    const values = personValues(ctx);
    const sources = (values.metadata as Json | undefined)?.sources as Json[] | undefined;
    const contactSource = sources?.find((source) => source.type === 'CONTACT');
    if (!contactSource)
      throw invalid('person.metadata.sources must be specified and contain a CONTACT source.');
    if (contactSource.etag !== sourceOf(row).etag)
      throw new FakeHttpError(
        400,
        'Request person.etag is different than the current person.etag. Clear local cache and get the latest person.',
        'failedPrecondition',
      );
    const sourceId = String(sourceOf(row).id);
    // Every field named is replaced: one named but not sent is cleared.
    for (const field of update) {
      if (Array.isArray(values[field]) && (values[field] as unknown[]).length)
        row.record[field] = withFieldMetadata(sourceId, { [field]: values[field] })[field];
      else delete row.record[field];
    }
    stampPerson(row, now());
    ctx.body = presentPerson(row, returned(ctx));
  });

  router.delete('/v1/people/:segment', (ctx) => {
    const resourceName = customMethod(ctx, 'deleteContact');
    personRow(resourceName);
    people.remove(resourceName, now());
    ctx.body = {};
  });

  // ---- Gmail ----

  /**
   * The mailbox's history: every change (a message added or deleted, labels added or removed) is
   * committed at its time on the provider's clock (a change stamped ahead of the clock, or shown
   * late, waits until then) and gets the next history id then, so ids follow commit order, with
   * gaps as Gmail's do. Records older than `gmailHistoryKeptMs` are forgotten.
   */
  type HistoryKind = 'messageAdded' | 'messageDeleted' | 'labelAdded' | 'labelRemoved';
  type HistoryEntry = { id: number; at: number; kind: HistoryKind; message: Json; labelIds?: string[] };
  type PendingChange = { at: number; order: number; apply: (at: number) => void };
  const mailbox = new Map<string, Json>();
  /** The RFC 2822 text of each live message, for `format=raw`. */
  const rawText = new Map<string, string>();
  const history: HistoryEntry[] = [];
  const pending: PendingChange[] = [];
  let mailboxHistoryId = GMAIL_FIRST_HISTORY_ID;
  /** The newest history id forgotten: a `startHistoryId` below it cannot be served (404). */
  let forgottenThrough = 0;
  let pendingOrder = 0;
  let messageCounter = 0;
  const quota: { at: number; units: number }[] = [];

  const nextHistoryId = () => (mailboxHistoryId += 1 + (mailboxHistoryId % 4));
  const stub = (message: Json) => ({ id: message.id, threadId: message.threadId });
  const labelsOf = (message: Json) => message.labelIds as string[];
  const note = (kind: HistoryKind, message: Json, at: number, labelIds?: string[]) => {
    const id = nextHistoryId();
    message.historyId = String(id);
    history.push({
      id,
      at,
      kind,
      message: { ...stub(message), labelIds: [...labelsOf(message)] },
      ...(labelIds && { labelIds }),
    });
  };
  /** Commits every change due by now, oldest first, and forgets history older than the kept window. */
  const settle = () => {
    const at = now();
    pending.sort((a, b) => a.at - b.at || a.order - b.order);
    while (pending.length && pending[0].at <= at) {
      const change = pending.shift()!;
      change.apply(change.at);
    }
    while (history.length && history[0].at < at - gmailHistoryKeptMs) forgottenThrough = history.shift()!.id;
  };
  const schedule = (at: number, apply: (at: number) => void) =>
    pending.push({ at, order: ++pendingOrder, apply });
  /** A change made through the API: committed now, after whatever was due before it. */
  const commitNow = (apply: (at: number) => void) => {
    settle();
    apply(now());
  };

  const addMessage = (message: Json, raw: string, at: number) => {
    mailbox.set(String(message.id), message);
    rawText.set(String(message.id), raw);
    note('messageAdded', message, at);
  };
  /** Adds and removes labels; each actual change is one history record. */
  const relabel = (message: Json, add: string[], remove: string[], at: number) => {
    const labels = labelsOf(message);
    const added = [...new Set(add)].filter((label) => !labels.includes(label));
    const removed = [...new Set(remove)].filter((label) => labels.includes(label) && !add.includes(label));
    if (added.length) {
      message.labelIds = [...labels, ...added];
      note('labelAdded', message, at, added);
    }
    if (removed.length) {
      message.labelIds = labelsOf(message).filter((label) => !removed.includes(label));
      note('labelRemoved', message, at, removed);
    }
  };
  const deleteMessage = (message: Json, at: number) => {
    mailbox.delete(String(message.id));
    rawText.delete(String(message.id));
    note('messageDeleted', message, at);
  };

  const userOf = (ctx: Context) => {
    const user = ctx.params.userId;
    if (user !== 'me' && user !== OWNER)
      throw new FakeHttpError(403, `Delegation denied for ${OWNER}`, 'forbidden');
  };
  const messageOf = (id: string): Json => {
    const message = mailbox.get(id);
    if (!message) throw new FakeHttpError(404, 'Requested entity was not found.', 'notFound');
    return message;
  };
  const labelList = (value: unknown, name: string): string[] => {
    if (value === undefined) return [];
    const labels = typeof value === 'string' ? [value] : value;
    if (!Array.isArray(labels) || labels.some((label) => typeof label !== 'string'))
      throw invalid(`Invalid value at '${name}'`, 'invalidArgument');
    for (const label of labels as string[])
      if (!GMAIL_LABELS.includes(label)) throw invalid(`Invalid label: ${label}`, 'invalidArgument');
    return labels as string[];
  };
  const queryList = (value: string | string[] | undefined): string[] =>
    value === undefined ? [] : (Array.isArray(value) ? value : [value]).flatMap((item) => item.split(','));
  const headerOf = (message: Json, name: string) =>
    String(
      (((message.payload as Json).headers as Json[]).find(
        (header) => String(header.name).toLowerCase() === name.toLowerCase(),
      )?.value as string | undefined) ?? '',
    );

  /** A message as `messages.get` answers it in `format` (full, metadata, minimal or raw). */
  const presentMessage = (message: Json, format: string, metadataHeaders: string[]): Json => {
    const { payload, ...rest } = message;
    if (format === 'minimal') return rest;
    if (format === 'raw')
      return { ...rest, raw: Buffer.from(rawText.get(String(message.id))!).toString('base64url') };
    if (format === 'metadata') {
      const wanted = metadataHeaders.map((name) => name.toLowerCase());
      const headers = ((payload as Json).headers as Json[]).filter(
        (header) => !wanted.length || wanted.includes(String(header.name).toLowerCase()),
      );
      return { ...rest, payload: { mimeType: (payload as Json).mimeType, headers } };
    }
    return message;
  };

  /** A message from its RFC 2822 text (one part: the body is kept whole, not split into MIME parts). */
  const parseRaw = (raw: string) => {
    const split = /\r?\n\r?\n/.exec(raw);
    const head = split ? raw.slice(0, split.index) : raw;
    const body = split ? raw.slice(split.index + split[0].length) : '';
    const headers = head
      .replace(/\r?\n[ \t]+/g, ' ')
      .split(/\r?\n/)
      .filter((line) => line.includes(':'))
      .map((line) => ({
        name: line.slice(0, line.indexOf(':')).trim(),
        value: line.slice(line.indexOf(':') + 1).trim(),
      }));
    if (!headers.length) throw invalid('Invalid raw message: no headers.', 'invalidArgument');
    return { headers, body };
  };
  const newMessage = (raw: string, labelIds: string[], internalDate: number, threadId?: string): Json => {
    const { headers, body } = parseRaw(raw);
    const id = (0x18f2c00000000000n + BigInt(++messageCounter)).toString(16);
    const contentType = headers.find((header) => header.name.toLowerCase() === 'content-type')?.value;
    return {
      id,
      threadId: threadId && [...mailbox.values()].some((m) => m.threadId === threadId) ? threadId : id,
      labelIds,
      snippet: body.replace(/\s+/g, ' ').trim().slice(0, 200),
      historyId: '',
      internalDate: String(internalDate),
      sizeEstimate: Buffer.byteLength(raw),
      payload: {
        partId: '',
        mimeType: contentType?.split(';')[0].trim() ?? 'text/plain',
        filename: '',
        headers,
        body: { size: Buffer.byteLength(body), data: Buffer.from(body).toString('base64url') },
      },
    };
  };
  const rawOf = (index: number, receivedMs: number) =>
    [
      `From: Sender ${index} <sender${index}@example.com>`,
      `To: ${OWNER}`,
      `Subject: Message ${index}`,
      `Date: ${new Date(receivedMs).toUTCString()}`,
      `Message-ID: <m${index}@example.com>`,
      'Content-Type: text/plain; charset="UTF-8"',
      '',
      `Body of message ${index}.`,
    ].join('\r\n');

  /**
   * The search operators `q` takes here: `after:`/`before:` (epoch seconds, or a date read as
   * midnight Pacific Standard Time), `newer_than:`/`older_than:` (`2d`, `3m`, `1y`), `label:`,
   * `in:`, `is:`, `from:`, `to:`, `subject:`, and bare words (in the subject, sender, recipients or
   * snippet). Every term must hold (AND).
   */
  const matcher = (q: string | undefined): { test: (message: Json) => boolean; spamTrash: boolean } => {
    const terms = (q ?? '').match(/(?:[^\s"]+|"[^"]*")+/g) ?? [];
    let spamTrash = false;
    const tests = terms.map((term): ((message: Json) => boolean) => {
      const colon = term.indexOf(':');
      const operator = colon > 0 ? term.slice(0, colon).toLowerCase() : '';
      const value = (colon > 0 ? term.slice(colon + 1) : term).replace(/"/g, '').toLowerCase();
      const received = (message: Json) => Number(message.internalDate);
      switch (operator) {
        case 'after':
        case 'before': {
          const bound = dateOperand(value);
          if (bound === undefined) return () => false;
          return operator === 'after' ? (m) => received(m) >= bound : (m) => received(m) < bound;
        }
        case 'newer_than':
        case 'older_than': {
          const age = /^(\d+)([dmy])$/.exec(value);
          if (!age) return () => false;
          const bound =
            now() -
            Number(age[1]) * { d: 86_400_000, m: 30 * 86_400_000, y: 365 * 86_400_000 }[age[2] as 'd'];
          return operator === 'newer_than' ? (m) => received(m) >= bound : (m) => received(m) < bound;
        }
        case 'label':
        case 'in':
        case 'is': {
          if (value === 'anywhere') {
            spamTrash = true;
            return () => true;
          }
          const label = value === 'read' ? 'UNREAD' : value.toUpperCase();
          if (label === 'SPAM' || label === 'TRASH') spamTrash = true;
          return value === 'read'
            ? (m) => !labelsOf(m).includes('UNREAD')
            : (m) => labelsOf(m).some((id) => id.toUpperCase() === label);
        }
        case 'from':
        case 'to':
        case 'subject':
          return (m) => headerOf(m, operator).toLowerCase().includes(value);
        default:
          return (m) =>
            [headerOf(m, 'subject'), headerOf(m, 'from'), headerOf(m, 'to'), String(m.snippet)]
              .join(' ')
              .toLowerCase()
              .includes(term.replace(/"/g, '').toLowerCase());
      }
    });
    return { test: (message) => tests.every((test) => test(message)), spamTrash };
  };

  // Quota units (https://developers.google.com/workspace/gmail/api/reference/quota), spent on real
  // time: 15,000 a user a minute; beyond, 429 `userRateLimitExceeded` (Gmail sends no Retry-After).
  const costOf = (method: string, path: string): number => {
    if (path.endsWith('/profile')) return 1;
    if (path.endsWith('/history')) return 2;
    if (/\/messages\/(batchModify|batchDelete)$/.test(path)) return 50;
    if (method === 'POST' && /\/messages(\/import)?$/.test(path)) return 25;
    if (method === 'DELETE') return 10;
    return 5;
  };
  router.use('/gmail/v1/users/:userId', async (ctx, next) => {
    const at = Date.now();
    while (quota.length && quota[0].at <= at - 60_000) quota.shift();
    const units = costOf(ctx.method, ctx.path);
    if (quota.reduce((sum, spent) => sum + spent.units, 0) + units > GMAIL_UNITS_PER_MINUTE)
      throw new FakeHttpError(
        429,
        "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute per user' of service 'gmail.googleapis.com'.",
        'userRateLimitExceeded',
      );
    quota.push({ at, units });
    userOf(ctx);
    settle();
    await next();
  });

  router.get('/gmail/v1/users/:userId/profile', (ctx) => {
    const live = [...mailbox.values()];
    ctx.body = {
      emailAddress: OWNER,
      messagesTotal: live.length,
      threadsTotal: new Set(live.map((message) => message.threadId)).size,
      historyId: String(mailboxHistoryId),
    };
  });

  router.get('/gmail/v1/users/:userId/messages', (ctx) => {
    const query = ctx.query;
    const size = pageSizeOf(ctx, 'maxResults', GMAIL_PAGE_DEFAULT, GMAIL_PAGE_MAX, true);
    fake.logListing(ctx, { object: 'messages', pageSize: size, maxPageSize: GMAIL_PAGE_MAX });
    const labelIds = queryList(query.labelIds);
    const search = matcher(query.q === undefined ? undefined : String(query.q));
    const spamTrash =
      query.includeSpamTrash === 'true' ||
      search.spamTrash ||
      labelIds.some((label) => label === 'SPAM' || label === 'TRASH');
    type Position = { before: [number, number] };
    const position =
      query.pageToken === undefined ? undefined : decode<Position>(String(query.pageToken), 'page token');
    const keyOf = (message: Json): [number, number] => [
      Number(message.internalDate),
      Number(BigInt(`0x${String(message.id)}`) - 0x18f2c00000000000n),
    ];
    // Newest first: by internal date, then by id.
    const compare = (a: [number, number], b: [number, number]) => b[0] - a[0] || b[1] - a[1];
    const matches = [...mailbox.values()]
      .filter(
        (message) =>
          labelIds.every((label) => labelsOf(message).includes(label)) &&
          (spamTrash || !labelsOf(message).some((label) => label === 'SPAM' || label === 'TRASH')) &&
          search.test(message),
      )
      .map((message) => ({ message, key: keyOf(message) }))
      .sort((a, b) => compare(a.key, b.key));
    const rest = matches.filter(({ key }) => !position || compare(key, position.before) > 0);
    const page = rest.slice(0, size);
    ctx.body = {
      ...(page.length && { messages: page.map(({ message }) => stub(message)) }),
      ...(rest.length > size && {
        nextPageToken: encode({ before: page.at(-1)!.key } satisfies Position),
      }),
      resultSizeEstimate: matches.length,
    };
  });

  router.get('/gmail/v1/users/:userId/messages/:id', (ctx) => {
    const format = String(ctx.query.format ?? 'full').toLowerCase();
    if (!['full', 'metadata', 'minimal', 'raw'].includes(format))
      throw invalid(`Invalid value at 'format' (${format})`, 'invalidArgument');
    ctx.body = presentMessage(messageOf(ctx.params.id), format, queryList(ctx.query.metadataHeaders));
  });

  // messages.insert (IMAP APPEND: no sending, no classification) and messages.import (as received
  // by SMTP: internal date from the Date header by default), both with `raw` in a JSON body; the
  // media uploads (`/upload/gmail/v1/...`) are not served here.
  const insert = (ctx: Context, dateSourceDefault: 'receivedTime' | 'dateHeader') => {
    const body = (ctx.request.body ?? {}) as Json;
    if (typeof body.raw !== 'string' || !body.raw)
      throw invalid(
        "'raw' RFC822 payload message string or uploading message via /upload/* URL required",
        'invalidArgument',
      );
    if (!/^[A-Za-z0-9_-]+=*$/.test(body.raw))
      throw invalid('Invalid value for ByteString: raw', 'invalidArgument');
    const raw = Buffer.from(body.raw, 'base64url').toString('utf8');
    const labelIds = labelList(body.labelIds, 'labelIds');
    const source = String(ctx.query.internalDateSource ?? dateSourceDefault);
    if (source !== 'receivedTime' && source !== 'dateHeader')
      throw invalid(`Invalid value at 'internal_date_source' (${source})`, 'invalidArgument');
    let created: Json | undefined;
    commitNow((at) => {
      const dated = Date.parse(
        parseRaw(raw).headers.find((h) => h.name.toLowerCase() === 'date')?.value ?? '',
      );
      const internalDate = source === 'dateHeader' && !Number.isNaN(dated) ? dated : at;
      created = newMessage(
        raw,
        labelIds,
        internalDate,
        typeof body.threadId === 'string' ? body.threadId : undefined,
      );
      addMessage(created, raw, at);
    });
    ctx.body = { id: created!.id, threadId: created!.threadId, labelIds: created!.labelIds };
  };
  router.post('/gmail/v1/users/:userId/messages', (ctx) => insert(ctx, 'receivedTime'));
  router.post('/gmail/v1/users/:userId/messages/import', (ctx) => insert(ctx, 'dateHeader'));

  const labelChange = (body: Json) => ({
    add: labelList(body.addLabelIds, 'addLabelIds'),
    remove: labelList(body.removeLabelIds, 'removeLabelIds'),
  });
  const idsOf = (body: Json): string[] => {
    if (!Array.isArray(body.ids) || !body.ids.length)
      throw invalid('No message ids specified.', 'invalidArgument');
    return body.ids.map(String);
  };

  router.post('/gmail/v1/users/:userId/messages/batchModify', (ctx) => {
    const body = (ctx.request.body ?? {}) as Json;
    const ids = idsOf(body);
    const { add, remove } = labelChange(body);
    commitNow((at) => {
      for (const id of ids) {
        const message = mailbox.get(id);
        if (message) relabel(message, add, remove, at);
      }
    });
    ctx.status = 204;
  });

  router.post('/gmail/v1/users/:userId/messages/batchDelete', (ctx) => {
    const ids = idsOf((ctx.request.body ?? {}) as Json);
    commitNow((at) => {
      for (const id of ids) {
        const message = mailbox.get(id);
        if (message) deleteMessage(message, at);
      }
    });
    ctx.status = 204;
  });

  router.post('/gmail/v1/users/:userId/messages/:id/modify', (ctx) => {
    const message = messageOf(ctx.params.id);
    const { add, remove } = labelChange((ctx.request.body ?? {}) as Json);
    commitNow((at) => relabel(message, add, remove, at));
    ctx.body = { id: message.id, threadId: message.threadId, labelIds: message.labelIds };
  });

  // Trash is a label: TRASH added (the message leaves listings without includeSpamTrash), or removed.
  router.post('/gmail/v1/users/:userId/messages/:id/trash', (ctx) => {
    const message = messageOf(ctx.params.id);
    commitNow((at) => relabel(message, ['TRASH'], [], at));
    ctx.body = { id: message.id, threadId: message.threadId, labelIds: message.labelIds };
  });
  router.post('/gmail/v1/users/:userId/messages/:id/untrash', (ctx) => {
    const message = messageOf(ctx.params.id);
    commitNow((at) => relabel(message, [], ['TRASH'], at));
    ctx.body = { id: message.id, threadId: message.threadId, labelIds: message.labelIds };
  });

  router.delete('/gmail/v1/users/:userId/messages/:id', (ctx) => {
    const message = messageOf(ctx.params.id);
    commitNow((at) => deleteMessage(message, at));
    ctx.status = 204;
  });

  // v1 has no messages.update or messages.patch: Google's front end answers 404 to the method.
  const noSuchMethod = (ctx: Context) => {
    throw new FakeHttpError(404, `No route for ${ctx.method} ${ctx.path}`, 'notFound');
  };
  router.put('/gmail/v1/users/:userId/messages/:id', noSuchMethod);
  router.patch('/gmail/v1/users/:userId/messages/:id', noSuchMethod);

  router.get('/gmail/v1/users/:userId/history', (ctx) => {
    const query = ctx.query;
    const size = pageSizeOf(ctx, 'maxResults', GMAIL_PAGE_DEFAULT, GMAIL_PAGE_MAX, true);
    fake.logListing(ctx, { object: 'history', pageSize: size, maxPageSize: GMAIL_PAGE_MAX });
    if (query.startHistoryId === undefined || query.startHistoryId === '')
      throw invalid('Missing required parameter: startHistoryId', 'invalidArgument');
    const start = String(query.startHistoryId);
    if (!/^\d+$/.test(start))
      throw invalid(`Invalid value at 'start_history_id' (TYPE_UINT64), "${start}"`, 'invalidArgument');
    const startId = Number(start);
    // Out of the kept window (or never issued): the client must sync in full.
    if (startId < forgottenThrough || startId > mailboxHistoryId)
      throw new FakeHttpError(404, 'Requested entity was not found.', 'notFound');
    const kinds = queryList(query.historyTypes);
    for (const kind of kinds)
      if (!['messageAdded', 'messageDeleted', 'labelAdded', 'labelRemoved'].includes(kind))
        throw invalid(`Invalid value at 'history_types' (${kind})`, 'invalidArgument');
    const labelId = query.labelId === undefined ? undefined : String(query.labelId);
    type Position = { after: number; through: number };
    const position: Position =
      query.pageToken === undefined
        ? { after: startId, through: mailboxHistoryId }
        : decode<Position>(String(query.pageToken), 'page token');
    if (position.after < forgottenThrough)
      throw new FakeHttpError(404, 'Requested entity was not found.', 'notFound');
    const entries = history.filter(
      (entry) =>
        entry.id > position.after &&
        entry.id <= position.through &&
        (!kinds.length || kinds.includes(entry.kind)) &&
        (labelId === undefined ||
          (entry.message.labelIds as string[]).includes(labelId) ||
          (entry.labelIds ?? []).includes(labelId)),
    );
    const page = entries.slice(0, size);
    const member = {
      messageAdded: 'messagesAdded',
      messageDeleted: 'messagesDeleted',
      labelAdded: 'labelsAdded',
      labelRemoved: 'labelsRemoved',
    };
    ctx.body = {
      ...(page.length && {
        history: page.map((entry) => ({
          id: String(entry.id),
          messages: [stub(entry.message)],
          [member[entry.kind]]: [
            { message: entry.message, ...(entry.labelIds && { labelIds: entry.labelIds }) },
          ],
        })),
      }),
      ...(entries.length > size && {
        nextPageToken: encode({ after: page.at(-1)!.id, through: position.through } satisfies Position),
      }),
      historyId: String(position.through),
    };
  });

  await fake.start();

  return asConformanceFake(fake, {
    seed: (object, times) =>
      times.map((ms) => {
        // A message received at `ms`: in the mailbox (and its history) from then on.
        if (object === 'messages') {
          const index = messageCounter + 1;
          const raw = rawOf(index, ms);
          const message = newMessage(raw, ['INBOX', 'UNREAD'], ms);
          schedule(ms, (at) => addMessage(message, raw, at));
          return String(message.id);
        }
        const n = counter + 1;
        if (object === 'events')
          return String(
            newEvent(
              {
                summary: `Meeting ${n}`,
                description: `Agenda ${n}`,
                location: `Room ${n}`,
                start: { dateTime: '2026-10-01T09:00:00Z', timeZone: 'UTC' },
                end: { dateTime: '2026-10-01T10:00:00Z', timeZone: 'UTC' },
              },
              ms,
            ).record.id,
          );
        if (object === 'connections')
          return String(
            newPerson(
              {
                names: [{ givenName: `First${n}`, familyName: `Last${n}` }],
                emailAddresses: [{ value: `p${n}@example.com`, type: 'work' }],
                organizations: [{ name: `Org ${n}`, title: 'Buyer' }],
              },
              ms,
            ).record.resourceName,
          );
        throw new Error(`no object ${object}`);
      }),
    touch(object, id, modifiedMs, options) {
      // A message changes only in its labels: starred, or unstarred when it was.
      if (object === 'messages') {
        schedule(options?.visibleFromMs ?? modifiedMs, (at) => {
          const message = mailbox.get(id);
          if (!message) return;
          if (labelsOf(message).includes('STARRED')) relabel(message, [], ['STARRED'], at);
          else relabel(message, ['STARRED'], [], at);
        });
        return;
      }
      const store = object === 'events' ? events : people;
      const row = store.get(id);
      if (!row) throw new Error(`no ${object} ${id}`);
      if (object === 'events') stampEvent(row, modifiedMs, options?.visibleFromMs);
      else stampPerson(row, modifiedMs, options?.visibleFromMs);
    },
    remove(object, id, atMs) {
      // Deleted for good (messages.delete), not trashed: history lists it in `messagesDeleted`.
      if (object === 'messages')
        schedule(atMs, (at) => {
          const message = mailbox.get(id);
          if (message) deleteMessage(message, at);
        });
      else if (object === 'events') cancelEvent(id, atMs);
      else people.remove(id, atMs);
    },
    stored: (object, id) =>
      object === 'messages' ? mailbox.get(id) : (object === 'events' ? events : people).get(id)?.record,
  });
}

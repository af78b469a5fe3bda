import type { ChangeTracking, ProviderRecord, ReadPageInput, ReadPageResult } from '../connector.js';
import { ProviderError } from '../errors.js';
import type { ProviderHttpRequest, ProviderHttpResponse } from '../http.js';
import { decodePageToken, encodePageToken } from '../page-token.js';
import type {
  ChangeFeed,
  Changes,
  Expand,
  Listing,
  ObjectDeclaration,
} from '../../schemas/connector-declaration.js';
import type { TimeFormat } from '../../schemas/connector-basics.js';
import type { DeclaredContext } from './context.js';
import { firstValueAt, valueAt } from './json-pointer.js';
import { endPosition, firstPageState, nextPageState, pageValues, type PageState } from './pagination.js';
import type { TemplateValues } from './template.js';

/**
 * Reads as a declaration says: which listing a read walks (the full list, the incremental one, the
 * one that marks deletions when a read asks for them, then the listing of deletions), the window as the provider understands it (its precision and bounds,
 * `changes`), and where the next read resumes (the provider's own cursor, `resume`, or a change feed's
 * token, `feed`).
 */

type Walked = 'list' | 'incremental' | 'marked' | 'deletions' | 'feed';

/** A read's position between pages: which listing, where it stands, and the query it continues. */
interface ReadToken extends Record<string, unknown> {
  o: string;
  l: Walked;
  s: PageState;
  since?: number;
  until?: number;
  /** Provider page size; absent: the listing's maximum. */
  n?: number;
  f?: string[];
  /** Deletions are listed too (and the listing of deletions read after the changes). */
  d?: boolean;
  /** Deletions at or after this instant (ms). */
  ds?: number;
  /** The read began from a resume cursor: the provider's cursor, not `since`, bounds it. */
  r?: boolean;
  /** The resume cursor of the listing of changes, carried to the read's last page. */
  rc?: string;
  /** A walk that restarts from its newest time (`restartFromNewest`): the time it restarted from (ms). */
  rs?: number;
  /** The ids it returned at `rs` before restarting there. */
  rk?: string[];
}

/** A resume cursor: the listing and its position at the end of the read that gave it. */
interface ResumeToken extends Record<string, unknown> {
  o: string;
  l: Exclude<Walked, 'deletions'>;
  s: PageState;
}

const SECOND = 1000;
const units: Record<Changes['precision'], number> = { millisecond: 1, second: SECOND, minute: 60 * SECOND };

function unitOf(changes: Changes | undefined): number {
  return changes ? units[changes.precision] : 1;
}

/** The finest time a modification stamp written this way can tell apart (ms). */
function unitOfFormat(format: TimeFormat | undefined): number {
  if (format === 'isoSeconds' || format === 'unixSeconds') return units.second;
  if (format === 'date') return 24 * 60 * units.minute;
  return 1;
}

/** How far inside a listing's `historySeconds` a clamped start is put, for clocks that disagree. */
const HISTORY_MARGIN_SECONDS = 3600;

/**
 * `since` as the provider's filter must be given it: at its precision (12:00:00.700 is 12:00:00
 * for whole seconds, so what was stamped in that second is listed), and one unit earlier for an
 * exclusive bound (so what was stamped at the instant itself is listed).
 */
export function providerSince(
  since: Date | undefined,
  changes: Changes | undefined,
  now: Date = new Date(),
): Date | undefined {
  if (!since) return undefined;
  const unit = unitOf(changes);
  const oldest =
    changes?.historySeconds && now.getTime() - (changes.historySeconds - HISTORY_MARGIN_SECONDS) * 1000;
  const floored = Math.floor(Math.max(since.getTime(), oldest || -Infinity) / unit) * unit;
  return new Date(changes?.since === 'exclusive' ? floored - unit : floored);
}

/** The listing that windowed reads walk: the incremental one where declared. */
function changesListing(object: ObjectDeclaration): Listing | undefined {
  return object.read ? (object.read.incremental ?? object.read.list) : undefined;
}

/** The listing that reads asking for deletions walk instead, where the provider has one (Salesforce's `queryAll`). */
function markedListing(object: ObjectDeclaration): Listing | undefined {
  const deletions = object.read?.deletions;
  return deletions?.style === 'marked' ? deletions.list : undefined;
}

/**
 * Beyond what a provider documents, a change may commit a little after the time it was stamped
 * with, and clocks drift: every overlap allows this much.
 */
export const SKEW_ALLOWANCE_MS = 5 * SECOND;

/** How far before its newest change a listing's next read must start: its lag, one unit, the skew allowance. */
function overlapOf(listing: Listing | undefined): number {
  const changes = listing?.changes;
  return (changes?.lagSeconds ?? 0) * SECOND + unitOf(changes) + SKEW_ALLOWANCE_MS;
}

export function changeTracking(object: ObjectDeclaration): ChangeTracking {
  const deletions = object.read?.deletions;
  const listing = changesListing(object);
  // A read walks one or the other, as it asks for deletions or not: the position allows for both.
  const marked = markedListing(object);
  return {
    overlapMs: Math.max(overlapOf(listing), marked ? overlapOf(marked) : 0),
    deletions: deletions?.style ?? 'none',
    deletionsOverlapMs: deletions?.style === 'listing' ? overlapOf(deletions.listing) : SKEW_ALLOWANCE_MS,
    // A listing of deletions that resumes (Asana's event streams and their sync tokens) is walked by
    // the provider's hooks, which keep its position in the read's resume cursor.
    resumable:
      object.read?.feed !== undefined ||
      listing?.resume === true ||
      marked?.resume === true ||
      (deletions?.style === 'listing' && deletions.listing.resume === true),
    // A listing without a time filter still has stamps: they are as fine as they are written.
    precisionMs: Math.max(
      unitOf(listing?.changes),
      marked ? unitOf(marked.changes) : 1,
      unitOfFormat(object.updated?.format),
    ),
    deletionsPrecisionMs: deletions?.style === 'listing' ? unitOf(deletions.listing.changes) : 1,
    fullRead: object.read?.fullRead !== undefined,
  };
}

/** Whether a record's modification time falls in the window; records that do not say are kept. */
function withinWindow(
  record: ProviderRecord,
  since: Date | undefined,
  until: Date | undefined,
  unit: number,
): boolean {
  if (!record.updatedAt || (!since && !until)) return true;
  const time = Date.parse(record.updatedAt);
  // Compared at the provider's precision: a record of 12:00:00 is in a window from 12:00:00.700.
  const start = since && Math.floor(since.getTime() / unit) * unit;
  return (start === undefined || time >= start) && (!until || time < until.getTime());
}

/**
 * A page's records as a read returns them. A feed of changes lists a record once per change: the
 * page keeps its first, the newest in a feed listed newest first (Stripe's events). Deletions a
 * listing marks itself are kept only when the read asks for them.
 */
function listedRecords(
  records: ProviderRecord[],
  listing: Listing,
  includeDeleted: boolean,
): ProviderRecord[] {
  const seen = new Set<string>();
  const latest =
    listing.record === undefined
      ? records
      : records.filter((record) => !seen.has(record.id) && seen.add(record.id));
  return includeDeleted ? latest : latest.filter((record) => !record.deleted);
}

/**
 * Where a walk that restarts from its newest time (`restartFromNewest`) stands: the time it starts
 * from (at the provider's precision) instead of the read's `since`, and the records of that time it
 * returned before restarting, which the restarted walk lists again.
 */
interface Restart {
  since: Date;
  ids: string[];
}

interface Walk {
  which: Walked;
  listing: Listing;
  state: PageState;
  since?: Date;
  until?: Date;
  pageSize?: number;
  fields?: string[];
  includeDeleted: boolean;
  deletedSince?: Date;
  resumed: boolean;
  resumeCursor?: string;
  restart?: Restart;
}

/** A change feed as the listing its walk pages through: its entries stand for the records. */
function feedListing(feed: ChangeFeed): Listing {
  const { request, entries, pagination, pageSize } = feed;
  return { request, records: entries, pagination, pageSize, resume: true };
}

function listingOf(object: ObjectDeclaration, which: Walked): Listing {
  const read = object.read!;
  if (which === 'feed') {
    if (!read.feed) throw new Error('no change feed is declared');
    return feedListing(read.feed);
  }
  if (which === 'deletions') {
    if (read.deletions?.style !== 'listing') throw new Error('no listing of deletions is declared');
    return read.deletions.listing;
  }
  if (which === 'marked') {
    const marked = markedListing(object);
    if (!marked) throw new Error('no listing marking deletions is declared');
    return marked;
  }
  return which === 'incremental' ? read.incremental! : read.list;
}

/** Where this page of a read stands: from its token, its resume cursor, or the input. */
function walkOf(connector: DeclaredContext, input: ReadPageInput, object: ObjectDeclaration): Walk {
  if (input.pageToken) {
    const token = decodePageToken<ReadToken>(input.pageToken, connector.provider, input.objectName);
    return {
      which: token.l,
      listing: listingOf(object, token.l),
      state: token.s,
      ...(token.since !== undefined && { since: new Date(token.since) }),
      ...(token.until !== undefined && { until: new Date(token.until) }),
      ...(token.n !== undefined && { pageSize: token.n }),
      ...(token.f && { fields: token.f }),
      includeDeleted: token.d === true,
      ...(token.ds !== undefined && { deletedSince: new Date(token.ds) }),
      resumed: token.r === true,
      ...(token.rc !== undefined && { resumeCursor: token.rc }),
      ...(token.rs !== undefined && { restart: { since: new Date(token.rs), ids: token.rk ?? [] } }),
    };
  }
  const common = {
    until: input.until,
    pageSize: input.pageSize,
    fields: input.fields,
    includeDeleted: input.includeDeleted === true,
    deletedSince: input.deletedSince ?? input.since,
  };
  if (input.resumeFrom) {
    const resume = decodePageToken<ResumeToken>(input.resumeFrom, connector.provider, input.objectName);
    return {
      ...common,
      which: resume.l,
      listing: listingOf(object, resume.l),
      state: resume.s,
      resumed: true,
      // A feed whose last page gives no new token keeps the one it started from.
      ...(resume.l === 'feed' && { resumeCursor: input.resumeFrom }),
    };
  }
  const which: Walked =
    input.includeDeleted && markedListing(object)
      ? 'marked'
      : input.since && object.read!.incremental
        ? 'incremental'
        : 'list';
  const listing = listingOf(object, which);
  return {
    ...common,
    which,
    listing,
    state: firstPageState(listing.pagination),
    since: input.since,
    resumed: false,
  };
}

function tokenOf(objectName: string, walk: Walk, state: PageState): string {
  const token: ReadToken = {
    o: objectName,
    l: walk.which,
    s: state,
    ...(walk.since && { since: walk.since.getTime() }),
    ...(walk.until && { until: walk.until.getTime() }),
    ...(walk.pageSize !== undefined && { n: walk.pageSize }),
    ...(walk.fields?.length && { f: walk.fields }),
    ...(walk.includeDeleted && { d: true }),
    ...(walk.deletedSince && { ds: walk.deletedSince.getTime() }),
    ...(walk.resumed && { r: true }),
    ...(walk.resumeCursor !== undefined && { rc: walk.resumeCursor }),
    ...(walk.restart && { rs: walk.restart.since.getTime(), rk: walk.restart.ids }),
  };
  return encodePageToken(token);
}

/** A record's modification time at the provider's precision (ms), or undefined when it has none. */
function unitTime(record: ProviderRecord, unit: number): number | undefined {
  const time = record.updatedAt ? Date.parse(record.updatedAt) : NaN;
  return Number.isNaN(time) ? undefined : Math.floor(time / unit) * unit;
}

/**
 * Where a walk that restarts from its newest time goes after a full page (`next` being where page
 * numbers or offsets would go): back to the first page, from the newest time on this page and
 * remembering the ids listed at it; or, when the page holds nothing newer than the time it was
 * asked from (ties longer than a page) or no times at all, on to `next` from the same time.
 */
function restartAfter(
  pagination: Listing['pagination'],
  walk: Walk,
  since: Date | undefined,
  listed: readonly ProviderRecord[],
  unit: number,
  next: PageState,
): { state: PageState; restart?: Restart } {
  const times = listed.map((record) => unitTime(record, unit));
  const newest = times.reduce<number | undefined>(
    (max, time) => (time !== undefined && (max === undefined || time > max) ? time : max),
    undefined,
  );
  const from = since && Math.floor(since.getTime() / unit) * unit;
  if (newest === undefined || (from !== undefined && newest <= from))
    return { state: next, ...(walk.restart && { restart: walk.restart }) };
  const ids = [...new Set(listed.filter((_, index) => times[index] === newest).map((record) => record.id))];
  return { state: firstPageState(pagination), restart: { since: new Date(newest), ids } };
}

/** Sends a listing's request; a status the listing declares for "nothing here" is an empty page. */
async function sendListing(
  connector: DeclaredContext,
  objectName: string,
  request: ProviderHttpRequest,
  listing: Listing,
): Promise<Pick<ProviderHttpResponse, 'body' | 'headers'>> {
  try {
    return await connector.send(objectName, request);
  } catch (error) {
    const status = error instanceof ProviderError ? error.status : undefined;
    if (status !== undefined && listing.emptyStatuses?.includes(status))
      return { body: undefined, headers: {} };
    throw error;
  }
}

/**
 * The token of the first page of the declared listing of deletions, for hooks that walk the changes
 * themselves (HubSpot's re-anchored search) and leave the deletions to the declaration: undefined
 * when the object declares no such listing.
 */
export function deletionsPageToken(
  objectName: string,
  object: ObjectDeclaration,
  read: { until?: Date; pageSize?: number; fields?: string[]; deletedSince?: Date },
): string | undefined {
  const deletions = object.read?.deletions;
  if (deletions?.style !== 'listing') return undefined;
  const walk: Walk = {
    which: 'deletions',
    listing: deletions.listing,
    state: firstPageState(deletions.listing.pagination),
    ...(read.until && { until: read.until }),
    ...(read.pageSize !== undefined && { pageSize: read.pageSize }),
    ...(read.fields?.length && { fields: read.fields }),
    includeDeleted: true,
    ...(read.deletedSince && { deletedSince: read.deletedSince }),
    resumed: false,
  };
  return tokenOf(objectName, walk, walk.state);
}

/**
 * The chosen fields and the record's modification time: a provider that returns only the fields
 * asked for (Klaviyo's sparse fieldsets, `$select`, `_fields`) would otherwise leave records
 * without the time every scheduled read tracks changes by. Added under the name chosen fields have
 * (`/attributes/updated` inside Klaviyo's `attributes` container is `updated`); a time outside the
 * container chosen fields are named in (HubSpot's top-level `updatedAt`) always comes back. The
 * object's `alwaysSelect` fields (an id the provider returns only when named) are added too.
 */
function withModificationTime(fields: string[], object: ObjectDeclaration): string[] {
  const always = (object.alwaysSelect ?? []).filter((field) => !fields.includes(field));
  const chosen = always.length ? [...fields, ...always] : fields;
  const pointer = object.updated?.field;
  // An object without a modification time (Gmail's messages) still gets its `alwaysSelect`.
  if (!pointer) return chosen;
  const containers = (object.values ?? []).filter((container) => !container.prefix && !container.entries);
  const inside = containers.find((container) => pointer.startsWith(`${container.at}/`));
  const name = inside
    ? pointer.slice(inside.at.length + 1)
    : !containers.length && pointer.lastIndexOf('/') === 0
      ? pointer.slice(1)
      : undefined;
  return name && !name.includes('/') && !chosen.includes(name) ? [...chosen, name] : chosen;
}

/**
 * One page as the declaration says: the listing, its page, its records inside the window. `parent`
 * is the record a hook reads within (`{{parent}}`: Asana's project); the hook passes it again with
 * every page token, which does not carry it.
 */
export async function readDeclaredPage(
  connector: DeclaredContext,
  input: ReadPageInput,
  parent?: string,
): Promise<ReadPageResult> {
  if (!connector.capabilities.read) throw connector.unsupported('read');
  const object = connector.object(input.objectName);
  if (!object.read)
    throw connector.unsupported(
      'read',
      `Ferry cannot read ${input.objectName} from "${connector.provider}".`,
    );
  const walk = walkOf(connector, input, object);
  if (walk.which === 'feed') return readFeedPage(connector, input, object, walk, parent);
  const deletions = walk.which === 'deletions';
  // A walk's first page has no position yet: a read's first page, or a listing of deletions the
  // read goes on to; a walk resumed from a cursor is past its first page.
  const first = !input.pageToken ? !walk.resumed : !walk.state.cursor && !walk.state.url;
  // Pages after the first may be asked for another way (`following`).
  const listing =
    !first && walk.listing.following ? { ...walk.listing, ...walk.listing.following } : walk.listing;
  const pageSize = Math.max(
    listing.pageSize.min ?? 1,
    Math.min(walk.pageSize ?? listing.pageSize.max, listing.pageSize.max),
  );
  const since = walk.restart
    ? walk.restart.since
    : deletions
      ? walk.deletedSince
      : walk.resumed
        ? undefined
        : walk.since;
  const values: TemplateValues = {
    ...connector.templateValues(input.objectName, object),
    // The provider's reach (`historySeconds`) counts back from the read's end, its own present.
    since: providerSince(since, listing.changes, walk.until),
    until: walk.until,
    pageSize,
    ...(walk.fields?.length && { fields: withModificationTime(walk.fields, object) }),
    // `true`: text in a query or path, a boolean where it stands alone in a JSON body (GraphQL's variables).
    ...((walk.includeDeleted || deletions) && { includeDeleted: true }),
    ...(parent !== undefined && { parent }),
    ...pageValues(walk.state),
  };
  if (listing.window) values.window = connector.window(listing, values);
  const request = walk.state.url
    ? {
        ...connector.request({ ...listing.request, method: 'GET', query: {}, body: undefined }, values, true),
        path: connector.nextPageUrl(walk.state.url, listing.pagination),
      }
    : connector.request(listing.request, values, true);
  // A full listing ahead of a change feed takes the feed's token before its first page.
  const feed = object.read.feed;
  if (feed && !input.pageToken && !walk.resumed && !deletions)
    walk.resumeCursor = await feedStart(connector, input.objectName, object, feed);
  let response: Pick<ProviderHttpResponse, 'body' | 'headers'>;
  try {
    response = await sendListing(connector, input.objectName, request, listing);
  } catch (error) {
    if (!input.pageToken && walk.resumed && refused(error, listing.resumeRefused))
      return readDeclaredPage(connector, startOver(input), parent);
    throw error;
  }
  const listed = valueAt(response.body, listing.records);
  const items = Array.isArray(listed) ? listed : [];
  const stubs = items.map((item) => connector.record(object, item, listing));
  const marked = listing.expand
    ? await expanded(connector, input.objectName, object, stubs, listing.expand, values.fields)
    : stubs;
  // A listing of deletions that lists live records too (Linear's `includeArchived`) marks its deletions.
  const listedDeletions = listing.deleted === undefined ? marked : marked.filter((record) => record.deleted);
  const records = listedRecords(
    deletions ? listedDeletions.map((record) => ({ ...record, deleted: true })) : marked,
    listing,
    walk.includeDeleted || deletions,
  );
  const page = {
    body: response.body,
    headers: response.headers,
    items,
    ids: items.map((item) => String(firstValueAt(item, object.id ?? '/id'))),
    pageSize,
  };
  const next = nextPageState(listing.pagination, walk.state, page);
  const unit = unitOf(listing.changes);
  // A listing resumed by its own cursor is never cut at `until`: the cursor moves past what it lists.
  const until = listing.resume ? undefined : walk.until;
  const returned = walk.restart && new Set(walk.restart.ids);
  const inWindow = records.filter(
    (record) =>
      withinWindow(record, since, until, unit) &&
      // Listed again by the restart: returned already, at the time restarted from.
      !(returned?.has(record.id) && unitTime(record, unit) === walk.restart!.since.getTime()),
  );
  // Newest first without a filter: the first record older than the window ends the read.
  const passedWindow =
    listing.newestFirst &&
    since &&
    records.some((record) => record.updatedAt && Date.parse(record.updatedAt) < since.getTime());
  // Oldest first without an upper bound: the first record at or after `until` ends the read.
  const pastUntil =
    listing.oldestFirst &&
    walk.until &&
    records.some((record) => record.updatedAt && Date.parse(record.updatedAt) >= walk.until!.getTime());
  const result = { records: inWindow, ...(deletions && { deletions: true }) };
  if (next && !passedWindow && !pastUntil) {
    if (!listing.restartFromNewest)
      return { ...result, nextPageToken: tokenOf(input.objectName, walk, next), done: false };
    const { state, restart } = restartAfter(listing.pagination, walk, since, marked, unit, next);
    const after: Walk = { ...walk, restart };
    return { ...result, nextPageToken: tokenOf(input.objectName, after, state), done: false };
  }
  // The listing ends here: where it would resume, and the listing of deletions, if asked, follows.
  const end = !deletions && listing.resume ? endPosition(listing.pagination, walk.state, page) : undefined;
  const resumeCursor = end
    ? encodePageToken({
        o: input.objectName,
        l: walk.which as ResumeToken['l'],
        s: end,
      } satisfies ResumeToken)
    : walk.resumeCursor;
  if (!deletions && walk.includeDeleted && object.read.deletions?.style === 'listing') {
    const after: Walk = {
      ...walk,
      which: 'deletions',
      listing: object.read.deletions.listing,
      state: firstPageState(object.read.deletions.listing.pagination),
      resumeCursor,
      restart: undefined,
    };
    return { ...result, nextPageToken: tokenOf(input.objectName, after, after.state), done: false };
  }
  return { ...result, done: true, ...(resumeCursor !== undefined && { resumeCursor }) };
}

/** The provider refused a resume token with a status the declaration names. */
function refused(error: unknown, statuses: readonly number[] | undefined): boolean {
  return (
    error instanceof ProviderError && error.status !== undefined && statuses?.includes(error.status) === true
  );
}

/**
 * A read whose resume token the provider refused, started over as its sync guide says: a full
 * listing, without the token and without `since` (a window from the last change delivered may reach
 * further back than the provider keeps: Calendar answers an `updatedMin` too old with 410 as well).
 */
function startOver(input: ReadPageInput): ReadPageInput {
  const { resumeFrom: _resumeFrom, since: _since, pageToken: _pageToken, ...rest } = input;
  return rest;
}

/** The change feed's token now, taken before a full listing (Gmail's profile `historyId`), as a resume cursor. */
async function feedStart(
  connector: DeclaredContext,
  objectName: string,
  object: ObjectDeclaration,
  feed: ChangeFeed,
): Promise<string | undefined> {
  const response = await connector.send(
    objectName,
    connector.request(feed.start.request, connector.templateValues(objectName, object), true),
  );
  const token = valueAt(response.body, feed.start.token);
  if ((typeof token !== 'string' || token === '') && typeof token !== 'number') return undefined;
  return encodePageToken({
    o: objectName,
    l: 'feed',
    s: { resume: String(token) },
  } satisfies ResumeToken);
}

/**
 * Stubs read in full through `read.get`, at most `expand.concurrency` at a time, in their order (the
 * HTTP layer paces and retries each request as any other). A stub whose get answers 404 went away
 * since it was listed: it comes back as a deletion.
 */
async function expanded(
  connector: DeclaredContext,
  objectName: string,
  object: ObjectDeclaration,
  stubs: readonly ProviderRecord[],
  expand: Expand,
  fields: unknown,
): Promise<ProviderRecord[]> {
  const get = object.read?.get;
  if (!get) throw new Error(`${objectName}: expand needs read.get`);
  // The get asks for the fields the read chose, where it can (`{{fields}}`: Google's partial responses).
  const base = { ...connector.templateValues(objectName, object), ...(fields !== undefined && { fields }) };
  const records = new Array<ProviderRecord>(stubs.length);
  let next = 0;
  let failed = false;
  const fetchOne = async (stub: ProviderRecord): Promise<ProviderRecord> => {
    try {
      const response = await connector.send(
        objectName,
        connector.request(get.request, { ...base, id: stub.id }, true),
      );
      const raw = valueAt(response.body, get.record);
      // The id asked for is the record's, whatever fields the answer carries.
      if (raw && typeof raw === 'object') return { ...connector.record(object, raw), id: stub.id };
    } catch (error) {
      if (!(error instanceof ProviderError && error.isNotFound)) throw error;
    }
    return { ...stub, deleted: true };
  };
  const worker = async () => {
    while (!failed && next < stubs.length) {
      const index = next++;
      try {
        records[index] = await fetchOne(stubs[index]);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(expand.concurrency, stubs.length) }, worker));
  return records;
}

/** The items of each of `pointers` in an entry: arrays, or nothing. */
function itemsAt(entry: unknown, pointers: readonly string[] | undefined): unknown[] {
  return (pointers ?? []).flatMap((pointer) => {
    const items = valueAt(entry, pointer);
    return Array.isArray(items) ? items : [];
  });
}

/**
 * One page of a change feed (`read.feed`): the records its entries name, each once, as its last
 * mention in the page says; changed stubs read in full (`expand`); deletions kept where the read
 * asks for them. The feed's token stays on every page of the walk, and the last page ends the read
 * with the next token.
 */
async function readFeedPage(
  connector: DeclaredContext,
  input: ReadPageInput,
  object: ObjectDeclaration,
  walk: Walk,
  parent: string | undefined,
): Promise<ReadPageResult> {
  const feed = object.read!.feed!;
  const pageSize = Math.min(walk.pageSize ?? feed.pageSize.max, feed.pageSize.max);
  const fields = walk.fields?.length ? withModificationTime(walk.fields, object) : undefined;
  const values: TemplateValues = {
    ...connector.templateValues(input.objectName, object),
    pageSize,
    ...(parent !== undefined && { parent }),
    ...pageValues(walk.state),
  };
  let response: ProviderHttpResponse;
  try {
    response = await connector.send(input.objectName, connector.request(feed.request, values, true));
  } catch (error) {
    if (!input.pageToken && refused(error, feed.refused))
      return readDeclaredPage(connector, startOver(input), parent);
    throw error;
  }
  const listed = valueAt(response.body, feed.entries);
  const entries = Array.isArray(listed) ? listed : [];
  // The last mention of each record in the page, in the order records were first named.
  const mentions = new Map<string, { stub: ProviderRecord; deleted: boolean }>();
  for (const entry of entries) {
    for (const [pointers, deleted] of [
      [feed.changed, false],
      [feed.deleted, true],
    ] as const) {
      for (const item of itemsAt(entry, pointers)) {
        const raw = feed.record === undefined ? item : valueAt(item, feed.record);
        const id = raw && typeof raw === 'object' ? firstValueAt(raw, object.id ?? '/id') : undefined;
        // An item naming no record (an entry of another kind) is no change of one.
        if (id === undefined || id === null || id === '') continue;
        mentions.set(String(id), { stub: connector.record(object, raw), deleted });
      }
    }
  }
  const named = [...mentions.values()];
  const changed = named.filter((mention) => !mention.deleted).map((mention) => mention.stub);
  const read = feed.expand
    ? await expanded(connector, input.objectName, object, changed, feed.expand, fields)
    : changed;
  const byId = new Map(changed.map((stub, index) => [stub.id, read[index]]));
  const records = named
    .map((mention) => (mention.deleted ? { ...mention.stub, deleted: true } : byId.get(mention.stub.id)!))
    .filter((record) => walk.includeDeleted || !record.deleted);
  const page = {
    body: response.body,
    headers: response.headers,
    items: entries,
    ids: [],
    pageSize,
  };
  const next = nextPageState(feed.pagination, walk.state, page);
  // Later pages go by the cursor and still carry the token the walk started from.
  if (next)
    return {
      records,
      nextPageToken: tokenOf(input.objectName, walk, { ...next, resume: walk.state.resume }),
      done: false,
    };
  const end = endPosition(feed.pagination, walk.state, page);
  const resumeCursor =
    end?.resume !== undefined
      ? encodePageToken({ o: input.objectName, l: 'feed', s: { resume: end.resume } } satisfies ResumeToken)
      : walk.resumeCursor;
  return { records, done: true, ...(resumeCursor !== undefined && { resumeCursor }) };
}

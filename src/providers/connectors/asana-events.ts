import type { ProviderRecord, ReadPageInput, ReadPageResult } from '../connector.js';
import type { HookContext } from '../declarative/context.js';
import { valueAt } from '../declarative/json-pointer.js';
import type { ProviderHttpRequest, ProviderHttpResponse } from '../http.js';
import { decodePageToken, encodePageToken } from '../page-token.js';
import type { DeclaredRequest, Listing } from '../../schemas/connector-declaration.js';

/**
 * How Asana tells deletions: only through event streams, each followed by a sync token. A stream's
 * first request answers 412 with a token and no events; a token leads to the events after it (100
 * at most, `has_more` saying more follow), and so is its answer's token. Tokens expire after 24
 * hours (412 again, with a fresh one: the events in between are lost).
 *
 * The workspace's own stream (`GET /workspaces/{gid}/events`) holds every event of the workspace,
 * but only service accounts of Enterprise+ domains may read it; everyone else reads one stream per
 * project (`GET /events?resource=<project>`, the declared listing of deletions), where the events
 * of its tasks bubble up. So a read asking for deletions tries the workspace's stream first, unless
 * the last read had to walk the projects, and walks every project's stream when it is refused.
 *
 * The streams' positions are the read's resume cursor, where the next read starts. A project's
 * stream shows its own deletion only while the project is there: a project the listing no longer
 * shows is asked once more, then dropped, and told deleted (without a time) when its stream has
 * gone (404). A project created and deleted between two reads is told only by the workspace's
 * stream.
 */

/** The workspace's stream (Enterprise+ service accounts only). */
const workspaceStream: DeclaredRequest = {
  method: 'GET',
  path: '/1.0/workspaces/{{connection.workspace}}/events',
  query: { sync: '{{cursor}}' },
};
/** Projects listed per request while walking them (Asana's `limit` is at most 100). */
export const projectsPerPage = 100;

/** The next page of the workspace's projects into `walk`: their gids queued, the listing's next token kept. */
export async function nextProjects(
  connector: HookContext,
  walk: { q: string[]; p?: string | undefined },
): Promise<void> {
  const projects = await connector.readDeclaredPage({
    objectName: 'projects',
    pageSize: projectsPerPage,
    fields: ['gid'],
    ...(walk.p && { pageToken: walk.p }),
  });
  walk.q = projects.records.map((record) => record.id);
  walk.p = projects.nextPageToken;
}

/** Where the streams stood at the end of a read: the workspace's token, or each project's. */
export interface StreamPositions {
  w?: string;
  s?: Record<string, string>;
}

/** A resume cursor: the streams' positions. */
interface SyncCursor extends StreamPositions, Record<string, unknown> {
  o: string;
  k: 'sync';
}

/** Where a walk over the event streams stands. */
export interface EventWalk extends Record<string, unknown> {
  o: string;
  k: 'events';
  /** The positions the last read left. */
  h: StreamPositions;
  /** Walking the projects' streams (the workspace's was refused, or the last read walked them). */
  m?: 'projects';
  /** The workspace stream's token after a page that said more events follow. */
  w?: string;
  /** Projects whose stream is still to read, the current one first. */
  q: string[];
  /** The next page of the project listing. */
  p?: string;
  /** The project listing has ended. */
  e?: boolean;
  /** `q` holds the projects the last read knew and the listing no longer shows. */
  x?: boolean;
  /** The project tokens this read leaves, for the next one. */
  g: Record<string, string>;
  /** The current project's token after a page that said more events follow. */
  c?: string;
}

/** The positions the last read left, from the resume cursor it gave. */
export function heldPositions(connector: HookContext, input: ReadPageInput): StreamPositions {
  if (!input.resumeFrom) return {};
  const cursor = decodePageToken<SyncCursor>(input.resumeFrom, connector.provider, input.objectName);
  if (cursor.k !== 'sync') return {};
  return {
    ...(typeof cursor.w === 'string' && { w: cursor.w }),
    ...(cursor.s && typeof cursor.s === 'object' && { s: cursor.s }),
  };
}

/** The page that starts the walk over the event streams, after the changes. */
export function startEvents(objectName: string, held: StreamPositions): ReadPageResult {
  const walk: EventWalk = {
    o: objectName,
    k: 'events',
    h: held,
    q: [],
    g: {},
    ...(held.s && held.w === undefined && { m: 'projects' as const }),
  };
  return { records: [], done: false, nextPageToken: encodePageToken(walk) };
}

/** One page of the event streams: one request, the deletions of this object it shows. */
export async function readEvents(
  connector: HookContext,
  input: ReadPageInput,
  walk: EventWalk,
): Promise<ReadPageResult> {
  return walk.m === 'projects'
    ? readProjectStream(connector, input, walk)
    : readWorkspaceStream(connector, input, walk);
}

async function readWorkspaceStream(
  connector: HookContext,
  input: ReadPageInput,
  walk: EventWalk,
): Promise<ReadPageResult> {
  const listing = eventsListing(connector, input.objectName);
  const token = walk.w ?? walk.h.w;
  const request = streamRequest(connector, input.objectName, { ...listing, request: workspaceStream }, token);
  const response = await connector.http.send(request);
  if ([402, 403, 404].includes(response.status)) {
    // Not an Enterprise+ service account: every project's stream instead.
    const projects: EventWalk = { ...walk, m: 'projects' };
    delete projects.w;
    return { records: [], done: false, nextPageToken: encodePageToken(projects), deletions: true };
  }
  const { next, more, items } = streamAnswer(connector, listing, request, response);
  const records = deletionsOf(connector, input.objectName, listing, items);
  if (more && next !== undefined) {
    return { records, done: false, nextPageToken: encodePageToken({ ...walk, w: next }), deletions: true };
  }
  const cursor: SyncCursor = { o: input.objectName, k: 'sync', ...(next !== undefined && { w: next }) };
  return { records, done: true, deletions: true, resumeCursor: encodePageToken(cursor) };
}

/**
 * The next project's stream after its token; a project the listing no longer shows last. A 403 or
 * 404 means the project is gone or out of reach, and its stream with it.
 */
async function readProjectStream(
  connector: HookContext,
  input: ReadPageInput,
  walk: EventWalk,
): Promise<ReadPageResult> {
  const held = walk.h.s ?? {};
  if (!walk.q.length && !walk.x) {
    if (!walk.e) {
      await nextProjects(connector, walk);
      walk.e = !walk.p;
    }
    if (!walk.q.length && walk.e) {
      walk.x = true;
      walk.q = Object.keys(held).filter((project) => !Object.hasOwn(walk.g, project));
    }
  }
  const project = walk.q[0];
  if (project === undefined) {
    if (!walk.x) return { records: [], done: false, nextPageToken: encodePageToken(walk), deletions: true };
    const cursor: SyncCursor = { o: input.objectName, k: 'sync', s: walk.g };
    return { records: [], done: true, deletions: true, resumeCursor: encodePageToken(cursor) };
  }
  const listing = eventsListing(connector, input.objectName);
  const request = streamRequest(connector, input.objectName, listing, walk.c ?? held[project], project);
  const response = await connector.http.send(request);
  const gone = response.status === 403 || response.status === 404;
  const { next, more, items } = gone
    ? { next: undefined, more: false, items: [] as unknown[] }
    : streamAnswer(connector, listing, request, response);
  // Its stream gone (404) with its own `deleted` event, a project no longer listed is told deleted.
  if (response.status === 404 && walk.x)
    items.push({ action: 'deleted', resource: { gid: project, resource_type: 'project' } });
  const records = deletionsOf(connector, input.objectName, listing, items);
  const after: EventWalk = { ...walk, g: { ...walk.g } };
  if (more && next !== undefined) after.c = next;
  else {
    delete after.c;
    after.q = walk.q.slice(1);
  }
  // A project no longer listed keeps no token: it was asked once more, for its own deletion.
  if (next !== undefined && !walk.x) after.g[project] = next;
  return { records, done: false, nextPageToken: encodePageToken(after), deletions: true };
}

function eventsListing(connector: HookContext, objectName: string): Listing {
  const deletions = connector.object(objectName).read?.deletions;
  if (deletions?.style !== 'listing') throw new Error(`Asana ${objectName} declare no event stream`);
  return deletions.listing;
}

function streamRequest(
  connector: HookContext,
  objectName: string,
  listing: Listing,
  token: string | undefined,
  parent?: string,
): ProviderHttpRequest {
  const object = connector.object(objectName);
  return connector.request(
    listing.request,
    {
      ...connector.templateValues(objectName, object),
      ...(parent !== undefined && { parent }),
      ...(token !== undefined && { cursor: token }),
    },
    true,
  );
}

/** A stream's answer: its events, its token, whether more follow; a 412 carries a fresh token only. */
function streamAnswer(
  connector: HookContext,
  listing: Listing,
  request: ProviderHttpRequest,
  response: ProviderHttpResponse,
): { next?: string; more: boolean; items: unknown[] } {
  const pagination = listing.pagination;
  if (pagination.style !== 'cursor') throw new Error('Asana event streams page by their sync token');
  const { status, body } = response;
  if (status === 412) return { next: stringAt(body, pagination.next), more: false, items: [] };
  if (status < 200 || status >= 300) throw connector.http.errorFor(request, response);
  const items = valueAt(body, listing.records);
  return {
    next: stringAt(body, pagination.next),
    more: pagination.hasMore !== undefined && valueAt(body, pagination.hasMore) === true,
    items: Array.isArray(items) ? [...items] : [],
  };
}

/** The events that are deletions of this object (the listing's `deleted`), each record once. */
function deletionsOf(
  connector: HookContext,
  objectName: string,
  listing: Listing,
  items: unknown[],
): ProviderRecord[] {
  const object = connector.object(objectName);
  const seen = new Set<string>();
  return items
    .map((item) => connector.record(object, item, listing))
    .filter((record) => record.deleted && !seen.has(record.id) && seen.add(record.id));
}

function stringAt(body: unknown, pointer: string): string | undefined {
  const value = valueAt(body, pointer);
  return typeof value === 'string' && value ? value : undefined;
}

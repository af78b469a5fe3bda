import type { ProviderRecord, ReadPageInput, ReadPageResult } from '../connector.js';
import type { ConnectorHooks } from '../declarative/connector.js';
import type { HookContext } from '../declarative/context.js';
import { ConnectorInputError } from '../errors.js';
import { decodePageToken, encodePageToken } from '../page-token.js';
import {
  heldPositions,
  nextProjects,
  readEvents,
  startEvents,
  type EventWalk,
  type StreamPositions,
} from './asana-events.js';

/**
 * Asana's quirks (the rest is `catalog/connectors/asana.json`):
 * - records come compact (gid, name) unless `opt_fields` names fields, so a read without chosen
 *   fields asks for the declared standard ones, and every read asks for `gid` and `modified_at`;
 * - `GET /tasks` lists tasks only within a project (or tag, or one assignee), and it alone filters by
 *   `modified_since`: tasks are read project by project over the workspace's projects. A task in
 *   several projects is returned from its first project only (its `projects` are always asked for);
 * - custom fields are the workspace's, named by gid: a task's `custom_fields` values are also given
 *   under their gid (the record's `values`), and a write's gid-named values go in its `custom_fields`;
 * - deletions are told only by event streams (`asana-events.ts`): a read that asks for them reads
 *   the streams after the changes, and ends with their positions as its resume cursor.
 */

const alwaysRead = ['gid', 'modified_at'];
const customFieldValues = [
  'custom_fields.gid',
  'custom_fields.resource_subtype',
  'custom_fields.text_value',
  'custom_fields.number_value',
  'custom_fields.enum_value.gid',
  'custom_fields.multi_enum_values.gid',
  'custom_fields.date_value.date',
  'custom_fields.people_value.gid',
  'custom_fields.display_value',
];
const fieldName = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)*$/;
const customFieldGid = /^\d+$/;

/** Where a walk over the workspace's projects stands between pages of tasks. */
interface TaskWalk extends Record<string, unknown> {
  o: string;
  k: 'walk';
  /** Projects still to read, the current one first. */
  q: string[];
  /** The next page of the project listing, when there is one. */
  p?: string;
  /** The current project's next page of tasks. */
  t?: string;
  since?: number;
  until?: number;
  n?: number;
  f: string[];
  /** Deletions are asked for: the event streams are walked after the changes. */
  d?: boolean;
  /** The event streams' positions the last read left (its resume cursor). */
  h?: StreamPositions;
}

/** Where a read of projects stands: the declared listing's own page token. */
interface ProjectWalk extends Record<string, unknown> {
  o: string;
  k: 'projects';
  t: string;
  d?: boolean;
  h?: StreamPositions;
}

function fieldsToRead(connector: HookContext, input: ReadPageInput): string[] {
  const chosen = input.fields?.length
    ? input.fields
    : Object.keys(connector.object(input.objectName).fields ?? {});
  for (const name of chosen) {
    if (!fieldName.test(name) && !customFieldGid.test(name)) {
      throw new ConnectorInputError(`"${name}" is not an Asana field name.`, connector.provider);
    }
  }
  const standard = chosen.filter((name) => !customFieldGid.test(name));
  const custom =
    input.objectName === 'tasks' &&
    (!input.fields?.length || chosen.some((name) => customFieldGid.test(name)));
  const extra = input.objectName === 'tasks' ? ['projects'] : [];
  return [...new Set([...alwaysRead, ...extra, ...standard, ...(custom ? customFieldValues : [])])];
}

/** A custom field's value as a write takes it back: text, number, option gid(s), date, user gids. */
function customValue(field: Record<string, unknown>): unknown {
  const gid = (value: unknown) => (value as { gid?: unknown } | null)?.gid ?? null;
  switch (field.resource_subtype) {
    case 'text':
      return field.text_value ?? null;
    case 'number':
      return field.number_value ?? null;
    case 'enum':
      return gid(field.enum_value);
    case 'multi_enum':
      return Array.isArray(field.multi_enum_values) ? field.multi_enum_values.map(gid) : [];
    case 'date':
      return (field.date_value as { date?: unknown } | null)?.date ?? null;
    case 'people':
      return Array.isArray(field.people_value) ? field.people_value.map(gid) : [];
    default:
      return field.display_value ?? null;
  }
}

/** The record with its custom fields' values under their gids, the names the metadata lists. */
function withCustomValues(record: ProviderRecord): ProviderRecord {
  const fields = record.raw.custom_fields;
  if (!Array.isArray(fields)) return record;
  const values: Record<string, unknown> = { ...record.raw };
  for (const field of fields as Record<string, unknown>[]) {
    if (typeof field?.gid === 'string') values[field.gid] = customValue(field);
  }
  return { ...record, values };
}

/** Whether the task is read from this project: the first of its projects. */
function homedIn(record: ProviderRecord, project: string): boolean {
  const projects = record.raw.projects;
  if (!Array.isArray(projects) || !projects.length) return true;
  return (projects[0] as { gid?: unknown })?.gid === project;
}

async function readTasks(
  connector: HookContext,
  input: ReadPageInput,
  walk: TaskWalk,
): Promise<ReadPageResult> {
  // The first page, or the current listing page used up: the next projects.
  if (!walk.q.length && (!input.pageToken || walk.p)) await nextProjects(connector, walk);
  const project = walk.q[0];
  if (project === undefined)
    return walk.p ? { records: [], done: false, nextPageToken: encodePageToken(walk) } : finished(walk, []);
  const page = await connector.readDeclaredPage(
    {
      objectName: 'tasks',
      pageSize: walk.n,
      fields: walk.f,
      ...(walk.since !== undefined && { since: new Date(walk.since) }),
      ...(walk.until !== undefined && { until: new Date(walk.until) }),
      ...(walk.t && { pageToken: walk.t }),
    },
    project,
  );
  const records = page.records.filter((record) => homedIn(record, project)).map(withCustomValues);
  const next: TaskWalk = page.done
    ? { ...walk, q: walk.q.slice(1), t: undefined }
    : { ...walk, t: page.nextPageToken };
  if (!next.q.length && !next.p) return finished(next, records);
  return { records, done: false, nextPageToken: encodePageToken(next) };
}

/** The changes have been read: the event streams follow when deletions are asked for. */
function finished(walk: TaskWalk | ProjectWalk, records: ProviderRecord[]): ReadPageResult {
  if (!walk.d) return { records, done: true };
  return { ...startEvents(walk.o, walk.h ?? {}), records };
}

async function readProjects(
  connector: HookContext,
  input: ReadPageInput,
  walk?: ProjectWalk,
): Promise<ReadPageResult> {
  const page = await connector.readDeclaredPage(
    walk
      ? { objectName: input.objectName, pageToken: walk.t }
      : { ...input, fields: fieldsToRead(connector, input), includeDeleted: false, resumeFrom: undefined },
  );
  const state = walk ?? {
    o: input.objectName,
    k: 'projects' as const,
    t: '',
    ...(input.includeDeleted && { d: true, h: heldPositions(connector, input) }),
  };
  if (page.done) return finished(state, page.records);
  return {
    records: page.records,
    done: false,
    nextPageToken: encodePageToken({ ...state, t: page.nextPageToken! }),
  };
}

type Walk = TaskWalk | ProjectWalk | EventWalk;

export const asanaHooks: ConnectorHooks = {
  async readPage(connector, input, declared) {
    if (input.objectName !== 'tasks' && input.objectName !== 'projects') return declared();
    const walk = input.pageToken
      ? decodePageToken<Walk>(input.pageToken, connector.provider, input.objectName)
      : undefined;
    if (walk?.k === 'events') return readEvents(connector, input, walk);
    if (input.objectName === 'projects') {
      if (walk && walk.k !== 'projects') throw foreignToken(connector);
      return readProjects(connector, input, walk);
    }
    if (walk && walk.k !== 'walk') throw foreignToken(connector);
    return readTasks(
      connector,
      input,
      walk ?? {
        o: input.objectName,
        k: 'walk',
        q: [],
        n: input.pageSize,
        f: fieldsToRead(connector, input),
        ...(input.since && { since: input.since.getTime() }),
        ...(input.until && { until: input.until.getTime() }),
        ...(input.includeDeleted && { d: true, h: heldPositions(connector, input) }),
      },
    );
  },

  async write(connector, input, declared) {
    if (input.type === 'delete' || !input.record) return declared();
    const record: Record<string, unknown> = {};
    const custom: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(input.record)) {
      if (customFieldGid.test(name)) custom[name] = value;
      else record[name] = value;
    }
    if (Object.keys(custom).length) record.custom_fields = custom;
    return connector.writeDeclared({ ...input, record });
  },
};

function foreignToken(connector: HookContext): ConnectorInputError {
  return new ConnectorInputError('The page token was not issued by this read of Asana.', connector.provider);
}

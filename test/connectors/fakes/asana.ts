import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';
import { VersionedStore, type Row } from './versions.js';

/**
 * A local stand-in for Asana's REST API 1.0 as its public reference (and its OpenAPI document,
 * github.com/Asana/openapi `defs/asana_oas.yaml`) describes it:
 *
 * - `{data}` envelopes; errors `{errors: [{message, help}]}` (a `phrase` on 5xx); a 429 with
 *   `Retry-After` (seconds).
 * - Lists take `limit` (1–100, else 400) and an opaque `offset` answered in
 *   `next_page {offset, path, uri}` (null on the last page). An offset names the last record
 *   served, so records deleted between pages shift nothing, and it expires (after 15 minutes here).
 *   Without `limit` these "grandfathered" lists answer unpaginated, cut at about 1,000 records with
 *   no `next_page`.
 * - Compact records unless `opt_fields` names fields (dotted paths reach into nested objects).
 * - `GET /projects?workspace=&archived=` (no time filter); `GET /tasks`, which needs a `project`
 *   (or tag, section, assignee + workspace) and takes `modified_since` (times to the millisecond,
 *   read as "modified after": the reference does not say whether the bound is inclusive) and
 *   `completed_since`.
 * - One record by gid; `POST {data}` (201), `PUT {data}`, `DELETE` (a task goes to the trash: gone
 *   from lists and gets, 404). `projects`, `followers`, `tags` and `workspace` of a task are
 *   create-only.
 * - A workspace's custom fields, whose values tasks carry in `custom_fields` and take as
 *   `custom_fields: {gid: value}`; enum options can be disabled (`enabled: false`, kept by tasks
 *   that have them, refused in writes); formula fields are read-only.
 * - Deletions, and every other change, reach clients through the events API:
 *   `GET /events?resource=<task or project>&sync=` (first call, a token older than 24 hours or an
 *   unknown one: 412 with a fresh `sync`; then `{data, sync, has_more}`, 100 events per call;
 *   events of a project's tasks "bubble up" to it), and `GET /workspaces/{gid}/events` (1,000 per
 *   call). Events reach the stream within about a minute of the change.
 */

export const ASANA_WORKSPACE = '1200000000000001';

/** Events reach the stream "within a minute (on average)" of the change. */
export const ASANA_EVENT_LAG_MS = 60_000;
/** Sync tokens "always expire after 24 hours". */
const SYNC_TTL_MS = 24 * 3_600_000;
/** Offsets "expire after some time": 15 minutes, as the offsets Asana hands out say (verify). */
const OFFSET_TTL_MS = 15 * 60_000;
/** Unpaginated lists are "truncated at about 1000 objects". */
const UNPAGINATED_CAP = 1000;
const MAX_LIMIT = 100;

type AsanaRecord = Record<string, unknown> & { gid: string; modified_at: string };

export interface FakeAsana extends ConformanceFake {
  /** Adds a task to another project too (Asana tasks may live in several). */
  addToProject(taskGid: string, projectGid: string): void;
  /** Projects that exist from the start, each holding some of the seeded tasks. */
  fixtureProjects: string[];
}

const WORKSPACE_REF = { gid: ASANA_WORKSPACE, resource_type: 'workspace', name: 'Acme' };
const USER_REF = { gid: '1200000000000050', resource_type: 'user', name: 'Ada Admin' };
const HELP =
  'For more information on API status codes and how to handle them, read the docs on errors: https://developers.asana.com/docs/errors';

interface CustomField {
  gid: string;
  name: string;
  resource_subtype: 'enum' | 'number' | 'date' | 'text';
  description: string;
  enum_options?: {
    gid: string;
    resource_type: 'enum_option';
    name: string;
    enabled: boolean;
    color: string;
  }[];
  precision?: number;
  is_formula_field: boolean;
  is_value_read_only: boolean;
}

const customFields: CustomField[] = [
  {
    gid: '1200000000000101',
    name: 'Priority',
    resource_subtype: 'enum',
    description: 'How soon it matters',
    enum_options: [
      { gid: '1200000000000111', resource_type: 'enum_option', name: 'High', enabled: true, color: 'red' },
      { gid: '1200000000000112', resource_type: 'enum_option', name: 'Low', enabled: true, color: 'blue' },
      // Disabled ("trashed" in the app): no longer selectable, kept by tasks that have it.
      {
        gid: '1200000000000113',
        resource_type: 'enum_option',
        name: 'Medium',
        enabled: false,
        color: 'yellow',
      },
    ],
    is_formula_field: false,
    is_value_read_only: false,
  },
  {
    gid: '1200000000000102',
    name: 'Estimate',
    resource_subtype: 'number',
    description: '',
    precision: 1,
    is_formula_field: false,
    is_value_read_only: false,
  },
  {
    gid: '1200000000000103',
    name: 'Launch',
    resource_subtype: 'date',
    description: '',
    is_formula_field: false,
    is_value_read_only: false,
  },
  {
    gid: '1200000000000104',
    name: 'Score',
    resource_subtype: 'number',
    description: 'Computed from Estimate',
    precision: 0,
    is_formula_field: true,
    is_value_read_only: true,
  },
  {
    gid: '1200000000000105',
    name: 'Ticket',
    resource_subtype: 'text',
    description: 'The support ticket',
    is_formula_field: false,
    is_value_read_only: false,
  },
];

/** A custom field as `GET /workspaces/{gid}/custom_fields` returns it. */
function definition(field: CustomField): Record<string, unknown> {
  return {
    gid: field.gid,
    resource_type: 'custom_field',
    name: field.name,
    type: field.resource_subtype,
    resource_subtype: field.resource_subtype,
    representation_type: field.is_formula_field ? 'formula' : field.resource_subtype,
    description: field.description,
    ...(field.enum_options && { enum_options: field.enum_options }),
    ...(field.precision !== undefined && { precision: field.precision, format: 'none' }),
    is_formula_field: field.is_formula_field,
    is_value_read_only: field.is_value_read_only,
    is_global_to_workspace: true,
    has_notifications_enabled: true,
    asana_created_field: null,
    created_by: USER_REF,
    privacy_setting: 'public_with_guests',
    default_access_level: 'editor',
  };
}

/** Fields a task create takes (TaskCreateRequest); an update takes the same less the create-only ones. */
const taskWritable = new Set([
  'name',
  'resource_subtype',
  'approval_status',
  'assignee_status',
  'completed',
  'due_at',
  'due_on',
  'external',
  'html_notes',
  'liked',
  'notes',
  'start_at',
  'start_on',
  'assignee',
  'assignee_section',
  'custom_fields',
  'parent',
  'followers',
  'projects',
  'tags',
  'workspace',
]);
const taskCreateOnly = new Set(['followers', 'projects', 'tags', 'workspace', 'parent']);
/** Fields a project create takes (ProjectRequest); `followers` and `workspace` are create-only. */
const projectWritable = new Set([
  'name',
  'archived',
  'color',
  'icon',
  'default_view',
  'due_date',
  'due_on',
  'html_notes',
  'notes',
  'public',
  'privacy_setting',
  'start_on',
  'default_access_level',
  'minimum_access_level_for_customization',
  'minimum_access_level_for_sharing',
  'custom_fields',
  'followers',
  'owner',
  'team',
  'workspace',
]);
const projectCreateOnly = new Set(['followers', 'workspace']);

interface Offset {
  /** The insertion order of the last record served. */
  after: number;
  issuedMs: number;
}

function encodeOffset(offset: Offset): string {
  return Buffer.from(JSON.stringify({ border_rank: offset.after, iat: offset.issuedMs })).toString(
    'base64url',
  );
}

function decodeOffset(text: string, now: number): Offset {
  let parsed: { border_rank?: unknown; iat?: unknown } = {};
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString()) as typeof parsed;
  } catch {
    // refused below
  }
  if (typeof parsed.border_rank !== 'number' || typeof parsed.iat !== 'number')
    throw new FakeHttpError(400, 'offset: Your pagination token is invalid.');
  // (verify the message) Asana says only that offsets expire "after some time".
  if (now - parsed.iat > OFFSET_TTL_MS)
    throw new FakeHttpError(400, 'offset: Your pagination token has expired.');
  return { after: parsed.border_rank, issuedMs: parsed.iat };
}

type FieldTree = Map<string, FieldTree>;

function fieldTree(paths: string[]): FieldTree {
  const tree: FieldTree = new Map();
  for (const path of paths) {
    let node = tree;
    for (const part of path.split('.')) {
      if (!node.has(part)) node.set(part, new Map());
      node = node.get(part)!;
    }
  }
  return tree;
}

/** The members of a resource's compact form (CustomFieldCompact, TaskCompact...), by resource type. */
const compactMembers: Record<string, string[]> = {
  custom_field: [
    'gid',
    'resource_type',
    'name',
    'type',
    'enum_options',
    'enabled',
    'representation_type',
    'id_prefix',
    'input_restrictions',
    'is_formula_field',
    'date_value',
    'enum_value',
    'multi_enum_values',
    'number_value',
    'text_value',
    'display_value',
  ],
  task: ['gid', 'resource_type', 'name', 'resource_subtype'],
};

/** A nested object as Asana returns it when only its name is asked for: compact. */
function compact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(compact);
  if (!value || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  if (record.gid === undefined) return value;
  const members = compactMembers[String(record.resource_type)] ?? ['gid', 'resource_type', 'name'];
  return Object.fromEntries(
    members.filter((name) => Object.hasOwn(record, name)).map((name) => [name, record[name]]),
  );
}

function select(value: unknown, tree: FieldTree, top: boolean): unknown {
  if (Array.isArray(value)) return value.map((item) => select(item, tree, top));
  if (!value || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  const result: Record<string, unknown> = { gid: record.gid };
  for (const [name, inner] of tree) {
    if (!Object.hasOwn(record, name)) {
      // Asana refuses an opt_field the resource does not have (verify the exact message).
      if (top) throw new FakeHttpError(400, `opt_fields: Unknown field: ${name}`);
      continue;
    }
    result[name] = inner.size ? select(record[name], inner, false) : compact(record[name]);
  }
  return result;
}

function shaped(record: AsanaRecord, ctx: Context): unknown {
  const optFields = typeof ctx.query.opt_fields === 'string' ? ctx.query.opt_fields : undefined;
  if (!optFields) {
    const { gid, resource_type, name, resource_subtype } = record;
    return { gid, resource_type, name, ...(resource_subtype !== undefined && { resource_subtype }) };
  }
  return select(record, fieldTree(optFields.split(',').filter(Boolean)), true);
}

const iso = (ms: number) => new Date(ms).toISOString();

interface AsanaEvent {
  seq: number;
  atMs: number;
  /** The streams it reaches: the resource itself, its projects (bubbling up), the workspace. */
  streams: Set<string>;
  body: Record<string, unknown>;
}

interface SyncToken {
  stream: string;
  seq: number;
  issuedMs: number;
}

export async function startFakeAsana(): Promise<FakeAsana> {
  const stores = new Map<string, VersionedStore<AsanaRecord>>([
    ['tasks', new VersionedStore<AsanaRecord>()],
    ['projects', new VersionedStore<AsanaRecord>()],
  ]);
  const events: AsanaEvent[] = [];
  let nextGid = 1200000000001000;
  const gid = () => String(nextGid++);

  const fake = new FakeProvider({
    prefix: '/api',
    credentialOf: bearerCredential,
    errorBody: (error) => ({
      errors: [
        {
          message:
            error.status === 401
              ? 'Not Authorized'
              : error.status === 429
                ? "You've made too many requests and hit a rate limit. Please retry after the given amount of time."
                : error.status >= 500
                  ? 'Server Error'
                  : error.message,
          help: HELP,
          ...(error.status >= 500 && { phrase: '6 sad squid snuggle softly' }),
        },
      ],
    }),
    // Asana documents Retry-After alone on a 429; a test's own value replaces this one.
    rateLimitHeaders: () => ({ 'retry-after': '30' }),
  });
  const now = () => fake.now();

  const store = (object: string) => stores.get(object)!;
  const objectOf = (ctx: Context): string => {
    const object = ctx.params.object;
    if (!stores.has(object)) throw new FakeHttpError(404, 'Unknown object type');
    return object;
  };
  const unknown = (id: string) => new FakeHttpError(404, `Unknown object: ${id}`);
  const recordOf = (object: string, id: string): AsanaRecord => {
    const record = store(object).get(id);
    if (!record) throw unknown(id);
    return record;
  };
  const projectRef = (projectGid: string) => {
    const project = recordOf('projects', projectGid);
    return { gid: project.gid, resource_type: 'project', name: project.name };
  };
  const resourceRef = (record: AsanaRecord) => ({
    gid: record.gid,
    resource_type: record.resource_type,
    name: record.name,
    ...(record.resource_subtype !== undefined && { resource_subtype: record.resource_subtype }),
  });

  /** Records an event on the resource, reaching its own stream, its projects' and the workspace's. */
  const emit = (
    record: AsanaRecord,
    atMs: number,
    action: 'added' | 'changed' | 'deleted',
    extra: Record<string, unknown> = {},
  ) => {
    const projects =
      record.resource_type === 'task' ? (record.projects as { gid: string }[]).map((p) => p.gid) : [];
    events.push({
      seq: events.length + 1,
      atMs,
      streams: new Set([record.gid, ...projects, ASANA_WORKSPACE]),
      body: {
        user: USER_REF,
        created_at: iso(atMs),
        type: record.resource_type,
        action,
        resource: resourceRef(record),
        parent: null,
        ...extra,
      },
    });
  };

  const makeProject = (values: Record<string, unknown>, modifiedMs: number): AsanaRecord => {
    const id = gid();
    const record: AsanaRecord = {
      gid: id,
      resource_type: 'project',
      name: 'Untitled',
      archived: false,
      color: 'none',
      icon: 'list',
      created_at: iso(modifiedMs),
      current_status: null,
      current_status_update: null,
      custom_field_settings: [],
      default_view: 'list',
      due_date: null,
      due_on: null,
      html_notes: '<body></body>',
      members: [USER_REF],
      modified_at: iso(modifiedMs),
      notes: '',
      public: true,
      privacy_setting: 'public_to_workspace',
      start_on: null,
      default_access_level: 'editor',
      minimum_access_level_for_customization: 'editor',
      minimum_access_level_for_sharing: 'editor',
      custom_fields: [],
      completed: false,
      completed_at: null,
      completed_by: null,
      followers: [USER_REF],
      owner: USER_REF,
      team: null,
      permalink_url: `https://app.asana.com/1/${ASANA_WORKSPACE}/project/${id}`,
      project_brief: null,
      created_from_template: null,
      workspace: WORKSPACE_REF,
      ...values,
    };
    store('projects').add(id, record, modifiedMs);
    emit(record, modifiedMs, 'added', { parent: WORKSPACE_REF });
    return record;
  };

  /** The custom field values a task carries, from the values set (gid → enum gid, number, date, text). */
  const customValues = (set: Record<string, unknown> = {}) =>
    customFields.map((field) => {
      const value = set[field.gid];
      const base = {
        gid: field.gid,
        resource_type: 'custom_field',
        name: field.name,
        type: field.resource_subtype,
        resource_subtype: field.resource_subtype,
        enabled: true,
        is_formula_field: field.is_formula_field,
        is_value_read_only: field.is_value_read_only,
      };
      if (field.resource_subtype === 'enum') {
        const option = field.enum_options!.find((o) => o.gid === value) ?? null;
        return {
          ...base,
          enum_options: field.enum_options,
          enum_value: option,
          display_value: option?.name ?? null,
        };
      }
      if (field.resource_subtype === 'number') {
        const number = value === undefined || value === null ? null : Number(value);
        return {
          ...base,
          precision: field.precision,
          number_value: number,
          display_value: number === null ? null : number.toFixed(field.precision ?? 0),
        };
      }
      if (field.resource_subtype === 'text') {
        const text = value === undefined || value === null ? null : String(value);
        return { ...base, text_value: text, display_value: text };
      }
      const date = value ? String(value) : null;
      return {
        ...base,
        date_value: date ? { date, date_time: null } : null,
        display_value: date,
      };
    });

  /** The values set on a task so far, gid → the value written. */
  const currentValues = (record: AsanaRecord): Record<string, unknown> =>
    Object.fromEntries(
      (record.custom_fields as Record<string, unknown>[]).map((field) => [
        field.gid,
        (field.enum_value as { gid?: string } | null)?.gid ??
          field.number_value ??
          field.text_value ??
          (field.date_value as { date?: string } | null)?.date ??
          null,
      ]),
    );

  const checkCustom = (value: unknown): Record<string, unknown> => {
    if (!value || typeof value !== 'object' || Array.isArray(value))
      throw new FakeHttpError(400, 'custom_fields: Value must be an object');
    for (const [field, set] of Object.entries(value)) {
      const definition = customFields.find((f) => f.gid === field);
      // (verify the message)
      if (!definition) throw new FakeHttpError(400, `Custom field with ID ${field} is not on given object`);
      if (definition.is_value_read_only)
        throw new FakeHttpError(400, `custom_fields: ${definition.name} is read-only`);
      if (set === null) continue;
      if (definition.resource_subtype === 'enum') {
        const option = definition.enum_options!.find((o) => o.gid === set);
        if (!option) throw new FakeHttpError(400, `custom_fields: enum option not found: ${String(set)}`);
        if (!option.enabled)
          throw new FakeHttpError(400, `custom_fields: enum option ${String(set)} is disabled`);
      }
      if (definition.resource_subtype === 'number' && typeof set !== 'number')
        throw new FakeHttpError(400, `custom_fields: ${definition.name} must be a number`);
      if (
        definition.resource_subtype === 'date' &&
        (typeof set !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(set))
      )
        throw new FakeHttpError(400, `custom_fields: ${definition.name} must be a date as YYYY-MM-DD`);
      if (definition.resource_subtype === 'text' && typeof set !== 'string')
        throw new FakeHttpError(400, `custom_fields: ${definition.name} must be a string`);
    }
    return value as Record<string, unknown>;
  };

  const makeTask = (values: Record<string, unknown>, projects: string[], modifiedMs: number): AsanaRecord => {
    const {
      custom_fields: custom,
      projects: _projects,
      workspace: _workspace,
      followers: _followers,
      tags: _tags,
      ...rest
    } = values;
    const id = gid();
    const record: AsanaRecord = {
      gid: id,
      resource_type: 'task',
      name: '',
      resource_subtype: 'default_task',
      created_by: { gid: USER_REF.gid, resource_type: 'user' },
      approval_status: null,
      assignee_status: 'inbox',
      assigned_by: null,
      completed: false,
      completed_at: null,
      completed_by: null,
      created_at: iso(modifiedMs),
      dependencies: [],
      dependents: [],
      due_at: null,
      due_on: null,
      external: null,
      html_notes: '<body></body>',
      hearted: false,
      hearts: [],
      is_rendered_as_separator: false,
      liked: false,
      likes: [],
      memberships: projects.map((project) => ({ project: projectRef(project), section: null })),
      modified_at: iso(modifiedMs),
      notes: '',
      num_hearts: 0,
      num_likes: 0,
      num_subtasks: 0,
      start_at: null,
      start_on: null,
      actual_time_minutes: null,
      assignee: null,
      assignee_section: null,
      custom_fields: customValues(custom as Record<string, unknown> | undefined),
      custom_type: null,
      custom_type_status_option: null,
      followers: [USER_REF],
      parent: null,
      projects: projects.map(projectRef),
      tags: [],
      workspace: WORKSPACE_REF,
      permalink_url: `https://app.asana.com/1/${ASANA_WORKSPACE}/task/${id}`,
      ...rest,
    };
    store('tasks').add(id, record, modifiedMs);
    emit(record, modifiedMs, 'added', { parent: projects.length ? projectRef(projects[0]) : null });
    return record;
  };

  const limitOf = (ctx: Context): number | undefined => {
    if (ctx.query.limit === undefined) return undefined;
    const limit = Number(ctx.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
      throw new FakeHttpError(400, `limit: The limit must be between 1 and ${MAX_LIMIT}.`);
    }
    return limit;
  };

  /**
   * A list answer from the records a listing shows (each with its insertion order). Without
   * `limit`, everything up to the unpaginated cap, with no next_page.
   */
  const listed = (ctx: Context, object: string, found: { record: AsanaRecord; row: Row<AsanaRecord> }[]) => {
    const limit = limitOf(ctx);
    fake.logListing(ctx, { object, pageSize: limit ?? UNPAGINATED_CAP, maxPageSize: MAX_LIMIT });
    const after = typeof ctx.query.offset === 'string' ? decodeOffset(ctx.query.offset, now()).after : -1;
    const rest = found.filter((item) => item.row.order > after);
    const page = rest.slice(0, limit ?? UNPAGINATED_CAP);
    const more = limit !== undefined && page.length < rest.length;
    let next_page: unknown = null;
    if (more) {
      const offset = encodeOffset({ after: page[page.length - 1].row.order, issuedMs: now() });
      const query = new URLSearchParams({ ...(ctx.query as Record<string, string>), offset });
      next_page = {
        offset,
        path: `${ctx.path.replace(/^\/api\/1\.0/, '')}?${query}`,
        uri: `https://app.asana.com/api/1.0${ctx.path.replace(/^\/api\/1\.0/, '')}?${query}`,
      };
    }
    ctx.body = { data: page.map((item) => shaped(item.record, ctx)), next_page };
  };

  const timeParam = (ctx: Context, name: string): number | undefined => {
    const value = ctx.query[name];
    if (value === undefined) return undefined;
    const time = Date.parse(String(value));
    if (Number.isNaN(time)) throw new FakeHttpError(400, `${name}: Invalid date-time: ${String(value)}`);
    return time;
  };

  const router = fake.router;
  router.get('/1.0/projects', (ctx) => {
    if (ctx.query.workspace !== undefined && ctx.query.workspace !== ASANA_WORKSPACE) {
      throw unknown(String(ctx.query.workspace));
    }
    const archived = ctx.query.archived === undefined ? undefined : ctx.query.archived === 'true';
    listed(
      ctx,
      'projects',
      store('projects')
        .listed(now())
        .filter((item) => archived === undefined || item.record.archived === archived),
    );
  });

  router.get('/1.0/tasks', (ctx) => {
    const project = ctx.query.project;
    if (typeof project !== 'string') {
      throw new FakeHttpError(
        400,
        'Must specify exactly one of project, tag, section, user task list, or assignee + workspace',
      );
    }
    recordOf('projects', project);
    const since = timeParam(ctx, 'modified_since');
    const completedSince = ctx.query.completed_since === 'now' ? now() : timeParam(ctx, 'completed_since');
    listed(
      ctx,
      'tasks',
      store('tasks')
        .listed(now())
        .filter(
          ({ record, modifiedMs }) =>
            (record.projects as { gid: string }[]).some((p) => p.gid === project) &&
            // "modified since the given time": read as strictly after it (verify).
            (since === undefined || modifiedMs > since) &&
            (completedSince === undefined ||
              !record.completed ||
              Date.parse(String(record.completed_at)) >= completedSince),
        ),
    );
  });

  router.get('/1.0/workspaces/:workspace/custom_fields', (ctx) => {
    if (ctx.params.workspace !== ASANA_WORKSPACE) throw unknown(ctx.params.workspace);
    const limit = limitOf(ctx);
    const after = typeof ctx.query.offset === 'string' ? decodeOffset(ctx.query.offset, now()).after : -1;
    const rest = customFields.slice(after + 1);
    const page = limit ? rest.slice(0, limit) : rest;
    const end = after + page.length;
    ctx.body = {
      data: page.map(definition),
      next_page:
        limit && page.length < rest.length
          ? {
              offset: encodeOffset({ after: end, issuedMs: now() }),
              path: `/workspaces/${ASANA_WORKSPACE}/custom_fields`,
              uri: `https://app.asana.com/api/1.0/workspaces/${ASANA_WORKSPACE}/custom_fields`,
            }
          : null,
    };
  });

  /** An events answer for a stream: 412 with a fresh token, or the events after the token. */
  const eventsOf = (ctx: Context, stream: string, perCall: number) => {
    const fresh = (): SyncToken => ({ stream, seq: events.length, issuedMs: now() });
    const encode = (token: SyncToken) =>
      Buffer.from(`${token.stream}:${token.seq}:${token.issuedMs}`).toString('base64url');
    const refuse = () => {
      ctx.status = 412;
      ctx.body = {
        errors: [
          {
            message:
              'Sync token invalid or too old. If you are attempting to keep resources in sync, you must fetch the full dataset for this query now and use the new sync token for the next sync.',
          },
        ],
        sync: encode(fresh()),
      };
    };
    const sync = typeof ctx.query.sync === 'string' ? ctx.query.sync : undefined;
    if (!sync) return refuse();
    const [tokenStream, seq, issued] = Buffer.from(sync, 'base64url').toString().split(':');
    const token: SyncToken = { stream: tokenStream, seq: Number(seq), issuedMs: Number(issued) };
    if (
      token.stream !== stream ||
      !Number.isInteger(token.seq) ||
      token.seq > events.length ||
      !Number.isFinite(token.issuedMs) ||
      now() - token.issuedMs > SYNC_TTL_MS
    )
      return refuse();
    // In order of occurrence, and no further than the first one not yet in the stream.
    const served: AsanaEvent[] = [];
    let last = token.seq;
    let more = false;
    for (const event of events.slice(token.seq)) {
      if (event.atMs + ASANA_EVENT_LAG_MS > now()) break;
      last = event.seq;
      if (!event.streams.has(stream)) continue;
      if (served.length === perCall) {
        more = true;
        last = event.seq - 1;
        break;
      }
      served.push(event);
    }
    ctx.body = {
      data: served.map((event) => event.body),
      sync: encode({ stream, seq: last, issuedMs: now() }),
      has_more: more,
    };
  };

  router.get('/1.0/events', (ctx) => {
    const resource = ctx.query.resource;
    if (typeof resource !== 'string') throw new FakeHttpError(400, 'resource: Missing input');
    if (!store('tasks').get(resource) && !store('projects').get(resource)) throw unknown(resource);
    eventsOf(ctx, resource, 100);
  });

  router.get('/1.0/workspaces/:workspace/events', (ctx) => {
    if (ctx.params.workspace !== ASANA_WORKSPACE) throw unknown(ctx.params.workspace);
    eventsOf(ctx, ASANA_WORKSPACE, 1000);
  });

  router.get('/1.0/:object/:gid', (ctx) => {
    ctx.body = { data: shaped(recordOf(objectOf(ctx), ctx.params.gid), ctx) };
  });

  const dataOf = (ctx: Context, object: string, update: boolean): Record<string, unknown> => {
    const data = (ctx.request.body as { data?: unknown } | undefined)?.data;
    if (!data || typeof data !== 'object' || Array.isArray(data)) {
      throw new FakeHttpError(400, 'data: Missing input');
    }
    const writable = object === 'tasks' ? taskWritable : projectWritable;
    const createOnly = object === 'tasks' ? taskCreateOnly : projectCreateOnly;
    for (const name of Object.keys(data)) {
      if (!writable.has(name)) throw new FakeHttpError(400, `${name}: Unknown field`);
      // (verify the message) create-only fields change through their own endpoints afterwards.
      if (update && createOnly.has(name))
        throw new FakeHttpError(400, `${name}: Cannot write this property after creation`);
    }
    const values = data as Record<string, unknown>;
    if (values.custom_fields !== undefined) checkCustom(values.custom_fields);
    return values;
  };

  router.post('/1.0/:object', (ctx) => {
    const object = objectOf(ctx);
    const data = dataOf(ctx, object, false);
    if (data.workspace !== undefined && data.workspace !== ASANA_WORKSPACE) {
      throw unknown(String(data.workspace));
    }
    let record: AsanaRecord;
    if (object === 'tasks') {
      const projects = Array.isArray(data.projects) ? data.projects.map(String) : [];
      if (!data.workspace && !projects.length && !data.parent) {
        throw new FakeHttpError(400, 'workspace: Missing input');
      }
      projects.forEach((project) => recordOf('projects', project));
      record = makeTask(data, projects, now());
    } else {
      if (!data.workspace && !data.team) throw new FakeHttpError(400, 'workspace: Missing input');
      const { workspace: _workspace, followers: _followers, custom_fields: _custom, ...values } = data;
      record = makeProject(values, now());
    }
    ctx.status = 201;
    ctx.set('location', `https://app.asana.com/api/1.0/${object}/${record.gid}`);
    ctx.body = { data: shaped(record, ctx) };
  });

  router.put('/1.0/:object/:gid', (ctx) => {
    const object = objectOf(ctx);
    recordOf(object, ctx.params.gid);
    const { custom_fields: custom, ...values } = dataOf(ctx, object, true);
    const at = now();
    const row = store(object).change(
      ctx.params.gid,
      at,
      (record) => {
        Object.assign(record, values, { modified_at: iso(at) });
        if (values.completed === true && !record.completed_at) record.completed_at = iso(at);
        if (values.completed === false) record.completed_at = null;
        if (custom && object === 'tasks')
          record.custom_fields = customValues({
            ...currentValues(record),
            ...(custom as Record<string, unknown>),
          });
      },
      { now: at },
    );
    emit(row.current.record, at, 'changed', {
      change: { field: Object.keys(values)[0] ?? 'custom_fields', action: 'changed' },
    });
    ctx.body = { data: shaped(row.current.record, ctx) };
  });

  const remove = (object: string, id: string, atMs: number) => {
    const row = store(object).remove(id, atMs);
    if (!row) return false;
    emit(row.current.record, atMs, 'deleted');
    return true;
  };

  router.delete('/1.0/:object/:gid', (ctx) => {
    const object = objectOf(ctx);
    recordOf(object, ctx.params.gid);
    remove(object, ctx.params.gid, now());
    ctx.body = { data: {} };
  });

  await fake.start();

  const fixtureProjects = ['Roadmap', 'Launch', 'Support'].map(
    (name) => makeProject({ name }, Date.UTC(2020, 0, 1)).gid,
  );
  let seeded = 0;

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
    fixtureProjects,
    seed(object, modifiedTimes) {
      return modifiedTimes.map((ms) => {
        seeded++;
        if (object === 'projects') return makeProject({ name: `Project ${seeded}` }, ms).gid;
        // Tasks spread over the fixture projects, so a read walks them all.
        const project = fixtureProjects[seeded % fixtureProjects.length];
        return makeTask({ name: `Task ${seeded}`, notes: 'Seeded' }, [project], ms).gid;
      });
    },
    touch(object, id, modifiedMs, options) {
      const row = store(object).change(
        id,
        modifiedMs,
        (record) => {
          record.modified_at = iso(modifiedMs);
        },
        { now: now(), visibleFromMs: options?.visibleFromMs },
      );
      emit(row.current.record, modifiedMs, 'changed', { change: { field: 'notes', action: 'changed' } });
    },
    remove(object, id, atMs) {
      if (!remove(object, id, atMs)) throw new Error(`no ${object} ${id}`);
    },
    stored: (object, id) => store(object).get(id),
    addToProject(taskGid, projectGid) {
      const task = recordOf('tasks', taskGid);
      (task.projects as unknown[]).push(projectRef(projectGid));
      (task.memberships as unknown[]).push({ project: projectRef(projectGid), section: null });
    },
    stop: () => fake.stop(),
  };
}

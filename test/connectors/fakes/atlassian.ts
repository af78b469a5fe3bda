import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';
import { jqlError, parseJql, type JqlRecord } from './atlassian-jql.js';
import { addJiraWebhookRoutes } from './atlassian-webhooks.js';
import { fieldCatalog, FIELDS, PRIORITIES, SEVERITIES, type FieldBean } from './atlassian-fields.js';
import { VersionedStore, type Row } from './versions.js';

/**
 * A local stand-in for Jira Cloud's REST API v3 (https://developer.atlassian.com/cloud/jira/platform/rest/v3/),
 * written from its reference, at `https://api.atlassian.com/ex/jira/{cloudId}/rest/api`:
 *
 * - Auth: OAuth 2.0 (3LO) bearer tokens; refresh at the token endpoint.
 * - Enhanced search, `GET /3/search/jql` (query) and `POST /3/search/jql` (body): `jql` (bounded:
 *   an unbounded query such as `order by key` is refused), `fields` (`id` by default: "returns
 *   IDs only"; `*all`, `*navigable`, names, `-name` to leave out), `maxResults` (50 by default; at
 *   most 5,000 when only `id`/`key` are asked, and "fewer … where a large number of fields are
 *   requested": 100 here), `nextPageToken`; answers `{issues, nextPageToken, isLast}` with no
 *   `nextPageToken` on the last page. "Recent updates might not be immediately visible": a change
 *   shows in search results INDEX_LAG_MS after it is made (the reference gives no figure: verify);
 *   reading an issue by id is consistent at once.
 * - JQL (see atlassian-jql.ts): date values to the minute (`yyyy-MM-dd HH:mm`, no seconds),
 *   read in the time zone of the user's profile (`GET /3/myself` → `timeZone`, Asia/Kolkata here,
 *   UTC+05:30); issue times are written to the millisecond in that zone
 *   (`2024-01-01T17:30:00.000+0530`). Ties in ORDER BY fall back to issue id.
 * - `POST /3/issue` (201 `{id, key, self}`), `PUT /3/issue/{idOrKey}` (204; `fields` set,
 *   `update` operations `set`/`add`/`remove`), `DELETE /3/issue/{idOrKey}` (204): a deleted issue is
 *   gone, no listing reveals it. Rich-text fields (`description`, `environment`, textarea custom
 *   fields) take Atlassian Document Format only; fields no screen has (status, created, …) cannot be
 *   set; errors `{errorMessages: [...], errors: {field: message}}`.
 * - Fields: `GET /3/field` (every system and custom field, with `schema`), create metadata
 *   `GET /3/issue/createmeta/{project}/issuetypes[/{issueTypeId}]` (required, allowed values) and
 *   `GET /3/issue/{idOrKey}/editmeta`. Issues carry every field in `fields`, null when unset.
 * - Projects: `GET /3/project/search` (`startAt`, `maxResults` 50 by default, `{values, isLast,
 *   nextPage, total}`), `GET /3/project/{idOrKey}`; projects carry no modification time.
 * - A 429 carries `Retry-After` (seconds), `X-RateLimit-Limit`, `-Remaining`, `-Reset` (ISO 8601)
 *   and `RateLimit-Reason`.
 */

export const JIRA_CLOUD_ID = '11223344-a1b2-3b33-c444-def123456789';
export const JIRA_PROJECT_KEY = 'FER';
/** Search results show a change this long after it is made. */
const INDEX_LAG_MS = 5_000;
/** The user's profile time zone: Asia/Kolkata, UTC+05:30 all year. */
const TIME_ZONE = 'Asia/Kolkata';
const OFFSET_MINUTES = 330;
const SEARCH_DEFAULT = 50;
const SEARCH_MAX_IDS = 5000;
const SEARCH_MAX_FIELDS = 100;
const PROJECT_PAGE_MAX = 100;

type Issue = { expand: string; id: string; self: string; key: string; fields: Record<string, unknown> };
type Project = Record<string, unknown> & { id: string; key: string; name: string };

/** A time as Jira writes it: the user's zone, to the millisecond, offset without a colon. */
export function jiraTime(ms: number): string {
  const local = new Date(ms + OFFSET_MINUTES * 60_000).toISOString().replace(/Z$/, '');
  const sign = OFFSET_MINUTES >= 0 ? '+' : '-';
  const abs = Math.abs(OFFSET_MINUTES);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
}

const errors = (fieldErrors: Record<string, string>) =>
  new FakeHttpError(400, JSON.stringify({ errorMessages: [], errors: fieldErrors }), 'jira');

const isAdf = (value: unknown) =>
  value === null ||
  (typeof value === 'object' &&
    (value as { type?: unknown }).type === 'doc' &&
    (value as { version?: unknown }).version === 1 &&
    Array.isArray((value as { content?: unknown }).content));

export const adf = (text: string) => ({
  type: 'doc',
  version: 1,
  content: [{ type: 'paragraph', content: [{ type: 'text', text }] }],
});

export async function startFakeAtlassian(): Promise<ConformanceFake> {
  const prefix = `/ex/jira/${JIRA_CLOUD_ID}/rest/api`;
  const issues = new VersionedStore<Issue>();
  const projects = new Map<string, Project>();
  const counters = new Map<string, number>();
  let nextIssueId = 10_001;
  let nextProjectId = 10_000;

  const fake = new FakeProvider({
    prefix,
    credentialOf: bearerCredential,
    errorBody: (error) =>
      error.code === 'jira'
        ? (JSON.parse(error.message) as unknown)
        : error.status === 401
          ? { code: 401, message: 'Unauthorized; scope does not match' }
          : { errorMessages: [error.message], errors: {} },
    rateLimitHeaders: () => ({
      'x-ratelimit-limit': '350',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': new Date(Date.now() + 60_000).toISOString(),
      'ratelimit-reason': 'jira-burst-based',
    }),
  });
  const now = () => fake.now();
  const base = () => fake.url;
  const router = fake.router;

  const user = {
    self: `https://api.atlassian.com/ex/jira/${JIRA_CLOUD_ID}/rest/api/3/user?accountId=5b10a2844c20165700ede21g`,
    accountId: '5b10a2844c20165700ede21g',
    accountType: 'atlassian',
    displayName: 'Mia Krystof',
    active: true,
    timeZone: TIME_ZONE,
  };

  // --- Projects ------------------------------------------------------------------------------

  function addProject(key: string, name: string): Project {
    const id = String(nextProjectId++);
    const project: Project = {
      expand: 'description,lead,issueTypes,url,projectKeys,permissions,insight',
      self: `${base()}/3/project/${id}`,
      id,
      key,
      name,
      avatarUrls: {
        '48x48': `https://example.atlassian.net/rest/api/3/universal_avatar/view/type/project/avatar/${id}`,
      },
      projectTypeKey: 'software',
      simplified: false,
      style: 'classic',
      isPrivate: false,
      properties: {},
    };
    projects.set(id, project);
    counters.set(key, 0);
    return project;
  }

  const projectOf = (idOrKey: unknown): Project | undefined =>
    [...projects.values()].find((p) => p.id === String(idOrKey) || p.key === String(idOrKey).toUpperCase());

  router.get('/3/project/search', (ctx) => {
    const startAt = Number(ctx.query.startAt ?? 0);
    const asked = Number(ctx.query.maxResults ?? 50);
    if (!Number.isInteger(startAt) || startAt < 0 || !Number.isInteger(asked) || asked < 1)
      throw new FakeHttpError(400, 'startAt and maxResults must be non-negative integers');
    const maxResults = Math.min(asked, PROJECT_PAGE_MAX);
    fake.logListing(ctx, { object: 'projects', pageSize: maxResults, maxPageSize: PROJECT_PAGE_MAX });
    const all = [...projects.values()].sort((a, b) => a.key.localeCompare(b.key));
    const values = all.slice(startAt, startAt + maxResults);
    const isLast = startAt + maxResults >= all.length;
    const self = new URL(ctx.href);
    const next = new URL(ctx.href);
    next.searchParams.set('startAt', String(startAt + maxResults));
    next.searchParams.set('maxResults', String(maxResults));
    ctx.body = {
      self: self.toString(),
      ...(!isLast && { nextPage: next.toString() }),
      maxResults,
      startAt,
      total: all.length,
      isLast,
      values,
    };
  });
  router.get('/3/project/:idOrKey', (ctx) => {
    const project = projectOf(ctx.params.idOrKey);
    if (!project) throw new FakeHttpError(404, 'No project could be found with key or id.');
    ctx.body = project;
  });

  router.get('/3/myself', (ctx) => {
    ctx.body = { ...user, emailAddress: 'mia@example.com', locale: 'en_US' };
  });

  // --- Fields --------------------------------------------------------------------------------

  router.get('/3/field', (ctx) => {
    ctx.body = fieldCatalog();
  });

  const issueTypes = [
    { id: '10001', name: 'Task', subtask: false, description: 'A small, distinct piece of work.' },
    { id: '10002', name: 'Bug', subtask: false, description: 'A problem or error.' },
  ];
  const issueTypeOf = (value: unknown) => {
    const wanted = value as { id?: unknown; name?: unknown } | null;
    return issueTypes.find((t) => t.id === String(wanted?.id) || t.name === wanted?.name);
  };

  /** A field as create or edit metadata describes it. */
  const meta = (field: FieldBean) => ({
    required: ['summary', 'project', 'issuetype'].includes(field.id),
    schema: field.schema,
    name: field.name,
    key: field.key,
    fieldId: field.id,
    hasDefaultValue: field.id === 'priority',
    operations: field.id === 'labels' ? ['add', 'set', 'remove'] : ['set'],
    ...(field.id === 'priority' && { allowedValues: PRIORITIES }),
    ...(field.id === 'customfield_10042' && { allowedValues: SEVERITIES }),
    ...(field.id === 'issuetype' && { allowedValues: issueTypes }),
  });
  const settable = () => FIELDS.filter((field) => field.orderable);

  router.get('/3/issue/createmeta/:project/issuetypes', (ctx) => {
    if (!projectOf(ctx.params.project))
      throw new FakeHttpError(404, 'No project could be found with key or id.');
    ctx.body = { maxResults: 50, startAt: 0, total: issueTypes.length, issueTypes };
  });
  router.get('/3/issue/createmeta/:project/issuetypes/:type', (ctx) => {
    if (!projectOf(ctx.params.project))
      throw new FakeHttpError(404, 'No project could be found with key or id.');
    if (!issueTypeOf({ id: ctx.params.type })) throw new FakeHttpError(404, 'Issue type not found.');
    const startAt = Number(ctx.query.startAt ?? 0);
    const maxResults = Math.min(Number(ctx.query.maxResults ?? 50), 200);
    const all = settable().map(meta);
    ctx.body = { maxResults, startAt, total: all.length, fields: all.slice(startAt, startAt + maxResults) };
  });

  // --- Issues --------------------------------------------------------------------------------

  const rowOf = (idOrKey: string): Row<Issue> => {
    const row =
      issues.row(idOrKey) ?? issues.live().find((candidate) => candidate.current.record.key === idOrKey);
    if (!row) throw new FakeHttpError(404, 'Issue does not exist or you do not have permission to see it.');
    return row;
  };

  router.get('/3/issue/:idOrKey/editmeta', (ctx) => {
    rowOf(ctx.params.idOrKey);
    ctx.body = {
      fields: Object.fromEntries(
        settable()
          .filter((field) => field.id !== 'project')
          .map((field) => [field.id, meta(field)]),
      ),
    };
  });

  /** Field values of a create or edit, checked as Jira checks them. */
  function checkFields(values: Record<string, unknown>, creating: boolean): Record<string, unknown> {
    const problems: Record<string, string> = {};
    const out: Record<string, unknown> = {};
    for (const [id, value] of Object.entries(values)) {
      const field = FIELDS.find((candidate) => candidate.id === id);
      if (!field || !field.orderable || (!creating && id === 'project')) {
        problems[id] = `Field '${id}' cannot be set. It is not on the appropriate screen, or unknown.`;
        continue;
      }
      const type = field.schema.type;
      const custom = field.schema.custom ?? '';
      if (id === 'project') {
        const project = projectOf(
          (value as { id?: unknown; key?: unknown })?.id ?? (value as { key?: unknown })?.key,
        );
        if (!project) problems.project = 'Specify a valid project ID or key';
        else out.project = { self: project.self, id: project.id, key: project.key, name: project.name };
      } else if (id === 'issuetype') {
        const issueType = issueTypeOf(value);
        if (!issueType) problems.issuetype = 'Specify an issue type';
        else out.issuetype = { self: `${base()}/3/issuetype/${issueType.id}`, ...issueType };
      } else if (id === 'summary') {
        if (typeof value !== 'string' || !value.trim())
          problems.summary = 'You must specify a summary of the issue.';
        else if (value.length > 255) problems.summary = 'Summary must be less than 255 characters.';
        else out.summary = value;
      } else if (type === 'string' && /textarea$/.test(custom)) {
        if (!isAdf(value))
          problems[id] = 'Operation value must be an Atlassian Document (see the Atlassian Document Format)';
        else out[id] = value;
      } else if (
        type === 'string' &&
        (field.schema.system === 'description' || field.schema.system === 'environment')
      ) {
        if (!isAdf(value))
          problems[id] = 'Operation value must be an Atlassian Document (see the Atlassian Document Format)';
        else out[id] = value;
      } else if (type === 'string') {
        if (value !== null && typeof value !== 'string') problems[id] = `Operation value must be a string`;
        else if (typeof value === 'string' && value.length > 255)
          problems[id] = 'The entered text is too long.';
        else out[id] = value;
      } else if (type === 'number') {
        if (value !== null && typeof value !== 'number') problems[id] = `Operation value must be a number`;
        else out[id] = value;
      } else if (type === 'date') {
        if (value !== null && !/^\d{4}-\d{2}-\d{2}$/.test(String(value)))
          problems[id] = "Error parsing date string: it should be in the format 'yyyy-MM-dd'";
        else out[id] = value;
      } else if (id === 'labels') {
        if (!Array.isArray(value) || value.some((label) => typeof label !== 'string'))
          problems.labels = 'Operation value must be an array of strings';
        else if (value.some((label) => /\s/.test(label)))
          problems.labels = `The label '${value.find((label) => /\s/.test(label))}' contains spaces which is invalid.`;
        else out.labels = value;
      } else if (id === 'priority' || type === 'option') {
        const allowed = id === 'priority' ? PRIORITIES : SEVERITIES;
        const wanted = value as { id?: unknown; name?: unknown; value?: unknown } | null;
        const found =
          wanted === null
            ? null
            : allowed.find(
                (option) =>
                  option.id === String(wanted.id) ||
                  ('name' in option && option.name === wanted.name) ||
                  ('value' in option && option.value === wanted.value),
              );
        if (found === undefined) problems[id] = `Specify a valid value for ${field.name}`;
        else out[id] = found;
      } else if (type === 'user') {
        const accountId = (value as { accountId?: unknown } | null)?.accountId;
        if (value !== null && accountId !== user.accountId)
          problems[id] = `Specify a valid value for ${field.name}`;
        else out[id] = value === null ? null : user;
      } else {
        out[id] = value;
      }
    }
    if (creating) {
      for (const required of ['project', 'issuetype', 'summary'])
        if (!(required in values) && !problems[required])
          problems[required] =
            required === 'summary'
              ? 'You must specify a summary of the issue.'
              : required === 'project'
                ? 'Specify a valid project ID or key'
                : 'Specify an issue type';
    }
    if (Object.keys(problems).length) throw errors(problems);
    return out;
  }

  /** `update` operations: `[{set: v}]`, `[{add: v}]`, `[{remove: v}]` per field. */
  function applyUpdate(record: Issue, update: unknown): Record<string, unknown> {
    if (update === undefined) return {};
    if (!update || typeof update !== 'object') throw errors({ update: 'update must be an object' });
    const out: Record<string, unknown> = {};
    for (const [id, operations] of Object.entries(update)) {
      if (!Array.isArray(operations)) throw errors({ [id]: 'Operations must be a list' });
      for (const operation of operations as Record<string, unknown>[]) {
        const [verb, value] = Object.entries(operation ?? {})[0] ?? [];
        if (verb === 'set') Object.assign(out, checkFields({ [id]: value }, false));
        else if ((verb === 'add' || verb === 'remove') && id === 'labels') {
          const current = (out.labels ?? record.fields.labels ?? []) as string[];
          out.labels =
            verb === 'add' ? [...new Set([...current, String(value)])] : current.filter((l) => l !== value);
        } else throw errors({ [id]: `Operation '${String(verb)}' is not supported for ${id}` });
      }
    }
    return out;
  }

  function newIssue(values: Record<string, unknown>, ms: number, visibleFromMs?: number): Row<Issue> {
    const project = values.project as { key: string; id: string };
    const number = (counters.get(project.key) ?? 0) + 1;
    counters.set(project.key, number);
    const id = String(nextIssueId++);
    const time = jiraTime(ms);
    const fields: Record<string, unknown> = Object.fromEntries(FIELDS.map((field) => [field.id, null]));
    Object.assign(fields, {
      labels: [],
      components: [],
      fixVersions: [],
      status: {
        self: `${base()}/3/status/10000`,
        id: '10000',
        name: 'To Do',
        statusCategory: { id: 2, key: 'new', name: 'To Do' },
      },
      priority: PRIORITIES[2],
      creator: user,
      reporter: user,
      created: time,
      updated: time,
      ...values,
    });
    const record: Issue = {
      expand: 'renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations',
      id,
      self: `${base()}/3/issue/${id}`,
      key: `${project.key}-${number}`,
      fields,
    };
    return issues.add(id, record, ms, visibleFromMs ?? ms + INDEX_LAG_MS);
  }

  function change(row: Row<Issue>, ms: number, apply: (record: Issue) => void, visibleFromMs?: number) {
    issues.change(
      row.id,
      ms,
      (record) => {
        apply(record);
        record.fields.updated = jiraTime(ms);
      },
      { now: now(), visibleFromMs: visibleFromMs ?? ms + INDEX_LAG_MS },
    );
  }

  /** What JQL compares for an issue (the version search shows). */
  const jqlView = (issue: Issue, modifiedMs: number): JqlRecord => ({
    value(field) {
      const f = issue.fields;
      switch (field) {
        case 'updated':
          return modifiedMs;
        case 'created':
          return Date.parse(String(f.created));
        case 'resolutiondate':
        case 'resolved':
          return f.resolutiondate ? Date.parse(String(f.resolutiondate)) : null;
        case 'duedate':
        case 'due':
          return f.duedate ? Date.parse(`${String(f.duedate)}T00:00:00+05:30`) : null;
        case 'project':
          return [(f.project as Project).key, (f.project as Project).id, (f.project as Project).name];
        case 'key':
        case 'issuekey':
          return issue.key;
        case 'id':
          return Number(issue.id);
        case 'issuetype':
        case 'type':
          return (f.issuetype as { name: string }).name;
        case 'status':
          return (f.status as { name: string }).name;
        case 'priority':
          return (f.priority as { name: string } | null)?.name ?? null;
        case 'summary':
        case 'text':
          return String(f.summary);
        case 'labels':
          return f.labels as string[];
        case 'assignee':
        case 'reporter':
          return (f[field] as { accountId: string } | null)?.accountId ?? null;
        default:
          return undefined;
      }
    },
  });

  /** The fields a search or get asks for, as Jira reads `fields`. */
  function projection(asked: string[]): (issue: Issue) => Record<string, unknown> {
    const names = asked
      .flatMap((entry) => entry.split(','))
      .map((name) => name.trim())
      .filter(Boolean);
    const include = new Set<string>();
    const exclude = new Set<string>();
    for (const name of names) {
      if (name === '*all') FIELDS.forEach((field) => include.add(field.id));
      else if (name === '*navigable')
        FIELDS.filter((f) => f.navigable).forEach((field) => include.add(field.id));
      else if (name.startsWith('-')) exclude.add(name.slice(1));
      else include.add(name);
    }
    const idsOnly = [...include].every((name) => name === 'id' || name === 'key');
    return (issue) => {
      if (idsOnly) return include.has('key') ? { id: issue.id, key: issue.key } : { id: issue.id };
      const fields = Object.fromEntries(
        Object.entries(issue.fields).filter(([id]) => include.has(id) && !exclude.has(id)),
      );
      return { expand: issue.expand, id: issue.id, self: issue.self, key: issue.key, fields };
    };
  }

  function listOf(value: unknown): string[] {
    if (value === undefined) return [];
    return (Array.isArray(value) ? value : [value]).map(String);
  }

  function search(ctx: Context, input: Record<string, unknown>) {
    const jql = typeof input.jql === 'string' ? input.jql : '';
    const query = parseJql(jql, now(), OFFSET_MINUTES);
    if (!query.bounded)
      throw jqlError(
        'Unbounded JQL queries are not allowed here. Please add a search restriction to your query.',
      );
    const fields = listOf(input.fields);
    const project = projection(fields.length ? fields : ['id']);
    const idsOnly =
      fields.length === 0 ||
      fields
        .join(',')
        .split(',')
        .every((f) => ['id', 'key'].includes(f.trim()));
    const cap = idsOnly ? SEARCH_MAX_IDS : SEARCH_MAX_FIELDS;
    const asked = input.maxResults === undefined ? SEARCH_DEFAULT : Number(input.maxResults);
    if (!Number.isInteger(asked) || asked < 0)
      throw jqlError("The value for 'maxResults' must be a non-negative integer.");
    const size = Math.min(asked, cap);
    fake.logListing(ctx, { object: 'issues', pageSize: size, maxPageSize: cap });
    let offset = 0;
    if (typeof input.nextPageToken === 'string' && input.nextPageToken) {
      try {
        const token = JSON.parse(Buffer.from(input.nextPageToken, 'base64url').toString('utf8')) as {
          o: number;
          q: string;
        };
        if (token.q !== jql) throw new Error('another query');
        offset = token.o;
      } catch {
        throw jqlError('The provided next page token is invalid or expired.');
      }
    }
    const shown = issues
      .listed(now())
      .filter((version) => query.matches(jqlView(version.record, version.modifiedMs)));
    const order = query.order.length ? query.order : [{ field: 'created', descending: true }];
    const key = (version: (typeof shown)[number], field: string): number | string => {
      const value = jqlView(version.record, version.modifiedMs).value(field);
      if (field === 'key' || field === 'issuekey') {
        const [projectKey, number] = String(value).split('-');
        return `${projectKey}-${number.padStart(12, '0')}`;
      }
      return Array.isArray(value) ? value[0] : (value ?? '');
    };
    shown.sort((a, b) => {
      for (const { field, descending } of order) {
        const x = key(a, field);
        const y = key(b, field);
        const compared =
          typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
        if (compared) return descending ? -compared : compared;
      }
      return Number(a.record.id) - Number(b.record.id);
    });
    const page = shown.slice(offset, offset + size);
    const isLast = offset + size >= shown.length;
    ctx.body = {
      issues: page.map((version) => project(version.record)),
      ...(!isLast && {
        nextPageToken: Buffer.from(JSON.stringify({ o: offset + size, q: jql })).toString('base64url'),
      }),
      isLast,
    };
  }

  router.get('/3/search/jql', (ctx) => {
    search(ctx, {
      jql: ctx.query.jql,
      fields: ctx.query.fields,
      maxResults: ctx.query.maxResults,
      nextPageToken: ctx.query.nextPageToken,
    });
  });
  router.post('/3/search/jql', (ctx) => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    if (body.fields !== undefined && !Array.isArray(body.fields))
      throw jqlError("The value for 'fields' must be a list of field names.");
    search(ctx, body);
  });

  router.get('/3/issue/:idOrKey', (ctx) => {
    const fields = listOf(ctx.query.fields);
    ctx.body = projection(fields.length ? fields : ['*all'])(rowOf(ctx.params.idOrKey).current.record);
  });

  router.post('/3/issue', (ctx) => {
    const body = (ctx.request.body ?? {}) as { fields?: Record<string, unknown>; update?: unknown };
    if (!body.fields || typeof body.fields !== 'object') throw errors({ fields: 'fields are required' });
    const values = checkFields(body.fields, true);
    const at = now();
    const row = newIssue(values, at);
    const record = row.current.record;
    Object.assign(record.fields, applyUpdate(record, body.update));
    ctx.status = 201;
    ctx.body = { id: record.id, key: record.key, self: record.self };
  });

  router.put('/3/issue/:idOrKey', (ctx) => {
    const row = rowOf(ctx.params.idOrKey);
    const body = (ctx.request.body ?? {}) as { fields?: Record<string, unknown>; update?: unknown };
    const values = checkFields(body.fields ?? {}, false);
    const updates = applyUpdate(row.current.record, body.update);
    change(row, now(), (record) => Object.assign(record.fields, values, updates));
    ctx.status = 204;
  });

  router.delete('/3/issue/:idOrKey', (ctx) => {
    const row = rowOf(ctx.params.idOrKey);
    issues.remove(row.id, now());
    ctx.status = 204;
  });

  addJiraWebhookRoutes(router, now);

  await fake.start();
  const home = addProject(JIRA_PROJECT_KEY, 'Ferry');

  let seeded = 0;
  return {
    url: fake.url,
    tokenUrl: fake.tokenUrl,
    get credential() {
      return fake.credential;
    },
    rotateCredential: () => fake.rotateCredential(),
    refuseRefresh: () => fake.refuseRefresh(),
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    requests: fake.requests,
    setClock: (clock) => fake.setClock(clock),
    seed(object, times) {
      return times.map((ms) => {
        seeded += 1;
        if (object === 'projects') return addProject(`P${seeded}`, `Project ${seeded}`).id;
        const row = newIssue(
          {
            project: { self: home.self, id: home.id, key: home.key, name: home.name },
            issuetype: { self: `${base()}/3/issuetype/10001`, ...issueTypes[0] },
            summary: `Issue ${seeded}`,
            description: adf(`Seeded ${seeded}`),
            labels: ['seeded'],
            customfield_10016: seeded % 8,
            customfield_10040: `Team ${seeded % 3}`,
            customfield_10042: SEVERITIES[seeded % SEVERITIES.length],
          },
          ms,
        );
        return row.id;
      });
    },
    touch(object, id, modifiedMs, options) {
      change(
        rowOf(id),
        modifiedMs,
        (record) => {
          record.fields.customfield_10040 = `Edited ${modifiedMs}`;
        },
        options?.visibleFromMs,
      );
    },
    remove(object, id, atMs) {
      if (object === 'projects') projects.delete(id);
      else issues.remove(id, atMs);
    },
    stored: (object, id) => (object === 'projects' ? projects.get(id) : issues.get(id)),
    stop: () => fake.stop(),
  };
}

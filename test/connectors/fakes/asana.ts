import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';

/**
 * A local stand-in for Asana's REST API 1.0 as its public reference describes it: `{data}`
 * envelopes; `limit` (1–100) and an opaque `offset` answered in `next_page {offset, path, uri}`
 * (null on the last page); compact records unless `opt_fields` names fields (dotted paths reach
 * into nested objects); `GET /projects?workspace=`; `GET /tasks`, which needs a `project` and alone
 * takes `modified_since`; one record by gid; create (`POST {data}`, in a workspace), `PUT {data}`
 * and `DELETE`; a workspace's custom fields, whose values tasks carry in `custom_fields` and take as
 * `custom_fields: {gid: value}`; errors `{errors: [{message, help}]}`. Only what Ferry uses.
 */

export const ASANA_WORKSPACE = '1200000000000001';

type AsanaRecord = Record<string, unknown> & { gid: string; modified_at: string };

export interface FakeAsana extends ConformanceFake {
  /** Adds a task to another project too (Asana tasks may live in several). */
  addToProject(taskGid: string, projectGid: string): void;
  /** Projects that exist from the start, each holding some of the seeded tasks. */
  fixtureProjects: string[];
}

const customFields = [
  {
    gid: '1200000000000101',
    resource_type: 'custom_field',
    name: 'Priority',
    resource_subtype: 'enum',
    enum_options: [
      { gid: '1200000000000111', resource_type: 'enum_option', name: 'High', enabled: true, color: 'red' },
      { gid: '1200000000000112', resource_type: 'enum_option', name: 'Low', enabled: true, color: 'blue' },
    ],
  },
  {
    gid: '1200000000000102',
    resource_type: 'custom_field',
    name: 'Estimate',
    resource_subtype: 'number',
    precision: 1,
  },
  { gid: '1200000000000103', resource_type: 'custom_field', name: 'Launch', resource_subtype: 'date' },
];

/** What a create or update may set, per object (a subset of the reference's writable fields). */
const writable: Record<string, string[]> = {
  tasks: [
    'name',
    'notes',
    'completed',
    'due_on',
    'due_at',
    'start_on',
    'assignee',
    'projects',
    'workspace',
    'custom_fields',
  ],
  projects: ['name', 'notes', 'archived', 'color', 'due_on', 'start_on', 'public', 'workspace', 'team'],
};

function encodeOffset(position: number): string {
  return Buffer.from(`pos:${position}`).toString('base64url');
}

function decodeOffset(offset: string): number {
  const match = /^pos:(\d+)$/.exec(Buffer.from(offset, 'base64url').toString());
  if (!match) throw new FakeHttpError(400, 'offset: Your pagination token is invalid.');
  return Number(match[1]);
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

/** A nested object as Asana returns it when only its name is asked for: compact. */
function compact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(compact);
  if (!value || typeof value !== 'object') return value;
  const { gid, resource_type, name } = value as Record<string, unknown>;
  return { gid, resource_type, ...(name !== undefined && { name }) };
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

export async function startFakeAsana(): Promise<FakeAsana> {
  const records = new Map<string, AsanaRecord[]>([
    ['tasks', []],
    ['projects', []],
  ]);
  let nextGid = 1200000000001000;
  const gid = () => String(nextGid++);
  const iso = (ms: number) => new Date(ms).toISOString();

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
                ? 'You have made too many requests recently. Please, be chill.'
                : error.message,
          help: 'For more information on API status codes and how to handle them, read the docs on errors: https://developers.asana.com/docs/errors',
        },
      ],
    }),
  });

  const live = (object: string) => records.get(object)!;
  const objectOf = (ctx: Context): string => {
    const object = ctx.params.object;
    if (!records.has(object)) throw new FakeHttpError(404, 'Unknown object type');
    return object;
  };
  const recordOf = (object: string, id: string): AsanaRecord => {
    const record = live(object).find((r) => r.gid === id);
    if (!record) throw new FakeHttpError(404, `${object.slice(0, -1)}: Unknown object: ${id}`);
    return record;
  };
  const projectRef = (projectGid: string) => {
    const project = recordOf('projects', projectGid);
    return { gid: project.gid, resource_type: 'project', name: project.name };
  };

  const makeProject = (values: Record<string, unknown>, modifiedMs: number): AsanaRecord => {
    const record: AsanaRecord = {
      gid: gid(),
      resource_type: 'project',
      name: 'Untitled',
      notes: '',
      archived: false,
      color: null,
      due_on: null,
      start_on: null,
      public: true,
      owner: null,
      team: null,
      workspace: { gid: ASANA_WORKSPACE, resource_type: 'workspace', name: 'Acme' },
      created_at: iso(modifiedMs),
      modified_at: iso(modifiedMs),
      ...values,
    };
    live('projects').push(record);
    return record;
  };

  const customValues = (set: Record<string, unknown> = {}) =>
    customFields.map((field) => {
      const value = set[field.gid];
      const base = {
        gid: field.gid,
        resource_type: 'custom_field',
        name: field.name,
        resource_subtype: field.resource_subtype,
      };
      if (field.resource_subtype === 'enum') {
        const option = field.enum_options!.find((o) => o.gid === value) ?? null;
        return { ...base, enum_value: option, display_value: option?.name ?? null };
      }
      if (field.resource_subtype === 'number') {
        return {
          ...base,
          number_value: value ?? null,
          display_value: value === undefined ? null : String(value),
        };
      }
      return {
        ...base,
        date_value: value ? { date: value, date_time: null } : null,
        display_value: value ?? null,
      };
    });

  const checkCustom = (value: unknown): Record<string, unknown> => {
    if (!value || typeof value !== 'object')
      throw new FakeHttpError(400, 'custom_fields: Value must be an object');
    for (const [field, set] of Object.entries(value)) {
      const definition = customFields.find((f) => f.gid === field);
      if (!definition) throw new FakeHttpError(400, `custom_fields: Unknown custom field: ${field}`);
      if (definition.resource_subtype === 'enum' && !definition.enum_options!.some((o) => o.gid === set)) {
        throw new FakeHttpError(400, `custom_fields: enum option not found: ${String(set)}`);
      }
    }
    return value as Record<string, unknown>;
  };

  const makeTask = (values: Record<string, unknown>, projects: string[], modifiedMs: number): AsanaRecord => {
    const { custom_fields: custom, projects: _projects, workspace: _workspace, ...rest } = values;
    const record: AsanaRecord = {
      gid: gid(),
      resource_type: 'task',
      resource_subtype: 'default_task',
      name: '',
      notes: '',
      completed: false,
      completed_at: null,
      due_on: null,
      due_at: null,
      start_on: null,
      assignee: null,
      parent: null,
      projects: projects.map(projectRef),
      workspace: { gid: ASANA_WORKSPACE, resource_type: 'workspace', name: 'Acme' },
      created_at: iso(modifiedMs),
      modified_at: iso(modifiedMs),
      custom_fields: customValues(custom as Record<string, unknown> | undefined),
      ...rest,
    };
    live('tasks').push(record);
    return record;
  };

  const limitOf = (ctx: Context): number => {
    const limit = ctx.query.limit === undefined ? undefined : Number(ctx.query.limit);
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 100)) {
      throw new FakeHttpError(400, 'limit: The limit must be between 1 and 100.');
    }
    return limit ?? 0;
  };

  /** A list answer; without `limit` Asana sends everything at once, with no next_page. */
  const listed = (ctx: Context, found: AsanaRecord[]) => {
    const limit = limitOf(ctx);
    const start = typeof ctx.query.offset === 'string' ? decodeOffset(ctx.query.offset) : 0;
    const page = limit ? found.slice(start, start + limit) : found;
    const end = start + page.length;
    const more = limit > 0 && end < found.length;
    const query = new URLSearchParams({
      ...(ctx.query as Record<string, string>),
      offset: encodeOffset(end),
    });
    ctx.body = {
      data: page.map((record) => shaped(record, ctx)),
      next_page: more
        ? {
            offset: encodeOffset(end),
            path: `${ctx.path.replace(/^\/api/, '')}?${query}`,
            uri: `https://app.asana.com${ctx.path}?${query}`,
          }
        : null,
    };
  };

  const router = fake.router;
  router.get('/1.0/projects', (ctx) => {
    if (ctx.query.workspace !== undefined && ctx.query.workspace !== ASANA_WORKSPACE) {
      throw new FakeHttpError(404, `workspace: Unknown object: ${String(ctx.query.workspace)}`);
    }
    listed(ctx, live('projects'));
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
    const since =
      ctx.query.modified_since === undefined ? undefined : Date.parse(String(ctx.query.modified_since));
    if (since !== undefined && Number.isNaN(since))
      throw new FakeHttpError(400, 'modified_since: Invalid date-time');
    listed(
      ctx,
      live('tasks').filter(
        (task) =>
          (task.projects as { gid: string }[]).some((p) => p.gid === project) &&
          (since === undefined || Date.parse(task.modified_at) >= since),
      ),
    );
  });

  router.get('/1.0/workspaces/:workspace/custom_fields', (ctx) => {
    if (ctx.params.workspace !== ASANA_WORKSPACE) throw new FakeHttpError(404, 'workspace: Unknown object');
    const limit = limitOf(ctx);
    const start = typeof ctx.query.offset === 'string' ? decodeOffset(ctx.query.offset) : 0;
    const page = limit ? customFields.slice(start, start + limit) : customFields;
    const end = start + page.length;
    ctx.body = {
      data: page,
      next_page: limit && end < customFields.length ? { offset: encodeOffset(end), path: '', uri: '' } : null,
    };
  });

  router.get('/1.0/:object/:gid', (ctx) => {
    ctx.body = { data: shaped(recordOf(objectOf(ctx), ctx.params.gid), ctx) };
  });

  const dataOf = (ctx: Context, object: string): Record<string, unknown> => {
    const data = (ctx.request.body as { data?: unknown } | undefined)?.data;
    if (!data || typeof data !== 'object' || Array.isArray(data)) {
      throw new FakeHttpError(400, 'data: Missing input');
    }
    for (const name of Object.keys(data)) {
      if (!writable[object].includes(name)) throw new FakeHttpError(400, `${name}: Unknown field`);
    }
    const values = data as Record<string, unknown>;
    if (values.custom_fields !== undefined) checkCustom(values.custom_fields);
    return values;
  };

  router.post('/1.0/:object', (ctx) => {
    const object = objectOf(ctx);
    const data = dataOf(ctx, object);
    if (data.workspace !== undefined && data.workspace !== ASANA_WORKSPACE) {
      throw new FakeHttpError(404, `workspace: Unknown object: ${String(data.workspace)}`);
    }
    let record: AsanaRecord;
    if (object === 'tasks') {
      const projects = Array.isArray(data.projects) ? data.projects.map(String) : [];
      if (!data.workspace && !projects.length) {
        throw new FakeHttpError(400, 'workspace: Missing input');
      }
      projects.forEach((project) => recordOf('projects', project));
      record = makeTask(data, projects, Date.now());
    } else {
      if (!data.workspace) throw new FakeHttpError(400, 'workspace: Missing input');
      if (typeof data.name !== 'string') throw new FakeHttpError(400, 'name: Missing input');
      const { workspace: _workspace, ...values } = data;
      record = makeProject(values, Date.now());
    }
    ctx.status = 201;
    ctx.body = { data: record };
  });

  router.put('/1.0/:object/:gid', (ctx) => {
    const object = objectOf(ctx);
    const record = recordOf(object, ctx.params.gid);
    const {
      custom_fields: custom,
      workspace: _workspace,
      projects: _projects,
      ...values
    } = dataOf(ctx, object);
    Object.assign(record, values, { modified_at: iso(Date.now()) });
    if (custom) {
      const current = Object.fromEntries(
        (record.custom_fields as Record<string, unknown>[]).map((field) => [
          field.gid,
          (field.enum_value as { gid?: string } | null)?.gid ??
            field.number_value ??
            (field.date_value as { date?: string } | null)?.date,
        ]),
      );
      record.custom_fields = customValues({ ...current, ...(custom as Record<string, unknown>) });
    }
    ctx.body = { data: record };
  });

  router.delete('/1.0/:object/:gid', (ctx) => {
    const object = objectOf(ctx);
    const record = recordOf(object, ctx.params.gid);
    records.set(
      object,
      live(object).filter((r) => r !== record),
    );
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
    touch(object, id, modifiedMs) {
      recordOf(object, id).modified_at = iso(modifiedMs);
    },
    stored(object, id) {
      return live(object).find((record) => record.gid === id);
    },
    addToProject(taskGid, projectGid) {
      (recordOf('tasks', taskGid).projects as unknown[]).push(projectRef(projectGid));
    },
    stop: () => fake.stop(),
  };
}

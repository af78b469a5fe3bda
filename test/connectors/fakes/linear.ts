import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { FakeHttpError, FakeProvider } from '../kit/fake-provider.js';
import { GraphqlFieldError, GraphqlSyntaxError, parseGraphql, project } from './graphql-lite.js';

/**
 * A local stand-in for Linear's GraphQL API as its public reference and schema describe it: one
 * endpoint, `POST https://api.linear.app/graphql`, with `Authorization: Bearer <OAuth token>` (or a
 * personal API key as it is); `issues`, `projects`, `teams` and `users` connections taking `first`
 * (default 50), `after`, `orderBy: updatedAt` and `filter: {updatedAt: {gte, gt, lt, lte}}`,
 * answering `nodes` and `pageInfo {hasNextPage endCursor}`; `issue(id:)`, `project(id:)`,
 * `team(id:)`, `user(id:)`; `issueCreate`/`issueUpdate`/`issueDelete` and
 * `projectCreate`/`projectUpdate`/`projectDelete` payloads with `success`; errors as
 * `{errors: [{message, extensions: {type, userError, userPresentableMessage}}]}` (the
 * `type` strings of Linear's SDK: `invalid input`, `authentication error`, `ratelimited`…), a query Linear cannot run
 * answered 400, a stale token 401 (`AUTHENTICATION_ERROR`), and a throttled request 429
 * (`RATELIMITED`) with `X-RateLimit-Requests-*` headers. Only what Ferry uses.
 */

type LinearRecord = Record<string, unknown> & { __typename: string; id: string; updatedAt: string };

const typeOf: Record<string, string> = { issues: 'Issue', projects: 'Project', teams: 'Team', users: 'User' };
/** The team the fake starts with: every seeded issue belongs to it, and a create may name it. */
export const LINEAR_TEAM_ID = '5a4c2e9e-7d61-4f0a-9b3e-2f1d8c6a0b71';
/** What the create and update inputs take (a subset of IssueCreateInput, ProjectCreateInput…). */
const inputs: Record<string, string[]> = {
  issues: [
    'title',
    'description',
    'priority',
    'estimate',
    'dueDate',
    'teamId',
    'stateId',
    'assigneeId',
    'projectId',
  ],
  projects: [
    'name',
    'description',
    'content',
    'color',
    'icon',
    'priority',
    'startDate',
    'targetDate',
    'teamIds',
    'leadId',
  ],
};
/** The largest page (`first`) the fake serves (verify Linear's own maximum). */
const MAX_PAGE = 250;

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export async function startFakeLinear(): Promise<ConformanceFake> {
  const records = new Map<string, LinearRecord[]>(Object.keys(typeOf).map((object) => [object, []]));
  let counter = 0;

  const fake = new FakeProvider({
    prefix: '/graphql',
    credentialOf: (ctx: Context) => ctx.get('authorization').replace(/^Bearer\s+/i, '') || undefined,
    errorBody: (error) => ({
      errors: [
        {
          message: error.message,
          extensions: {
            type:
              error.status === 401
                ? 'authentication error'
                : error.status === 429
                  ? 'ratelimited'
                  : error.status >= 500
                    ? 'internal error'
                    : 'invalid input',
            userError: error.status < 500,
            userPresentableMessage: error.message,
          },
        },
      ],
    }),
    rateLimitHeaders: () => ({
      'x-ratelimit-requests-limit': '1500',
      'x-ratelimit-requests-remaining': '0',
      'x-ratelimit-requests-reset': String(Date.now() + 1000),
    }),
  });

  const live = (object: string) => records.get(object)!;
  const find = (object: string, id: unknown) => live(object).find((record) => record.id === id);
  const ref = (object: string, id: unknown) => {
    if (id === undefined || id === null) return null;
    const found = find(object, id);
    if (!found) throw new GraphqlFieldError(`Entity not found: ${typeOf[object]}`, 'invalid input');
    return { id: found.id, name: found.name ?? found.displayName };
  };

  const make = (object: string, values: Record<string, unknown>, modifiedMs: number): LinearRecord => {
    counter++;
    const common = {
      __typename: typeOf[object],
      id: randomUUID(),
      createdAt: iso(modifiedMs),
      updatedAt: iso(modifiedMs),
      archivedAt: null,
    };
    const shapes: Record<string, Record<string, unknown>> = {
      issues: {
        identifier: `ENG-${counter}`,
        number: counter,
        title: `Issue ${counter}`,
        description: null,
        priority: 0,
        estimate: null,
        dueDate: null,
        url: `https://linear.app/acme/issue/ENG-${counter}`,
        team: null,
        state: { id: 'state-backlog', name: 'Backlog' },
        assignee: null,
        project: null,
        startedAt: null,
        completedAt: null,
        canceledAt: null,
      },
      projects: {
        name: `Project ${counter}`,
        description: '',
        content: null,
        color: '#bec2c8',
        icon: null,
        priority: 0,
        progress: 0,
        startDate: null,
        targetDate: null,
        url: `https://linear.app/acme/project/p-${counter}`,
        lead: null,
        teams: [],
        startedAt: null,
        completedAt: null,
        canceledAt: null,
      },
      teams: {
        name: `Team ${counter}`,
        key: `T${counter}`,
        description: null,
        timezone: 'Europe/Paris',
        private: false,
      },
      users: {
        name: `User ${counter}`,
        displayName: `user${counter}`,
        email: `user${counter}@example.com`,
        active: true,
        admin: false,
        guest: false,
        timezone: 'Europe/Paris',
        lastSeen: null,
      },
    };
    const record = { ...common, ...shapes[object], ...values } as LinearRecord;
    live(object).push(record);
    return record;
  };

  /** A filter on `updatedAt` (DateComparator); any other filter member is refused here. */
  const matches = (filter: unknown) => {
    if (filter === undefined || filter === null) return () => true;
    const { updatedAt, ...rest } = filter as Record<string, unknown>;
    if (Object.keys(rest).length)
      throw new GraphqlFieldError(`The fake filters on updatedAt only, not ${Object.keys(rest).join(', ')}`);
    const comparator = (updatedAt ?? {}) as Record<string, unknown>;
    const bound = (name: string) => {
      const value = comparator[name];
      if (value === undefined || value === null) return undefined;
      const time = Date.parse(String(value));
      if (Number.isNaN(time))
        throw new GraphqlFieldError(`Invalid DateTimeOrDuration: ${String(value)}`, 'invalid input');
      return time;
    };
    const [gte, gt, lt, lte] = ['gte', 'gt', 'lt', 'lte'].map(bound);
    return (record: LinearRecord) => {
      const time = Date.parse(record.updatedAt);
      return (
        (gte === undefined || time >= gte) &&
        (gt === undefined || time > gt) &&
        (lt === undefined || time < lt) &&
        (lte === undefined || time <= lte)
      );
    };
  };

  const connection = (object: string) => (args: Record<string, unknown>) => {
    const first = args.first === undefined || args.first === null ? 50 : Number(args.first);
    if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE)
      throw new GraphqlFieldError(`first must be between 1 and ${MAX_PAGE}`, 'invalid input');
    const test = matches(args.filter);
    const list = live(object)
      .filter(test)
      .sort((a, b) => Date.parse(a.updatedAt) - Date.parse(b.updatedAt) || a.id.localeCompare(b.id));
    let start = 0;
    if (args.after !== undefined && args.after !== null) {
      const at = list.findIndex((record) => record.id === args.after);
      if (at < 0) throw new GraphqlFieldError('Invalid cursor', 'invalid input');
      start = at + 1;
    }
    const nodes = list.slice(start, start + first);
    const hasNextPage = start + first < list.length;
    return {
      nodes,
      pageInfo: { hasNextPage, endCursor: nodes.length ? nodes[nodes.length - 1].id : null },
    };
  };

  const one = (object: string) => (args: Record<string, unknown>) => {
    const found = find(object, args.id);
    if (!found) throw new GraphqlFieldError(`Entity not found: ${typeOf[object]}`, 'invalid input');
    return found;
  };

  const checkInput = (object: string, input: unknown): Record<string, unknown> => {
    if (!input || typeof input !== 'object')
      throw new GraphqlFieldError(`Variable "$input" of required type was not provided.`, 'invalid input');
    for (const name of Object.keys(input)) {
      if (!inputs[object].includes(name))
        throw new GraphqlFieldError(
          `Variable "$input" got invalid value; Field "${name}" is not defined by type "${typeOf[object]}CreateInput".`,
          'graphql error',
        );
    }
    return input as Record<string, unknown>;
  };

  const setValues = (object: string, record: LinearRecord, input: Record<string, unknown>) => {
    for (const [name, value] of Object.entries(input)) {
      if (name === 'teamId') record.team = ref('teams', value);
      else if (name === 'stateId') record.state = { id: value, name: String(value) };
      else if (name === 'assigneeId') record.assignee = ref('users', value);
      else if (name === 'projectId') record.project = ref('projects', value);
      else if (name === 'leadId') record.lead = ref('users', value);
      else if (name === 'teamIds') record.teams = (value as unknown[]).map((id) => ref('teams', id));
      else record[name] = value;
    }
    record.updatedAt = iso(Date.now());
  };

  const create = (object: string, payload: string, required: string[]) => (args: Record<string, unknown>) => {
    const input = checkInput(object, args.input);
    for (const name of required) {
      const value = input[name];
      if (value === undefined || value === null || (Array.isArray(value) && !value.length))
        throw new GraphqlFieldError(`Argument Validation Error: ${name} must be given`, 'invalid input');
    }
    const record = make(object, {}, Date.now());
    try {
      setValues(object, record, input);
    } catch (error) {
      live(object).pop();
      throw error;
    }
    return { success: true, lastSyncId: counter, [payload]: record };
  };

  const update = (object: string, payload: string) => (args: Record<string, unknown>) => {
    const record = one(object)(args);
    setValues(object, record, checkInput(object, args.input));
    return { success: true, lastSyncId: counter, [payload]: record };
  };

  const remove = (object: string) => (args: Record<string, unknown>) => {
    const record = one(object)(args);
    records.set(
      object,
      live(object).filter((r) => r !== record),
    );
    return { success: true, lastSyncId: counter, entity: record };
  };

  const queryRoot = {
    __typename: 'Query',
    issues: connection('issues'),
    projects: connection('projects'),
    teams: connection('teams'),
    users: connection('users'),
    issue: one('issues'),
    project: one('projects'),
    team: one('teams'),
    user: one('users'),
  };
  const mutationRoot = {
    __typename: 'Mutation',
    issueCreate: create('issues', 'issue', ['teamId']),
    issueUpdate: update('issues', 'issue'),
    issueDelete: remove('issues'),
    projectCreate: create('projects', 'project', ['name', 'teamIds']),
    projectUpdate: update('projects', 'project'),
    projectDelete: remove('projects'),
  };

  fake.router.post('/', (ctx) => {
    const body = (ctx.request.body ?? {}) as { query?: unknown; variables?: unknown };
    if (typeof body.query !== 'string') throw new FakeHttpError(400, 'Must provide query string.');
    const variables = (body.variables ?? {}) as Record<string, unknown>;
    try {
      const document = parseGraphql(body.query);
      const root = document.operation === 'mutation' ? mutationRoot : queryRoot;
      ctx.body = { data: project(root, document.selections, variables) };
    } catch (error) {
      if (!(error instanceof GraphqlFieldError || error instanceof GraphqlSyntaxError)) throw error;
      ctx.status = 400;
      const type = error instanceof GraphqlFieldError ? (error.code ?? 'invalid input') : 'graphql error';
      ctx.body = {
        errors: [
          {
            message: error.message,
            extensions: { type, userError: true, userPresentableMessage: error.message },
          },
        ],
      };
    }
  });

  await fake.start();
  // Seeded issues belong to a team, as every Linear issue does.
  const team = make('teams', { id: LINEAR_TEAM_ID, name: 'Engineering', key: 'ENG' }, Date.UTC(2020, 0, 1));

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
    seed(object, modifiedTimes) {
      return modifiedTimes.map(
        (ms) => make(object, object === 'issues' ? { team: { id: team.id, name: team.name } } : {}, ms).id,
      );
    },
    touch(object, id, modifiedMs) {
      const record = find(object, id);
      if (!record) throw new Error(`no ${object} ${id}`);
      record.updatedAt = iso(modifiedMs);
    },
    stored: (object, id) => find(object, id),
    stop: () => fake.stop(),
  };
}

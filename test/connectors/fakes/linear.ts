import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { FakeHttpError, FakeProvider } from '../kit/fake-provider.js';
import {
  GraphqlFieldError,
  GraphqlSyntaxError,
  parseGraphql,
  project,
  queryCost,
  type ProjectOptions,
} from './graphql-lite.js';
import { linearWebhookMutations } from './linear-webhooks.js';
import { VersionedStore } from './versions.js';

/**
 * A local stand-in for Linear's GraphQL API as its public reference and schema
 * (github.com/linear/linear `packages/sdk/src/schema.graphql`) describe it:
 *
 * - One endpoint, `POST https://api.linear.app/graphql`, `Authorization: <API key>` or
 *   `Bearer <OAuth token>`.
 * - `issues`, `projects`, `teams` and `users` connections: `first` (default 50, at most 250 here),
 *   `after` (the `endCursor` of the page before: the id of its last node), `orderBy` (`createdAt`,
 *   the default, or `updatedAt`), `filter` (`updatedAt`, `createdAt`, `archivedAt`, `id`
 *   comparators, `and`, `or`; a DateComparator takes `eq`, `neq`, `gt`, `gte`, `lt`, `lte`, `in`,
 *   `nin`, each an ISO time or an ISO 8601 duration such as `-P2W`), `includeArchived` (default
 *   false) and, for users, `includeDisabled` (default false); answers `nodes` and
 *   `pageInfo {hasNextPage endCursor}`. Times to the millisecond.
 * - Deleting trashes: `issueDelete` and `projectDelete` set `trashed` and `archivedAt` (updatedAt
 *   stays as it was); archived records leave the connections unless `includeArchived: true`, and
 *   are still read by id; after the 30-day grace period (or `permanentlyDelete`) a trashed issue is
 *   gone. Teams are archived; users are suspended (`active: false`, left out unless
 *   `includeDisabled`).
 * - Mutations validate their input type (IssueCreateInput, IssueUpdateInput, ProjectCreateInput,
 *   ProjectUpdateInput): an unknown or create-only member, or a missing required one, fails the
 *   request as graphql-js words it.
 * - Errors `{errors: [{message, extensions: {code, type, userError, userPresentableMessage}}]}`
 *   (the `type` strings of Linear's SDK); a stale token 401 (`AUTHENTICATION_ERROR`); a query above
 *   10,000 complexity points refused; a rate-limited request `RATELIMITED` (HTTP 400 when throttled,
 *   429 by `failNext`); every answer carries `X-RateLimit-Requests-*`,
 *   `X-RateLimit-Complexity-*` and `X-Complexity`.
 */

type LinearRecord = Record<string, unknown> & { __typename: string; id: string; updatedAt: string };

export interface FakeLinear extends ConformanceFake {
  /** The next requests are rate limited as Linear answers it: HTTP 400 with `RATELIMITED`. */
  throttleNext(count: number): void;
}

const typeOf: Record<string, string> = { issues: 'Issue', projects: 'Project', teams: 'Team', users: 'User' };
/** The team the fake starts with: every seeded issue belongs to it, and a create may name it. */
export const LINEAR_TEAM_ID = '5a4c2e9e-7d61-4f0a-9b3e-2f1d8c6a0b71';
/** The largest page (`first`) the fake serves (verify Linear's own maximum). */
const MAX_PAGE = 250;
const DEFAULT_PAGE = 50;
/** A single query may cost at most this many complexity points (verify). */
const MAX_COMPLEXITY = 10_000;
/** Trashed issues and projects are deleted for good after this grace period. */
const GRACE_MS = 30 * 86_400_000;
const REQUESTS_LIMIT = 5_000;
const COMPLEXITY_LIMIT = 3_000_000;

/** The members of each input type (schema.graphql), and those that are required. */
const inputTypes: Record<string, { members: string[]; required: string[] }> = {
  IssueCreateInput: {
    members: [
      'assigneeId',
      'completedAt',
      'createAsUser',
      'createdAt',
      'cycleId',
      'delegateId',
      'description',
      'descriptionData',
      'displayIconUrl',
      'dueDate',
      'estimate',
      'id',
      'inheritsSharedAccess',
      'labelIds',
      'lastAppliedTemplateId',
      'parentId',
      'preserveSortOrderOnCreate',
      'priority',
      'prioritySortOrder',
      'projectId',
      'projectMilestoneId',
      'referenceCommentId',
      'releaseIds',
      'slaBreachesAt',
      'slaStartedAt',
      'slaType',
      'sortOrder',
      'sourceCommentId',
      'sourcePullRequestCommentId',
      'stateId',
      'subIssueSortOrder',
      'subscriberIds',
      'teamId',
      'templateId',
      'title',
      'useDefaultTemplate',
    ],
    required: ['teamId'],
  },
  IssueUpdateInput: {
    members: [
      'addedLabelIds',
      'addedReleaseIds',
      'assigneeId',
      'autoClosedByParentClosing',
      'cycleId',
      'delegateId',
      'description',
      'descriptionData',
      'dueDate',
      'estimate',
      'inheritsSharedAccess',
      'labelIds',
      'lastAppliedTemplateId',
      'parentId',
      'priority',
      'prioritySortOrder',
      'projectId',
      'projectMilestoneId',
      'releaseIds',
      'removedLabelIds',
      'removedReleaseIds',
      'slaBreachesAt',
      'slaStartedAt',
      'slaType',
      'snoozedById',
      'snoozedUntilAt',
      'sortOrder',
      'stateId',
      'subIssueSortOrder',
      'subscriberIds',
      'teamId',
      'title',
      'trashed',
      'trusted',
    ],
    required: [],
  },
  ProjectCreateInput: {
    members: [
      'color',
      'content',
      'convertedFromIssueId',
      'description',
      'icon',
      'id',
      'labelIds',
      'lastAppliedTemplateId',
      'leadId',
      'memberIds',
      'name',
      'priority',
      'prioritySortOrder',
      'sortOrder',
      'startDate',
      'startDateResolution',
      'statusId',
      'targetDate',
      'targetDateResolution',
      'teamIds',
      'templateId',
      'useDefaultTemplate',
    ],
    required: ['name', 'teamIds'],
  },
  ProjectUpdateInput: {
    members: [
      'canceledAt',
      'color',
      'completedAt',
      'content',
      'convertedFromIssueId',
      'description',
      'frequencyResolution',
      'icon',
      'labelIds',
      'lastAppliedTemplateId',
      'leadId',
      'memberIds',
      'name',
      'priority',
      'prioritySortOrder',
      'projectUpdateRemindersPausedUntilAt',
      'slackIssueComments',
      'slackIssueStatuses',
      'slackNewIssue',
      'sortOrder',
      'startDate',
      'startDateResolution',
      'statusId',
      'targetDate',
      'targetDateResolution',
      'teamIds',
      'trashed',
      'updateReminderFrequency',
      'updateReminderFrequencyInWeeks',
      'updateRemindersDay',
      'updateRemindersHour',
    ],
    required: [],
  },
};

const priorityLabels = ['No priority', 'Urgent', 'High', 'Medium', 'Low'];

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** An error entry as Linear words it. */
function linearError(message: string, code: string, type: string, userError = true) {
  return {
    message,
    extensions: { code, type, userError, userPresentableMessage: message },
  };
}

class LinearRequestError extends GraphqlFieldError {
  constructor(
    message: string,
    readonly linearCode: string,
    readonly linearType: string,
  ) {
    super(message, linearType);
  }
}

const invalidInput = (message: string) => new LinearRequestError(message, 'INPUT_ERROR', 'invalid input');
const graphqlError = (message: string) =>
  new LinearRequestError(message, 'GRAPHQL_VALIDATION_FAILED', 'graphql error');

/** `-P2W`, `P1D`, `PT12H`… → milliseconds (negative for the past). */
function duration(text: string): number | undefined {
  const match =
    /^(-)?P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/.exec(text);
  if (!match || text === 'P' || text === '-P') return undefined;
  const [, minus, y, mo, w, d, h, mi, s] = match.map((part) => (part === undefined ? 0 : part));
  const day = 86_400_000;
  const ms =
    Number(y) * 365 * day +
    Number(mo) * 30 * day +
    Number(w) * 7 * day +
    Number(d) * day +
    Number(h) * 3_600_000 +
    Number(mi) * 60_000 +
    Number(s) * 1000;
  return minus ? -ms : ms;
}

export async function startFakeLinear(): Promise<FakeLinear> {
  const stores = new Map<string, VersionedStore<LinearRecord>>(
    Object.keys(typeOf).map((object) => [object, new VersionedStore<LinearRecord>()]),
  );
  let counter = 0;
  let syncId = 1000;
  let throttled = 0;
  /** The request being answered, for logging listings. */
  let listingCtx: Context | undefined;

  const fake = new FakeProvider({
    prefix: '/graphql',
    credentialOf: (ctx: Context) => ctx.get('authorization').replace(/^Bearer\s+/i, '') || undefined,
    errorBody: (error) => ({
      errors: [
        error.status === 401
          ? {
              message: 'Authentication required, not authenticated',
              extensions: {
                code: 'AUTHENTICATION_ERROR',
                type: 'authentication error',
                userError: true,
                userPresentableMessage: 'You need to authenticate to access this operation.',
              },
            }
          : error.status === 429
            ? linearError('Rate limit exceeded', 'RATELIMITED', 'ratelimited')
            : error.status >= 500
              ? linearError(error.message, 'INTERNAL_SERVER_ERROR', 'internal error', false)
              : linearError(error.message, 'INPUT_ERROR', 'invalid input'),
      ],
    }),
    rateLimitHeaders: () => rateHeaders(0, 0),
  });
  const now = () => fake.now();

  /** The rate-limit headers of every answer (X-RateLimit-* in epoch milliseconds). */
  const rateHeaders = (remaining: number, cost: number): Record<string, string> => ({
    'x-ratelimit-requests-limit': String(REQUESTS_LIMIT),
    'x-ratelimit-requests-remaining': String(remaining),
    'x-ratelimit-requests-reset': String(now() + 3_600_000),
    'x-ratelimit-complexity-limit': String(COMPLEXITY_LIMIT),
    'x-ratelimit-complexity-remaining': String(remaining ? COMPLEXITY_LIMIT - cost : 0),
    'x-ratelimit-complexity-reset': String(now() + 3_600_000),
    'x-complexity': String(cost),
  });

  const store = (object: string) => stores.get(object)!;
  /** Gone for good: permanently deleted, or trashed longer ago than the grace period. */
  const purged = (record: LinearRecord) =>
    record.trashed === true && now() >= Date.parse(String(record.archivedAt)) + GRACE_MS;
  const find = (object: string, id: unknown) => {
    const record = store(object).get(String(id));
    return record && !purged(record) ? record : undefined;
  };
  const notFound = (object: string) => invalidInput(`Entity not found: ${typeOf[object]}`);
  const ref = (object: string, id: unknown) => {
    if (id === undefined || id === null) return null;
    const found = find(object, id);
    if (!found) throw notFound(object);
    return { __typename: typeOf[object], id: found.id, name: found.name ?? found.displayName };
  };

  const make = (object: string, values: Record<string, unknown>, createdMs: number): LinearRecord => {
    counter++;
    const id = typeof values.id === 'string' ? values.id : randomUUID();
    const common = {
      __typename: typeOf[object],
      id,
      createdAt: iso(createdMs),
      updatedAt: iso(createdMs),
      archivedAt: null,
    };
    const shapes: Record<string, () => Record<string, unknown>> = {
      issues: () => ({
        identifier: `ENG-${counter}`,
        number: counter,
        title: `Issue ${counter}`,
        description: null,
        priority: 0,
        priorityLabel: priorityLabels[0],
        prioritySortOrder: counter,
        sortOrder: counter,
        boardOrder: counter,
        subIssueSortOrder: null,
        estimate: null,
        dueDate: null,
        url: `https://linear.app/acme/issue/ENG-${counter}`,
        branchName: `eng-${counter}`,
        customerTicketCount: 0,
        labelIds: [],
        previousIdentifiers: [],
        trashed: null,
        team: null,
        state: { __typename: 'WorkflowState', id: 'state-backlog', name: 'Backlog' },
        assignee: null,
        creator: null,
        delegate: null,
        parent: null,
        project: null,
        projectMilestone: null,
        cycle: null,
        snoozedBy: null,
        addedToCycleAt: null,
        addedToProjectAt: null,
        addedToTeamAt: iso(createdMs),
        autoArchivedAt: null,
        autoClosedAt: null,
        snoozedUntilAt: null,
        triagedAt: null,
        startedTriageAt: null,
        slaBreachesAt: null,
        slaHighRiskAt: null,
        slaMediumRiskAt: null,
        slaStartedAt: null,
        slaType: null,
        startedAt: null,
        completedAt: null,
        canceledAt: null,
      }),
      projects: () => ({
        name: `Project ${counter}`,
        description: '',
        content: null,
        color: '#bec2c8',
        icon: null,
        priority: 0,
        priorityLabel: priorityLabels[0],
        prioritySortOrder: counter,
        sortOrder: counter,
        progress: 0,
        scope: 0,
        health: null,
        healthUpdatedAt: null,
        slugId: `p${counter}`,
        state: 'backlog',
        labelIds: [],
        startDate: null,
        startDateResolution: null,
        targetDate: null,
        targetDateResolution: null,
        url: `https://linear.app/acme/project/p-${counter}`,
        lead: null,
        creator: null,
        teams: [],
        trashed: null,
        autoArchivedAt: null,
        startedAt: null,
        completedAt: null,
        canceledAt: null,
      }),
      teams: () => ({
        name: `Team ${counter}`,
        key: `T${counter}`,
        displayName: `Team ${counter}`,
        description: null,
        color: '#5e6ad2',
        icon: null,
        timezone: 'Europe/Paris',
        private: false,
        issueCount: 0,
        cyclesEnabled: false,
        triageEnabled: false,
        retiredAt: null,
      }),
      users: () => ({
        name: `User ${counter}`,
        displayName: `user${counter}`,
        email: `user${counter}@example.com`,
        active: true,
        admin: false,
        owner: false,
        guest: false,
        app: false,
        isMe: false,
        isAssignable: true,
        description: null,
        avatarUrl: null,
        timezone: 'Europe/Paris',
        title: null,
        statusEmoji: null,
        statusLabel: null,
        lastSeen: null,
        createdIssueCount: 0,
        url: `https://linear.app/acme/profiles/user${counter}`,
      }),
    };
    const record = { ...common, ...shapes[object](), ...values } as LinearRecord;
    store(object).add(record.id, record, createdMs);
    return record;
  };

  /** The comparator of one date field (DateComparator), as a test of the record's time. */
  const dateTest = (field: string, comparator: unknown): ((record: LinearRecord) => boolean) => {
    if (comparator === undefined || comparator === null) return () => true;
    const at = (value: unknown): number => {
      const text = String(value);
      const offset = duration(text);
      if (offset !== undefined) return now() + offset;
      const time = Date.parse(text);
      if (Number.isNaN(time)) throw invalidInput(`Invalid DateTimeOrDuration: ${text}`);
      return time;
    };
    const tests: ((time: number | null) => boolean)[] = [];
    for (const [name, value] of Object.entries(comparator as Record<string, unknown>)) {
      if (value === undefined) continue;
      if (name === 'null') {
        tests.push((time) => (time === null) === value);
        continue;
      }
      if (value === null) continue;
      const list = Array.isArray(value) ? value.map(at) : [];
      const bound = Array.isArray(value) ? 0 : at(value);
      const compare: Record<string, (time: number) => boolean> = {
        eq: (time) => time === bound,
        neq: (time) => time !== bound,
        gt: (time) => time > bound,
        gte: (time) => time >= bound,
        lt: (time) => time < bound,
        lte: (time) => time <= bound,
        in: (time) => list.includes(time),
        nin: (time) => !list.includes(time),
      };
      if (!compare[name]) throw graphqlError(`Field "${name}" is not defined by type "DateComparator".`);
      tests.push((time) => time !== null && compare[name](time));
    }
    return (record) => {
      const value = record[field];
      const time = value === null || value === undefined ? null : Date.parse(String(value));
      return tests.every((test) => test(time));
    };
  };

  /** A filter (IssueFilter, ProjectFilter…) as far as the fake serves it. */
  const filterTest = (object: string, filter: unknown): ((record: LinearRecord) => boolean) => {
    if (filter === undefined || filter === null) return () => true;
    const tests: ((record: LinearRecord) => boolean)[] = [];
    for (const [name, value] of Object.entries(filter as Record<string, unknown>)) {
      if (value === undefined || value === null) continue;
      if (name === 'and' || name === 'or') {
        const inner = (value as unknown[]).map((f) => filterTest(object, f));
        tests.push((record) =>
          name === 'and' ? inner.every((test) => test(record)) : inner.some((test) => test(record)),
        );
      } else if (name === 'updatedAt' || name === 'createdAt' || name === 'archivedAt') {
        tests.push(dateTest(name, value));
      } else if (name === 'id') {
        const comparator = value as { eq?: unknown; in?: unknown[] };
        tests.push(
          (record) =>
            (comparator.eq === undefined || record.id === comparator.eq) &&
            (comparator.in === undefined || comparator.in.includes(record.id)),
        );
      } else {
        throw invalidInput(
          `The fake filters ${typeOf[object]} on updatedAt, createdAt, archivedAt and id, not ${name}`,
        );
      }
    }
    return (record) => tests.every((test) => test(record));
  };

  const connection = (object: string) => (args: Record<string, unknown>) => {
    if (args.last !== undefined || args.before !== undefined)
      throw invalidInput('The fake pages forward only (first, after)');
    const first = args.first === undefined || args.first === null ? DEFAULT_PAGE : Number(args.first);
    if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE)
      throw invalidInput(`first must be between 1 and ${MAX_PAGE}`);
    if (listingCtx) fake.logListing(listingCtx, { object, pageSize: first, maxPageSize: MAX_PAGE });
    const orderBy = args.orderBy === undefined || args.orderBy === null ? 'createdAt' : String(args.orderBy);
    if (orderBy !== 'createdAt' && orderBy !== 'updatedAt')
      throw graphqlError(`Value "${orderBy}" does not exist in "PaginationOrderBy" enum.`);
    const test = filterTest(object, args.filter);
    const key = (record: LinearRecord) => Date.parse(String(record[orderBy]));
    const list = store(object)
      .listed(now())
      .map((version) => version.record)
      .filter(
        (record) =>
          !purged(record) &&
          (args.includeArchived === true || record.archivedAt === null) &&
          (object !== 'users' || args.includeDisabled === true || record.active === true) &&
          test(record),
      )
      .sort((a, b) => key(a) - key(b) || a.id.localeCompare(b.id));
    let rest = list;
    if (args.after !== undefined && args.after !== null) {
      // The cursor is the last node's id: the next page starts after that node as it sorts now.
      const cursor = store(object).get(String(args.after));
      if (!cursor) throw invalidInput('Invalid cursor');
      const at = key(cursor);
      rest = list.filter((record) => key(record) > at || (key(record) === at && record.id > cursor.id));
    }
    const nodes = rest.slice(0, first);
    return {
      __typename: `${typeOf[object]}Connection`,
      nodes,
      pageInfo: {
        __typename: 'PageInfo',
        hasNextPage: rest.length > first,
        hasPreviousPage: rest.length < list.length,
        startCursor: nodes[0]?.id ?? null,
        endCursor: nodes.length ? nodes[nodes.length - 1].id : null,
      },
    };
  };

  const one = (object: string) => (args: Record<string, unknown>) => {
    const found = find(object, args.id);
    if (!found) throw notFound(object);
    return found;
  };

  const checkInput = (type: string, input: unknown): Record<string, unknown> => {
    const { members, required } = inputTypes[type];
    if (!input || typeof input !== 'object')
      throw graphqlError(`Variable "$input" of required type "${type}!" was not provided.`);
    for (const name of Object.keys(input)) {
      if (!members.includes(name))
        throw graphqlError(
          `Variable "$input" got invalid value ${JSON.stringify(input)}; Field "${name}" is not defined by type "${type}".`,
        );
    }
    for (const name of required) {
      const value = (input as Record<string, unknown>)[name];
      if (value === undefined || value === null)
        throw graphqlError(
          `Variable "$input" got invalid value ${JSON.stringify(input)}; Field "${name}" of required type "${name === 'teamIds' ? '[String!]!' : 'String!'}" was not provided.`,
        );
    }
    return input as Record<string, unknown>;
  };

  const setValues = (record: LinearRecord, input: Record<string, unknown>, at: number) => {
    for (const [name, value] of Object.entries(input)) {
      if (name === 'teamId') record.team = ref('teams', value);
      else if (name === 'stateId')
        record.state = { __typename: 'WorkflowState', id: value, name: String(value) };
      else if (name === 'assigneeId') record.assignee = ref('users', value);
      else if (name === 'projectId') record.project = ref('projects', value);
      else if (name === 'parentId') record.parent = ref('issues', value);
      else if (name === 'leadId') record.lead = ref('users', value);
      else if (name === 'teamIds') record.teams = (value as unknown[]).map((id) => ref('teams', id));
      else if (name === 'priority') {
        if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > 4)
          throw invalidInput('priority must be an integer between 0 and 4');
        record.priority = value;
        record.priorityLabel = priorityLabels[value as number];
      } else if (name === 'trashed') {
        record.trashed = value === true ? true : null;
        record.archivedAt = value === true ? iso(at) : null;
      } else if (name === 'id' || name === 'createdAt') continue;
      else record[name] = value;
    }
  };

  const create = (object: string, payload: string, type: string) => (args: Record<string, unknown>) => {
    const input = checkInput(type, args.input);
    const at = now();
    if (input.teamIds !== undefined && !(input.teamIds as unknown[]).length)
      throw invalidInput('teamIds must contain at least one team');
    // Resolve references before anything is stored.
    const probe = { __typename: typeOf[object] } as LinearRecord;
    setValues(probe, input, at);
    const createdMs = typeof input.createdAt === 'string' ? Date.parse(input.createdAt) : at;
    const record = make(object, { ...(typeof input.id === 'string' && { id: input.id }) }, createdMs);
    setValues(record, input, at);
    record.updatedAt = iso(at);
    store(object).change(record.id, at, () => undefined, { now: at });
    return { __typename: `${typeOf[object]}Payload`, success: true, lastSyncId: ++syncId, [payload]: record };
  };

  const update = (object: string, payload: string, type: string) => (args: Record<string, unknown>) => {
    const record = one(object)(args);
    const input = checkInput(type, args.input);
    const at = now();
    const probe = { ...record };
    setValues(probe, input, at);
    store(object).change(
      record.id,
      at,
      (stored) => {
        setValues(stored, input, at);
        stored.updatedAt = iso(at);
      },
      { now: at },
    );
    return { __typename: `${typeOf[object]}Payload`, success: true, lastSyncId: ++syncId, [payload]: record };
  };

  /** Archive (and trash): `archivedAt` set, `updatedAt` left as it was (verify). */
  const archive = (object: string, id: string, atMs: number, trash: boolean) => {
    const row = store(object).row(id)!;
    store(object).change(
      id,
      row.current.modifiedMs,
      (record) => {
        record.archivedAt = iso(atMs);
        if (trash) record.trashed = true;
      },
      { now: now() },
    );
  };

  const remove = (object: string) => (args: Record<string, unknown>) => {
    const record = one(object)(args);
    const at = now();
    if (args.permanentlyDelete === true) {
      store(object).remove(record.id, at);
      return {
        __typename: `${typeOf[object]}ArchivePayload`,
        success: true,
        lastSyncId: ++syncId,
        entity: null,
      };
    }
    archive(object, record.id, at, true);
    return {
      __typename: `${typeOf[object]}ArchivePayload`,
      success: true,
      lastSyncId: ++syncId,
      entity: record,
    };
  };

  const archiveMutation = (object: string) => (args: Record<string, unknown>) => {
    const record = one(object)(args);
    archive(object, record.id, now(), args.trash === true);
    return {
      __typename: `${typeOf[object]}ArchivePayload`,
      success: true,
      lastSyncId: ++syncId,
      entity: record,
    };
  };

  const unarchive = (object: string) => (args: Record<string, unknown>) => {
    const record = one(object)(args);
    const row = store(object).row(record.id)!;
    store(object).change(
      record.id,
      row.current.modifiedMs,
      (stored) => {
        stored.archivedAt = null;
        stored.trashed = null;
      },
      { now: now() },
    );
    return {
      __typename: `${typeOf[object]}ArchivePayload`,
      success: true,
      lastSyncId: ++syncId,
      entity: record,
    };
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
    issueCreate: create('issues', 'issue', 'IssueCreateInput'),
    issueUpdate: update('issues', 'issue', 'IssueUpdateInput'),
    issueDelete: remove('issues'),
    issueArchive: archiveMutation('issues'),
    issueUnarchive: unarchive('issues'),
    projectCreate: create('projects', 'project', 'ProjectCreateInput'),
    projectUpdate: update('projects', 'project', 'ProjectUpdateInput'),
    projectDelete: remove('projects'),
    projectArchive: archiveMutation('projects'),
    projectUnarchive: unarchive('projects'),
    ...linearWebhookMutations({ invalidInput, graphqlError, now, nextSyncId: () => ++syncId }),
  };

  /** graphql-js's wording of a field the type lacks. */
  const options: ProjectOptions = {
    unknownField: (field, typename) => graphqlError(`Cannot query field "${field}" on type "${typename}".`),
  };

  const answerError = (ctx: Context, error: LinearRequestError | GraphqlFieldError | GraphqlSyntaxError) => {
    ctx.status = 400;
    if (error instanceof LinearRequestError) {
      ctx.body = { errors: [linearError(error.message, error.linearCode, error.linearType)] };
    } else if (error instanceof GraphqlSyntaxError) {
      ctx.body = {
        errors: [linearError(`Syntax Error: ${error.message}`, 'GRAPHQL_PARSE_FAILED', 'graphql error')],
      };
    } else {
      ctx.body = { errors: [linearError(error.message, 'GRAPHQL_VALIDATION_FAILED', 'graphql error')] };
    }
  };

  fake.router.post('/', (ctx) => {
    if (throttled > 0) {
      throttled--;
      // (verify the status) Linear's SDK reads a rate limit from a 429 or from the error's type.
      ctx.status = 400;
      for (const [name, value] of Object.entries({ ...rateHeaders(0, 0), 'retry-after': '60' }))
        ctx.set(name, value);
      ctx.body = {
        errors: [
          linearError(
            `Rate limit exceeded. Only ${REQUESTS_LIMIT} requests are allowed per 1 hour.`,
            'RATELIMITED',
            'ratelimited',
          ),
        ],
      };
      return;
    }
    const body = (ctx.request.body ?? {}) as { query?: unknown; variables?: unknown };
    if (typeof body.query !== 'string') throw new FakeHttpError(400, 'Must provide query string.');
    const variables = (body.variables ?? {}) as Record<string, unknown>;
    try {
      const document = parseGraphql(body.query);
      const cost = Math.ceil(
        queryCost(document.selections, variables, { scalar: 0.1, object: 1, defaultPage: 50 }),
      );
      for (const [name, value] of Object.entries(rateHeaders(REQUESTS_LIMIT - 1, cost))) ctx.set(name, value);
      if (cost > MAX_COMPLEXITY)
        throw new LinearRequestError(
          `Query too complex - complexity is ${cost}, maximum allowed is ${MAX_COMPLEXITY}`,
          'QUERY_TOO_COMPLEX',
          'invalid input',
        );
      const root = document.operation === 'mutation' ? mutationRoot : queryRoot;
      listingCtx = ctx;
      ctx.body = { data: project(root, document.selections, variables, options) };
    } catch (error) {
      if (!(error instanceof GraphqlFieldError || error instanceof GraphqlSyntaxError)) throw error;
      answerError(ctx, error);
    } finally {
      listingCtx = undefined;
    }
  });

  await fake.start();
  // Seeded issues belong to a team, as every Linear issue does.
  const team = make(
    'teams',
    { id: LINEAR_TEAM_ID, name: 'Engineering', key: 'ENG', displayName: 'Engineering' },
    Date.UTC(2020, 0, 1),
  );

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
    throttleNext(count) {
      throttled += count;
    },
    seed(object, modifiedTimes) {
      return modifiedTimes.map(
        (ms) =>
          make(
            object,
            object === 'issues' ? { team: { __typename: 'Team', id: team.id, name: team.name } } : {},
            ms,
          ).id,
      );
    },
    touch(object, id, modifiedMs, touchOptions) {
      if (!find(object, id)) throw new Error(`no ${object} ${id}`);
      store(object).change(
        id,
        modifiedMs,
        (record) => {
          record.updatedAt = iso(modifiedMs);
        },
        { now: now(), visibleFromMs: touchOptions?.visibleFromMs },
      );
    },
    remove(object, id, atMs) {
      if (!find(object, id)) throw new Error(`no ${object} ${id}`);
      if (object === 'users') {
        // Users are suspended, not deleted: a change of `active`.
        store(object).change(
          id,
          atMs,
          (record) => {
            record.active = false;
            record.updatedAt = iso(atMs);
          },
          { now: now() },
        );
      } else archive(object, id, atMs, object !== 'teams');
    },
    stored(object, id) {
      const record = find(object, id);
      if (!record || record.archivedAt !== null || (object === 'users' && record.active === false))
        return undefined;
      return record;
    },
    stop: () => fake.stop(),
  };
}

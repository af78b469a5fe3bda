import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';
import { VersionedStore, type Row } from './versions.js';

/**
 * A local stand-in for GitLab's REST API v4 (https://docs.gitlab.com/api/), written from its
 * reference for one project's issues and merge requests:
 *
 * - Auth: a personal, project or group access token as `PRIVATE-TOKEN: <token>` or
 *   `Authorization: Bearer <token>` (OAuth tokens too); a stale one answers 401
 *   `{"message": "401 Unauthorized"}`.
 * - Paths under `/api/v4` of the instance (`https://gitlab.com`, the catalog's base URL).
 * - The project is addressed by its numeric id or its URL-encoded path (`group%2Fproject`).
 * - Times are ISO 8601 in UTC to the millisecond (`2016-01-04T15:31:51.081Z`).
 * - `GET /projects/:id/issues`: `state` (`opened`, `closed`; all by default), `updated_after` and
 *   `updated_before` ("on or after" / "on or before": both inclusive), `order_by` (`created_at` by
 *   default, `updated_at`, `title`, …), `sort` (`desc` by default), `labels`, `per_page` (20 by
 *   default, 100 at most), `page`; offset pagination headers `x-page`, `x-per-page`, `x-next-page`
 *   (empty on the last page), `x-prev-page`, `x-total`, `x-total-pages` and a `Link` header. Ties
 *   in the order fall back to the id, in the same direction.
 * - Issues are written by their project-scoped `iid`, never their global `id`: `POST` (201;
 *   `title` required; `labels` a comma-separated list), `PUT /issues/:issue_iid` (`state_event`
 *   `close`/`reopen`, `add_labels`, `remove_labels`, …), `DELETE` (204, for good: no listing
 *   reveals it).
 * - `GET /projects/:id/merge_requests`: `state` (`opened`, `closed`, `locked`, `merged`; all by
 *   default), `updated_after`/`updated_before` (inclusive), `order_by` (`created_at`, `updated_at`,
 *   `title`), `sort`, `per_page`, `page`; `PUT /merge_requests/:merge_request_iid` (`title`,
 *   `description`, `state_event`, `target_branch`, `labels`, …). Merge requests are not deleted
 *   through the API here.
 * - Errors: 400 `{"message": {"title": ["can't be blank"]}}` or `{"error": "title is missing"}`,
 *   404 `{"message": "404 Issue Not Found"}`, 429 plain `Retry later` with `Retry-After`.
 * - Every answer carries `RateLimit-Limit`, `RateLimit-Observed`, `RateLimit-Remaining`,
 *   `RateLimit-Reset` (epoch seconds) and `RateLimit-ResetTime`.
 */

export const GITLAB_PROJECT_ID = '278964';
const GITLAB_PROJECT_PATH = 'acme/storefront';
const PER_PAGE_DEFAULT = 20;
const PER_PAGE_MAX = 100;
const LIMIT_PER_MINUTE = 2000;

type GitlabRecord = Record<string, unknown> & { id: number; iid: number };
type Kind = 'issues' | 'merge_requests';

const gitlabTime = (ms: number) => new Date(ms).toISOString();
const user = (id: number, username: string, name: string) => ({
  id,
  username,
  name,
  state: 'active',
  locked: false,
  avatar_url: `https://gitlab.example.com/uploads/-/system/user/avatar/${id}/avatar.png`,
  web_url: `https://gitlab.com/${username}`,
});
const USERS = [user(1, 'root', 'Administrator'), user(2, 'mia', 'Mia Krystof')];

/** A 400 in GitLab's validation shape, `{message: {field: [problems]}}`. */
const invalid = (field: string, problem: string) =>
  new FakeHttpError(400, JSON.stringify({ message: { [field]: [problem] } }), 'gitlab');
/** A 400 for a missing or malformed parameter, `{error: "..."}`. */
const badParameter = (text: string) => new FakeHttpError(400, JSON.stringify({ error: text }), 'gitlab');

export async function startFakeGitlab(): Promise<ConformanceFake> {
  const stores: Record<Kind, VersionedStore<GitlabRecord>> = {
    issues: new VersionedStore(),
    merge_requests: new VersionedStore(),
  };
  const nextIid: Record<Kind, number> = { issues: 1, merge_requests: 1 };
  let nextId = 90_001;
  let observed = 0;

  const fake = new FakeProvider({
    credentialOf: (ctx) => ctx.get('private-token') || bearerCredential(ctx),
    errorBody: (error) => {
      if (error.code === 'gitlab') return JSON.parse(error.message) as unknown;
      if (error.status === 401) return { message: '401 Unauthorized' };
      if (error.status === 429) return 'Retry later';
      if (error.status === 404) return { message: `404 ${error.message}` };
      return { message: error.message };
    },
    rateLimitHeaders: () => ({ ...rateHeaders(), 'RateLimit-Remaining': '0' }),
  });
  const now = () => fake.now();
  const router = fake.router;

  function rateHeaders(): Record<string, string> {
    const reset = Math.ceil(Date.now() / 60_000) * 60;
    return {
      'RateLimit-Limit': String(LIMIT_PER_MINUTE),
      'RateLimit-Observed': String(observed),
      'RateLimit-Remaining': String(Math.max(0, LIMIT_PER_MINUTE - observed)),
      'RateLimit-Reset': String(reset),
      'RateLimit-ResetTime': new Date(reset * 1000).toUTCString(),
    };
  }

  router.use(async (ctx, next) => {
    observed += 1;
    for (const [name, value] of Object.entries(rateHeaders())) ctx.set(name, value);
    await next();
  });

  router.use('/api/v4/projects/:project', async (ctx, next) => {
    const project = decodeURIComponent(ctx.params.project);
    if (project !== GITLAB_PROJECT_ID && project !== GITLAB_PROJECT_PATH)
      throw new FakeHttpError(404, 'Project Not Found');
    await next();
  });

  const kindOf = (ctx: Context): Kind => {
    const kind = ctx.params.kind;
    if (kind !== 'issues' && kind !== 'merge_requests') throw new FakeHttpError(404, 'Not Found');
    return kind;
  };
  const rowOf = (kind: Kind, iid: string): Row<GitlabRecord> => {
    const row = stores[kind].row(iid);
    if (!row) throw new FakeHttpError(404, kind === 'issues' ? 'Issue Not Found' : 'Merge Request Not Found');
    return row;
  };

  const time = (ctx: Context, name: string): number | undefined => {
    const raw = ctx.query[name];
    if (raw === undefined) return undefined;
    const ms =
      typeof raw === 'string' &&
      /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(raw)
        ? Date.parse(raw)
        : NaN;
    if (Number.isNaN(ms)) throw badParameter(`${name} is invalid`);
    return ms;
  };
  const oneOf = (ctx: Context, name: string, allowed: string[], fallback: string) => {
    const value = ctx.query[name] === undefined ? fallback : String(ctx.query[name]);
    if (!allowed.includes(value)) throw badParameter(`${name} does not have a valid value`);
    return value;
  };

  /** Offset pages with GitLab's pagination headers and Link header. */
  function paged<T>(ctx: Context, object: string, items: T[]): T[] {
    const asked = ctx.query.per_page === undefined ? PER_PAGE_DEFAULT : Number(ctx.query.per_page);
    const page = ctx.query.page === undefined ? 1 : Number(ctx.query.page);
    if (!Number.isInteger(asked) || !Number.isInteger(page)) throw badParameter('page is invalid');
    // Out-of-range values fall back: below 1 is the default, above the maximum is the maximum.
    const perPage = asked < 1 ? PER_PAGE_DEFAULT : Math.min(asked, PER_PAGE_MAX);
    const current = Math.max(page, 1);
    fake.logListing(ctx, { object, pageSize: asked, maxPageSize: PER_PAGE_MAX });
    const totalPages = Math.max(1, Math.ceil(items.length / perPage));
    const link = (n: number, rel: string) => {
      const url = new URL(ctx.href);
      url.searchParams.set('page', String(n));
      url.searchParams.set('per_page', String(perPage));
      return `<${url.toString()}>; rel="${rel}"`;
    };
    const links = [];
    if (current > 1) links.push(link(current - 1, 'prev'));
    if (current < totalPages) links.push(link(current + 1, 'next'));
    links.push(link(1, 'first'), link(totalPages, 'last'));
    ctx.set('link', links.join(', '));
    ctx.set('x-page', String(current));
    ctx.set('x-per-page', String(perPage));
    ctx.set('x-next-page', current < totalPages ? String(current + 1) : '');
    ctx.set('x-prev-page', current > 1 ? String(current - 1) : '');
    ctx.set('x-total', String(items.length));
    ctx.set('x-total-pages', String(totalPages));
    return items.slice((current - 1) * perPage, current * perPage);
  }

  const labelsOf = (value: unknown, field: string): string[] => {
    if (value === null || value === '') return [];
    const list = Array.isArray(value) ? value : String(value).split(',');
    if (list.some((label) => typeof label !== 'string')) throw badParameter(`${field} is invalid`);
    return list.map((label) => String(label).trim()).filter(Boolean);
  };

  /** Values of a create or edit, checked as GitLab checks them; unknown parameters are ignored. */
  function values(kind: Kind, body: Record<string, unknown>, creating: boolean): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (creating && body.title === undefined) throw badParameter('title is missing');
    if ('title' in body) {
      if (typeof body.title !== 'string' || !body.title.trim()) throw invalid('title', "can't be blank");
      if (body.title.length > 255) throw invalid('title', 'is too long (maximum is 255 characters)');
      out.title = body.title;
    }
    if ('description' in body) {
      if (body.description !== null && typeof body.description !== 'string')
        throw badParameter('description is invalid');
      out.description = body.description;
    }
    if ('labels' in body) out.labels = labelsOf(body.labels, 'labels');
    if ('assignee_ids' in body) {
      const ids = Array.isArray(body.assignee_ids) ? body.assignee_ids : [body.assignee_ids];
      out.assignees = USERS.filter((candidate) => ids.map(Number).includes(candidate.id));
    }
    if ('state_event' in body) {
      const allowed = kind === 'issues' ? ['close', 'reopen'] : ['close', 'reopen'];
      if (!allowed.includes(String(body.state_event)))
        throw badParameter('state_event does not have a valid value');
      out.state_event = body.state_event;
    }
    if (kind === 'issues') {
      if ('due_date' in body) {
        if (body.due_date !== null && !/^\d{4}-\d{2}-\d{2}$/.test(String(body.due_date)))
          throw badParameter('due_date is invalid');
        out.due_date = body.due_date;
      }
      if ('confidential' in body)
        out.confidential = body.confidential === true || body.confidential === 'true';
      if ('weight' in body) {
        if (body.weight !== null && (!Number.isInteger(Number(body.weight)) || Number(body.weight) < 0))
          throw badParameter('weight is invalid');
        out.weight = body.weight === null ? null : Number(body.weight);
      }
      if ('issue_type' in body) {
        if (!['issue', 'incident', 'test_case', 'task'].includes(String(body.issue_type)))
          throw badParameter('issue_type does not have a valid value');
        out.issue_type = body.issue_type;
      }
    } else {
      if ('target_branch' in body) {
        if (typeof body.target_branch !== 'string' || !body.target_branch)
          throw invalid('target_branch', "can't be blank");
        out.target_branch = body.target_branch;
      }
      if ('squash' in body) out.squash = body.squash === true || body.squash === 'true';
    }
    if ('discussion_locked' in body)
      out.discussion_locked = body.discussion_locked === true || body.discussion_locked === 'true';
    return out;
  }

  function apply(
    record: GitlabRecord,
    checked: Record<string, unknown>,
    body: Record<string, unknown>,
    ms: number,
  ) {
    const { state_event: stateEvent, ...rest } = checked;
    Object.assign(record, rest);
    if ('add_labels' in body)
      record.labels = [
        ...new Set([...(record.labels as string[]), ...labelsOf(body.add_labels, 'add_labels')]),
      ];
    if ('remove_labels' in body) {
      const removed = labelsOf(body.remove_labels, 'remove_labels');
      record.labels = (record.labels as string[]).filter((label) => !removed.includes(label));
    }
    if ('assignees' in rest) record.assignee = (rest.assignees as unknown[])[0] ?? null;
    if (stateEvent === 'close' && record.state !== 'closed' && record.state !== 'merged') {
      record.state = 'closed';
      record.closed_at = gitlabTime(ms);
      record.closed_by = USERS[0];
    }
    if (stateEvent === 'reopen' && record.state === 'closed') {
      record.state = 'opened';
      record.closed_at = null;
      record.closed_by = null;
    }
    record.updated_at = gitlabTime(ms);
  }

  function build(kind: Kind, checked: Record<string, unknown>, ms: number): Row<GitlabRecord> {
    const iid = nextIid[kind]++;
    const id = nextId++;
    const at = gitlabTime(ms);
    const web = `https://gitlab.com/${GITLAB_PROJECT_PATH}/-/${kind === 'issues' ? 'issues' : 'merge_requests'}/${iid}`;
    const common = {
      id,
      iid,
      project_id: Number(GITLAB_PROJECT_ID),
      title: '',
      description: null,
      state: 'opened',
      created_at: at,
      updated_at: at,
      closed_at: null,
      closed_by: null,
      labels: [],
      milestone: null,
      assignees: [],
      assignee: null,
      author: USERS[1],
      user_notes_count: 0,
      upvotes: 0,
      downvotes: 0,
      discussion_locked: null,
      web_url: web,
      references: {
        short: kind === 'issues' ? `#${iid}` : `!${iid}`,
        relative: kind === 'issues' ? `#${iid}` : `!${iid}`,
        full: `${GITLAB_PROJECT_PATH}${kind === 'issues' ? '#' : '!'}${iid}`,
      },
      time_stats: {
        time_estimate: 0,
        total_time_spent: 0,
        human_time_estimate: null,
        human_total_time_spent: null,
      },
      task_completion_status: { count: 0, completed_count: 0 },
    };
    const record: GitlabRecord =
      kind === 'issues'
        ? {
            ...common,
            type: 'ISSUE',
            issue_type: 'issue',
            due_date: null,
            confidential: false,
            weight: null,
            merge_requests_count: 0,
            has_tasks: false,
            severity: 'UNKNOWN',
            moved_to_id: null,
            _links: {
              self: `https://gitlab.com/api/v4/projects/${GITLAB_PROJECT_ID}/issues/${iid}`,
              notes: `https://gitlab.com/api/v4/projects/${GITLAB_PROJECT_ID}/issues/${iid}/notes`,
              project: `https://gitlab.com/api/v4/projects/${GITLAB_PROJECT_ID}`,
            },
          }
        : {
            ...common,
            merged_by: null,
            merge_user: null,
            merged_at: null,
            target_branch: 'main',
            source_branch: `feature-${iid}`,
            source_project_id: Number(GITLAB_PROJECT_ID),
            target_project_id: Number(GITLAB_PROJECT_ID),
            reviewers: [],
            draft: false,
            work_in_progress: false,
            merge_when_pipeline_succeeds: false,
            merge_status: 'can_be_merged',
            detailed_merge_status: 'mergeable',
            sha: `${iid}`.padStart(40, 'a'),
            merge_commit_sha: null,
            squash_commit_sha: null,
            squash: false,
            has_conflicts: false,
            blocking_discussions_resolved: true,
          };
    apply(record, checked, {}, ms);
    return stores[kind].add(String(iid), record, ms);
  }

  router.get('/api/v4/projects/:project/:kind', (ctx) => {
    const kind = kindOf(ctx);
    const states =
      kind === 'issues' ? ['opened', 'closed', 'all'] : ['opened', 'closed', 'locked', 'merged', 'all'];
    const state = oneOf(ctx, 'state', states, 'all');
    const orderBy = oneOf(
      ctx,
      'order_by',
      kind === 'issues'
        ? [
            'created_at',
            'updated_at',
            'priority',
            'due_date',
            'relative_position',
            'label_priority',
            'milestone_due',
            'popularity',
            'weight',
            'title',
          ]
        : ['created_at', 'updated_at', 'title', 'merged_at'],
      'created_at',
    );
    const sort = oneOf(ctx, 'sort', ['asc', 'desc'], 'desc');
    const after = time(ctx, 'updated_after');
    const before = time(ctx, 'updated_before');
    const labels = ctx.query.labels === undefined ? [] : labelsOf(ctx.query.labels, 'labels');
    const listed = stores[kind]
      .listed(now())
      .filter(
        ({ record, modifiedMs }) =>
          (state === 'all' || record.state === state) &&
          (after === undefined || modifiedMs >= after) &&
          (before === undefined || modifiedMs <= before) &&
          labels.every((label) => (record.labels as string[]).includes(label)),
      );
    const key = (version: (typeof listed)[number]): number | string =>
      orderBy === 'updated_at'
        ? version.modifiedMs
        : orderBy === 'title'
          ? String(version.record.title)
          : Date.parse(String(version.record[orderBy] ?? version.record.created_at));
    listed.sort((a, b) => {
      const x = key(a);
      const y = key(b);
      const compared =
        typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
      return (compared || a.record.id - b.record.id) * (sort === 'asc' ? 1 : -1);
    });
    ctx.body = paged(ctx, kind, listed).map((version) => version.record);
  });

  router.get('/api/v4/projects/:project/:kind/:iid', (ctx) => {
    ctx.body = rowOf(kindOf(ctx), ctx.params.iid).current.record;
  });

  router.post('/api/v4/projects/:project/issues', (ctx) => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    ctx.status = 201;
    ctx.body = build('issues', values('issues', body, true), now()).current.record;
  });

  router.put('/api/v4/projects/:project/:kind/:iid', (ctx) => {
    const kind = kindOf(ctx);
    const row = rowOf(kind, ctx.params.iid);
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const checked = values(kind, body, false);
    const at = now();
    stores[kind].change(row.id, at, (record) => apply(record, checked, body, at), { now: at });
    ctx.body = row.current.record;
  });

  router.delete('/api/v4/projects/:project/issues/:iid', (ctx) => {
    const row = rowOf('issues', ctx.params.iid);
    stores.issues.remove(row.id, now());
    stores.issues.rows.delete(row.id);
    ctx.status = 204;
  });

  await fake.start();

  let seeded = 0;
  const kindOfName = (object: string): Kind => {
    if (object !== 'issues' && object !== 'merge_requests')
      throw new Error(`the GitLab fake keeps no ${object}`);
    return object;
  };
  return {
    url: fake.url,
    get credential() {
      return fake.credential;
    },
    rotateCredential: () => fake.rotateCredential(),
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    requests: fake.requests,
    setClock: (clock) => fake.setClock(clock),
    seed(object, times) {
      const kind = kindOfName(object);
      return times.map((ms) => {
        seeded += 1;
        const row = build(
          kind,
          {
            title: `${kind === 'issues' ? 'Issue' : 'Merge request'} ${seeded}`,
            description: `Seeded ${seeded}`,
            labels: ['seeded'],
          },
          ms,
        );
        // Every third one closed (or merged): listings show every state unless asked otherwise.
        if (seeded % 3 === 0) {
          row.current.record.state = kind === 'issues' ? 'closed' : 'merged';
          row.current.record[kind === 'issues' ? 'closed_at' : 'merged_at'] = gitlabTime(ms);
        }
        return row.id;
      });
    },
    touch(object, id, modifiedMs, options) {
      stores[kindOfName(object)].change(
        id,
        modifiedMs,
        (record) => {
          record.updated_at = gitlabTime(modifiedMs);
          record.user_notes_count = Number(record.user_notes_count) + 1;
        },
        { now: now(), ...(options?.visibleFromMs !== undefined && { visibleFromMs: options.visibleFromMs }) },
      );
    },
    remove(object, id, atMs) {
      const store = stores[kindOfName(object)];
      store.remove(id, atMs);
      store.rows.delete(id);
    },
    stored: (object, id) => stores[kindOfName(object)].get(id),
    stop: () => fake.stop(),
  };
}

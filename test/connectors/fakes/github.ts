import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { bearerCredential, FakeHttpError, FakeProvider } from '../kit/fake-provider.js';
import { githubHookRoutes } from './github-webhooks.js';
import { VersionedStore, type Row } from './versions.js';

/**
 * A local stand-in for GitHub's REST API (version 2022-11-28, https://docs.github.com/en/rest),
 * written from its reference for one repository's issues, milestones and labels:
 *
 * - Auth: `Authorization: Bearer <token>` (or the older `token <token>`); a stale token answers 401
 *   `{"message": "Bad credentials", "documentation_url", "status": "401"}`. OAuth refresh at the
 *   token endpoint (GitHub Apps' expiring user tokens).
 * - Times are ISO 8601 to the whole second (`2011-04-22T13:33:48Z`).
 * - `GET /repos/{owner}/{repo}/issues`: `state` (`open` by default, `closed`, `all`), `sort`
 *   (`created` by default, `updated`, `comments`), `direction` (`desc` by default, `asc`), `since`
 *   ("only show results that were last updated after the given time": strictly after), `labels`,
 *   `milestone`, `per_page` (30 by default, 100 at most), `page`; the next page in
 *   `Link: <…>; rel="next"`. Pull requests are issues too: they are listed, with a `pull_request`
 *   member. No deletion is revealed: an issue deleted (by an admin, in the UI or GraphQL; REST has
 *   no delete) leaves the listing, and reading it by number answers 410 Gone.
 * - `POST /repos/{owner}/{repo}/issues` (201; `title` required) and
 *   `PATCH /repos/{owner}/{repo}/issues/{issue_number}`: `title`, `body`, `state` (`open`,
 *   `closed`), `state_reason` (`completed`, `not_planned`, `duplicate`, `reopened`), `milestone`
 *   (a milestone number, or null), `labels` (names, created when missing), `assignees` (logins;
 *   users who cannot be assigned are dropped silently), `assignee`. Members the reference does not
 *   list are ignored. Issues are addressed by `number`, never by `id`.
 * - `GET /repos/{owner}/{repo}/milestones`: `state` (`open` by default), `sort` (`due_on` by
 *   default, `completeness`), `direction` (`asc` by default), `per_page`, `page`; no time filter.
 *   `POST` (201; `title` required and unique), `PATCH /milestones/{milestone_number}`, `DELETE`
 *   (204): a deleted milestone is simply gone.
 * - `GET /repos/{owner}/{repo}/labels`: `per_page`, `page`; labels carry no time at all.
 *   `POST` (201; `name` required, unique ignoring case), `PATCH /labels/{name}` (`new_name`,
 *   `color`, `description`), `DELETE /labels/{name}` (204).
 * - Errors `{message, documentation_url, status}`; validation failures 422
 *   `{message: "Validation Failed", errors: [{resource, code, field}], …}`.
 * - Repository webhooks: see github-webhooks.ts.
 * - Every answer carries `x-ratelimit-limit`/`-remaining`/`-used`/`-reset` (epoch seconds) and
 *   `x-ratelimit-resource`; beyond the secondary limit of 900 points a minute (a GET costs 1, a
 *   write 5) it answers 429 with `retry-after`.
 */

type GithubRecord = Record<string, unknown>;

export const GITHUB_OWNER = 'octo-org';
export const GITHUB_REPO = 'hello-world';
/** Users the fake knows: only these can be assigned. */
const USERS = ['octocat', 'hubot'];
const PER_PAGE_MAX = 100;
const PER_PAGE_DEFAULT = 30;
/** Secondary rate limit: points per rolling minute (GET 1, other methods 5). */
const POINTS_PER_MINUTE = 900;
const HOURLY_LIMIT = 5000;

const DOCS = 'https://docs.github.com/rest';
const second = (ms: number) => Math.floor(ms / 1000) * 1000;
const githubTime = (ms: number) => new Date(second(ms)).toISOString().replace(/\.\d{3}Z$/, 'Z');

const user = (login: string, id: number) => ({
  login,
  id,
  node_id: `U_${id}`,
  avatar_url: `https://avatars.githubusercontent.com/u/${id}?v=4`,
  url: `https://api.github.com/users/${login}`,
  html_url: `https://github.com/${login}`,
  type: 'User',
  site_admin: false,
});

function validation(resource: string, code: string, field: string): FakeHttpError {
  return new FakeHttpError(422, JSON.stringify([{ resource, code, field }]), 'validation');
}

export async function startFakeGithub(): Promise<ConformanceFake> {
  const issues = new VersionedStore<GithubRecord>();
  const milestones = new VersionedStore<GithubRecord>();
  /** Labels by lower-cased name; they carry no time. */
  const labels = new Map<string, GithubRecord>();
  /** Numbers of deleted issues (GET answers 410 Gone). */
  const deletedIssues = new Set<string>();
  let nextIssueNumber = 1;
  let nextMilestoneNumber = 1;
  let nextGlobalId = 1_000_001;
  let used = 0;
  const arrivals: { at: number; points: number }[] = [];

  const fake = new FakeProvider({
    credentialOf: (ctx) => bearerCredential(ctx) ?? /^token\s+(.+)$/i.exec(ctx.get('authorization'))?.[1],
    errorBody: (error) => {
      const status = String(error.status);
      if (error.code === 'validation')
        return {
          message: 'Validation Failed',
          errors: JSON.parse(error.message) as unknown,
          documentation_url: `${DOCS}/issues/issues`,
          status,
        };
      if (error.status === 401) return { message: 'Bad credentials', documentation_url: DOCS, status };
      if (error.status === 429)
        return {
          message:
            'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
          documentation_url: `${DOCS}/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits`,
          status,
        };
      return { message: error.message, documentation_url: DOCS, status };
    },
    rateLimitHeaders: () => rateHeaders(),
  });
  const now = () => fake.now();
  const repoUrl = () => `${fake.url}/repos/${GITHUB_OWNER}/${GITHUB_REPO}`;

  function rateHeaders(): Record<string, string> {
    return {
      'x-ratelimit-limit': String(HOURLY_LIMIT),
      'x-ratelimit-remaining': String(Math.max(0, HOURLY_LIMIT - used)),
      'x-ratelimit-used': String(used),
      'x-ratelimit-reset': String(Math.ceil(Date.now() / 3_600_000) * 3600),
      'x-ratelimit-resource': 'core',
    };
  }

  const router = fake.router;
  router.use(async (ctx, next) => {
    used += 1;
    // The secondary limit counts points over a rolling minute of real time.
    const at = Date.now();
    while (arrivals.length && arrivals[0].at <= at - 60_000) arrivals.shift();
    const points = ctx.method === 'GET' ? 1 : 5;
    const spent = arrivals.reduce((sum, arrival) => sum + arrival.points, 0);
    for (const [name, value] of Object.entries(rateHeaders())) ctx.set(name, value);
    ctx.set('x-github-api-version-selected', '2022-11-28');
    if (spent + points > POINTS_PER_MINUTE)
      throw new FakeHttpError(429, 'secondary rate limit', undefined, { 'retry-after': '60' });
    arrivals.push({ at, points });
    await next();
  });

  /** Only the fake's repository exists. */
  router.use('/repos/:owner/:repo', async (ctx, next) => {
    if (ctx.params.owner !== GITHUB_OWNER || ctx.params.repo !== GITHUB_REPO)
      throw new FakeHttpError(404, 'Not Found');
    await next();
  });

  // Repository webhooks (github-webhooks.ts).
  githubHookRoutes(router, () => `${repoUrl()}/hooks`, now);

  const pageParams = (ctx: Context, object: string) => {
    const perPageRaw = ctx.query.per_page === undefined ? PER_PAGE_DEFAULT : Number(ctx.query.per_page);
    const page = ctx.query.page === undefined ? 1 : Number(ctx.query.page);
    if (!Number.isInteger(perPageRaw) || perPageRaw < 1 || !Number.isInteger(page) || page < 1)
      throw new FakeHttpError(422, 'Invalid request: per_page and page must be positive integers.');
    fake.logListing(ctx, { object, pageSize: perPageRaw, maxPageSize: PER_PAGE_MAX });
    // More than 100 a page is served as 100.
    return { perPage: Math.min(perPageRaw, PER_PAGE_MAX), page };
  };

  /** One page of `items`, with the `Link` header GitHub sends (next and last while more follow). */
  function paged<T>(ctx: Context, object: string, items: T[]): T[] {
    const { perPage, page } = pageParams(ctx, object);
    const start = (page - 1) * perPage;
    const last = Math.max(1, Math.ceil(items.length / perPage));
    const link = (n: number, rel: string) => {
      const url = new URL(ctx.href);
      url.searchParams.set('page', String(n));
      return `<${url.toString()}>; rel="${rel}"`;
    };
    const links: string[] = [];
    if (page < last) links.push(link(page + 1, 'next'), link(last, 'last'));
    if (page > 1) links.push(link(1, 'first'), link(page - 1, 'prev'));
    if (links.length) ctx.set('link', links.join(', '));
    return items.slice(start, start + perPage);
  }

  const oneOf = (ctx: Context, name: string, allowed: string[], fallback: string): string => {
    const value = ctx.query[name] === undefined ? fallback : String(ctx.query[name]);
    if (!allowed.includes(value)) throw validation('Issue', 'invalid', name);
    return value;
  };

  const sinceOf = (ctx: Context): number | undefined => {
    const raw = ctx.query.since;
    if (raw === undefined) return undefined;
    const ms =
      typeof raw === 'string' && /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(raw)
        ? Date.parse(raw)
        : NaN;
    if (Number.isNaN(ms)) throw validation('Issue', 'invalid', 'since');
    return ms;
  };

  // --- Labels --------------------------------------------------------------------------------

  const colorOf = (value: unknown, fallback: string): string => {
    if (value === undefined) return fallback;
    const color = String(value).replace(/^#/, '');
    if (!/^[0-9a-fA-F]{6}$/.test(color)) throw validation('Label', 'invalid', 'color');
    return color.toLowerCase();
  };

  function addLabel(name: string, color?: unknown, description?: unknown): GithubRecord {
    if (!name.trim()) throw validation('Label', 'missing_field', 'name');
    if (labels.has(name.toLowerCase())) throw validation('Label', 'already_exists', 'name');
    const id = nextGlobalId++;
    const label = {
      id,
      node_id: `LA_${id}`,
      url: `${repoUrl()}/labels/${encodeURIComponent(name)}`,
      name,
      color: colorOf(color, 'ededed'),
      default: false,
      description: description === undefined ? null : description,
    };
    labels.set(name.toLowerCase(), label);
    return label;
  }

  const labelOf = (name: string) => {
    const label = labels.get(name.toLowerCase());
    if (!label) throw new FakeHttpError(404, 'Not Found');
    return label;
  };

  router.get('/repos/:owner/:repo/labels', (ctx) => {
    ctx.body = paged(
      ctx,
      'labels',
      [...labels.values()].sort((a, b) => Number(a.id) - Number(b.id)),
    );
  });
  router.get('/repos/:owner/:repo/labels/:name', (ctx) => {
    ctx.body = labelOf(ctx.params.name);
  });
  router.post('/repos/:owner/:repo/labels', (ctx) => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    if (typeof body.name !== 'string') throw validation('Label', 'missing_field', 'name');
    ctx.status = 201;
    ctx.body = addLabel(body.name, body.color, body.description);
  });
  router.patch('/repos/:owner/:repo/labels/:name', (ctx) => {
    const label = labelOf(ctx.params.name);
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    if (body.new_name !== undefined) {
      const renamed = String(body.new_name);
      const taken = labels.get(renamed.toLowerCase());
      if (taken && taken !== label) throw validation('Label', 'already_exists', 'name');
      labels.delete(String(label.name).toLowerCase());
      label.name = renamed;
      label.url = `${repoUrl()}/labels/${encodeURIComponent(renamed)}`;
      labels.set(renamed.toLowerCase(), label);
    }
    if (body.color !== undefined) label.color = colorOf(body.color, String(label.color));
    if (body.description !== undefined) label.description = body.description;
    ctx.body = label;
  });
  router.delete('/repos/:owner/:repo/labels/:name', (ctx) => {
    const label = labelOf(ctx.params.name);
    labels.delete(String(label.name).toLowerCase());
    for (const row of issues.live())
      row.current.record.labels = (row.current.record.labels as GithubRecord[]).filter((l) => l !== label);
    ctx.status = 204;
  });

  // --- Milestones ----------------------------------------------------------------------------

  const milestoneRow = (number: string): Row<GithubRecord> => {
    const row = milestones.row(number);
    if (!row) throw new FakeHttpError(404, 'Not Found');
    return row;
  };

  function milestoneValues(body: Record<string, unknown>, creating: boolean): Record<string, unknown> {
    const values: Record<string, unknown> = {};
    if (creating || 'title' in body) {
      if (typeof body.title !== 'string' || !body.title)
        throw validation('Milestone', 'missing_field', 'title');
      values.title = body.title;
    }
    if ('state' in body) {
      if (body.state !== 'open' && body.state !== 'closed') throw validation('Milestone', 'invalid', 'state');
      values.state = body.state;
    }
    if ('description' in body)
      values.description = body.description === null ? null : String(body.description);
    if ('due_on' in body) {
      if (body.due_on !== null && Number.isNaN(Date.parse(String(body.due_on))))
        throw validation('Milestone', 'invalid', 'due_on');
      values.due_on = body.due_on === null ? null : githubTime(Date.parse(String(body.due_on)));
    }
    return values;
  }

  function titleTaken(title: unknown, except?: GithubRecord) {
    return milestones
      .live()
      .some((row) => row.current.record !== except && row.current.record.title === title);
  }

  function newMilestone(
    values: Record<string, unknown>,
    ms: number,
    visibleFromMs?: number,
  ): Row<GithubRecord> {
    if (titleTaken(values.title)) throw validation('Milestone', 'already_exists', 'title');
    const number = nextMilestoneNumber++;
    const id = nextGlobalId++;
    const time = githubTime(ms);
    const record: GithubRecord = {
      url: `${repoUrl()}/milestones/${number}`,
      html_url: `https://github.com/${GITHUB_OWNER}/${GITHUB_REPO}/milestone/${number}`,
      labels_url: `${repoUrl()}/milestones/${number}/labels`,
      id,
      node_id: `MI_${id}`,
      number,
      state: 'open',
      title: '',
      description: null,
      creator: user('octocat', 1),
      open_issues: 0,
      closed_issues: 0,
      created_at: time,
      updated_at: time,
      closed_at: null,
      due_on: null,
      ...values,
    };
    if (record.state === 'closed') record.closed_at = time;
    return milestones.add(String(number), record, second(ms), visibleFromMs);
  }

  const milestoneState = (row: Row<GithubRecord>, ms: number, state: unknown) => {
    const record = row.current.record;
    if (state === 'closed' && record.closed_at === null) record.closed_at = githubTime(ms);
    if (state === 'open') record.closed_at = null;
  };

  router.get('/repos/:owner/:repo/milestones', (ctx) => {
    const state = oneOf(ctx, 'state', ['open', 'closed', 'all'], 'open');
    const sort = oneOf(ctx, 'sort', ['due_on', 'completeness'], 'due_on');
    const direction = oneOf(ctx, 'direction', ['asc', 'desc'], 'asc');
    const listed = milestones
      .listed(now())
      .filter((version) => state === 'all' || version.record.state === state);
    const completeness = (record: GithubRecord) => {
      const total = Number(record.open_issues) + Number(record.closed_issues);
      return total ? Number(record.closed_issues) / total : 0;
    };
    const key = (record: GithubRecord) =>
      sort === 'completeness'
        ? completeness(record)
        : record.due_on === null
          ? Number.MAX_SAFE_INTEGER
          : Date.parse(String(record.due_on));
    listed.sort(
      (a, b) => (key(a.record) - key(b.record) || a.row.order - b.row.order) * (direction === 'asc' ? 1 : -1),
    );
    ctx.body = paged(ctx, 'milestones', listed).map((version) => version.record);
  });
  router.get('/repos/:owner/:repo/milestones/:number', (ctx) => {
    ctx.body = milestoneRow(ctx.params.number).current.record;
  });
  router.post('/repos/:owner/:repo/milestones', (ctx) => {
    const values = milestoneValues((ctx.request.body ?? {}) as Record<string, unknown>, true);
    ctx.status = 201;
    ctx.body = newMilestone(values, now()).current.record;
  });
  router.patch('/repos/:owner/:repo/milestones/:number', (ctx) => {
    const row = milestoneRow(ctx.params.number);
    const values = milestoneValues((ctx.request.body ?? {}) as Record<string, unknown>, false);
    if ('title' in values && titleTaken(values.title, row.current.record))
      throw validation('Milestone', 'already_exists', 'title');
    const at = now();
    milestones.change(
      row.id,
      second(at),
      (record) => {
        Object.assign(record, values, { updated_at: githubTime(at) });
      },
      { now: at },
    );
    milestoneState(row, at, values.state);
    ctx.body = row.current.record;
  });
  router.delete('/repos/:owner/:repo/milestones/:number', (ctx) => {
    const row = milestoneRow(ctx.params.number);
    milestones.remove(row.id, now());
    milestones.rows.delete(row.id);
    for (const issue of issues.live())
      if (issue.current.record.milestone === row.current.record) issue.current.record.milestone = null;
    ctx.status = 204;
  });

  // --- Issues --------------------------------------------------------------------------------

  const issueRow = (number: string): Row<GithubRecord> => {
    if (deletedIssues.has(number)) throw new FakeHttpError(410, 'This issue was deleted');
    const row = issues.row(number);
    if (!row) throw new FakeHttpError(404, 'Not Found');
    return row;
  };

  const STATE_REASONS = ['completed', 'not_planned', 'duplicate', 'reopened'];

  /** The values of a create or update, checked as GitHub checks them; unknown members are ignored. */
  function issueValues(body: Record<string, unknown>, creating: boolean): Record<string, unknown> {
    const values: Record<string, unknown> = {};
    if (creating || 'title' in body) {
      if (
        (typeof body.title !== 'string' && typeof body.title !== 'number') ||
        String(body.title).trim() === ''
      )
        throw validation('Issue', 'missing_field', 'title');
      values.title = String(body.title);
    }
    if ('body' in body) values.body = body.body === null ? null : String(body.body);
    if ('state' in body) {
      if (body.state !== 'open' && body.state !== 'closed') throw validation('Issue', 'invalid', 'state');
      values.state = body.state;
    }
    if ('state_reason' in body) {
      if (body.state_reason !== null && !STATE_REASONS.includes(String(body.state_reason)))
        throw validation('Issue', 'invalid', 'state_reason');
      values.state_reason = body.state_reason;
    }
    if ('milestone' in body) {
      if (body.milestone === null) values.milestone = null;
      else {
        const row = milestones.row(String(body.milestone));
        if (!row) throw validation('Issue', 'invalid', 'milestone');
        values.milestone = row.current.record;
      }
    }
    if ('labels' in body) {
      if (!Array.isArray(body.labels)) throw validation('Issue', 'invalid', 'labels');
      values.labels = body.labels.map((entry) => {
        const name = typeof entry === 'object' && entry ? (entry as { name?: unknown }).name : entry;
        if (typeof name !== 'string' || !name) throw validation('Issue', 'invalid', 'labels');
        return labels.get(name.toLowerCase()) ?? addLabel(name);
      });
    }
    const assignable = (login: unknown) => USERS.includes(String(login));
    if ('assignees' in body) {
      if (!Array.isArray(body.assignees)) throw validation('Issue', 'invalid', 'assignees');
      values.assignees = body.assignees
        .filter(assignable)
        .map((login) => user(String(login), USERS.indexOf(String(login)) + 1));
    } else if ('assignee' in body) {
      values.assignees =
        body.assignee !== null && assignable(body.assignee)
          ? [user(String(body.assignee), USERS.indexOf(String(body.assignee)) + 1)]
          : [];
    }
    return values;
  }

  /** Applies checked values: the derived members (assignee, closed_at, state_reason) follow. */
  function applyIssue(record: GithubRecord, values: Record<string, unknown>, ms: number) {
    const wasState = record.state;
    Object.assign(record, values);
    if (values.assignees) record.assignee = (values.assignees as unknown[])[0] ?? null;
    if (values.state === 'closed' && wasState !== 'closed') {
      record.closed_at = githubTime(ms);
      record.closed_by = user('octocat', 1);
      if (!('state_reason' in values)) record.state_reason = 'completed';
    }
    if (values.state === 'open' && wasState === 'closed') {
      record.closed_at = null;
      record.closed_by = null;
      if (!('state_reason' in values)) record.state_reason = 'reopened';
    }
    record.updated_at = githubTime(ms);
  }

  function newIssue(
    values: Record<string, unknown>,
    ms: number,
    extra: Record<string, unknown> = {},
  ): Row<GithubRecord> {
    const number = nextIssueNumber++;
    const id = nextGlobalId++;
    const time = githubTime(ms);
    const base = `${repoUrl()}/issues/${number}`;
    const record: GithubRecord = {
      id,
      node_id: `I_kwDO${id}`,
      url: base,
      repository_url: repoUrl(),
      labels_url: `${base}/labels{/name}`,
      comments_url: `${base}/comments`,
      events_url: `${base}/events`,
      html_url: `https://github.com/${GITHUB_OWNER}/${GITHUB_REPO}/issues/${number}`,
      number,
      state: 'open',
      state_reason: null,
      title: '',
      body: null,
      user: user('octocat', 1),
      labels: [],
      assignee: null,
      assignees: [],
      milestone: null,
      locked: false,
      active_lock_reason: null,
      comments: 0,
      closed_at: null,
      created_at: time,
      updated_at: time,
      closed_by: null,
      author_association: 'OWNER',
      type: null,
      ...extra,
    };
    applyIssue(record, values, ms);
    record.updated_at = time;
    return issues.add(String(number), record, second(ms));
  }

  router.get('/repos/:owner/:repo/issues', (ctx) => {
    const state = oneOf(ctx, 'state', ['open', 'closed', 'all'], 'open');
    const sort = oneOf(ctx, 'sort', ['created', 'updated', 'comments'], 'created');
    const direction = oneOf(ctx, 'direction', ['asc', 'desc'], 'desc');
    const since = sinceOf(ctx);
    const labelNames =
      typeof ctx.query.labels === 'string'
        ? ctx.query.labels.split(',').map((name) => name.toLowerCase())
        : [];
    const milestone = ctx.query.milestone === undefined ? undefined : String(ctx.query.milestone);
    const listed = issues.listed(now()).filter(({ record, modifiedMs }) => {
      if (state !== 'all' && record.state !== state) return false;
      // "Updated after the given time": strictly after.
      if (since !== undefined && !(modifiedMs > since)) return false;
      const names = (record.labels as GithubRecord[]).map((label) => String(label.name).toLowerCase());
      if (!labelNames.every((name) => names.includes(name))) return false;
      const number = (record.milestone as GithubRecord | null)?.number;
      if (milestone === 'none' && number !== undefined) return false;
      if (milestone === '*' && number === undefined) return false;
      if (milestone && milestone !== 'none' && milestone !== '*' && String(number) !== milestone)
        return false;
      return true;
    });
    const key = (version: (typeof listed)[number]) =>
      sort === 'updated'
        ? version.modifiedMs
        : sort === 'comments'
          ? Number(version.record.comments)
          : Date.parse(String(version.record.created_at));
    listed.sort((a, b) => (key(a) - key(b) || a.row.order - b.row.order) * (direction === 'asc' ? 1 : -1));
    ctx.body = paged(ctx, 'issues', listed).map((version) => version.record);
  });
  router.get('/repos/:owner/:repo/issues/:number', (ctx) => {
    ctx.body = issueRow(ctx.params.number).current.record;
  });
  router.post('/repos/:owner/:repo/issues', (ctx) => {
    const values = issueValues((ctx.request.body ?? {}) as Record<string, unknown>, true);
    ctx.status = 201;
    const row = newIssue(values, now());
    ctx.set('location', String(row.current.record.url));
    ctx.body = row.current.record;
  });
  router.patch('/repos/:owner/:repo/issues/:number', (ctx) => {
    const row = issueRow(ctx.params.number);
    const values = issueValues((ctx.request.body ?? {}) as Record<string, unknown>, false);
    const at = now();
    issues.change(row.id, second(at), (record) => applyIssue(record, values, at), { now: at });
    ctx.body = row.current.record;
  });

  await fake.start();

  // A pull request, merged and closed long ago: pull requests are listed among issues.
  newIssue({ title: 'Add the README', body: 'First pull request', state: 'closed' }, Date.UTC(2020, 0, 1), {
    pull_request: {
      url: `${repoUrl()}/pulls/1`,
      html_url: `https://github.com/${GITHUB_OWNER}/${GITHUB_REPO}/pull/1`,
      diff_url: `https://github.com/${GITHUB_OWNER}/${GITHUB_REPO}/pull/1.diff`,
      patch_url: `https://github.com/${GITHUB_OWNER}/${GITHUB_REPO}/pull/1.patch`,
      merged_at: githubTime(Date.UTC(2020, 0, 1)),
    },
  });
  for (const [name, color, description] of [
    ['bug', 'd73a4a', "Something isn't working"],
    ['enhancement', 'a2eeef', 'New feature or request'],
  ])
    Object.assign(addLabel(name, color, description), { default: true });

  const storeOf = (object: string) => {
    if (object === 'issues') return issues;
    if (object === 'milestones') return milestones;
    throw new Error(`the GitHub fake keeps times for issues and milestones, not ${object}`);
  };
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
        if (object === 'labels')
          return String(addLabel(`seeded-${seeded}`, '0e8a16', `Label ${seeded}`).name);
        if (object === 'milestones') {
          // Every third one closed: the listing shows open milestones unless asked for all.
          const row = newMilestone(
            {
              title: `Milestone ${seeded}`,
              description: `Seeded ${seeded}`,
              state: seeded % 3 ? 'open' : 'closed',
            },
            ms,
          );
          return row.id;
        }
        // Every third issue closed: the listing shows open issues unless asked for all.
        const row = newIssue(
          {
            title: `Issue ${seeded}`,
            body: `Seeded ${seeded}`,
            ...(seeded % 3 === 0 && { state: 'closed' }),
          },
          ms,
        );
        return row.id;
      });
    },
    touch(object, id, modifiedMs, options) {
      const store = storeOf(object);
      store.change(
        id,
        second(modifiedMs),
        (record) => {
          record.updated_at = githubTime(modifiedMs);
          record.body = `Edited at ${modifiedMs}`;
        },
        { now: now(), ...(options?.visibleFromMs !== undefined && { visibleFromMs: options.visibleFromMs }) },
      );
    },
    remove(object, id, atMs) {
      if (object === 'labels') {
        labels.delete(id.toLowerCase());
        return;
      }
      // Deleted issues and milestones are gone: no listing reveals them.
      storeOf(object).remove(id, atMs);
      storeOf(object).rows.delete(id);
      if (object === 'issues') deletedIssues.add(id);
    },
    stored: (object, id) => (object === 'labels' ? labels.get(id.toLowerCase()) : storeOf(object).get(id)),
    stop: () => fake.stop(),
  };
}

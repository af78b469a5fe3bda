import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  asConformanceFake,
  bearerCredential,
  FakeHttpError,
  FakeProvider,
  RequestWindow,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for Braze's REST API export endpoints, written from Braze's reference
 * (https://www.braze.com/docs/api/endpoints/export/campaigns/get_campaigns/,
 * .../export/canvas/get_canvases/, .../export/segments/get_segment/, https://www.braze.com/docs/api/api_limits/,
 * https://www.braze.com/docs/api/errors/):
 *
 * - `Authorization: Bearer <REST API key>`; a bad or revoked key answers 401 `{message}`.
 * - `GET /campaigns/list` and `GET /canvas/list`: groups of 100 (no page size parameter), `page`
 *   from 0, sorted by creation time (`sort_direction=asc`, the default, or `desc`),
 *   `include_archived` (default false: an archived campaign or Canvas is left out),
 *   `last_edit.time[gt]` (ISO 8601): only those last edited strictly after it. Items
 *   `{id, name, last_edited, tags}` (campaigns also `is_api_campaign`), `last_edited` ISO 8601 to the
 *   second with an offset (`2024-01-01T00:00:00+00:00`); the answer `{campaigns|canvases, message:
 *   "success"}`, an empty array past the last page.
 * - `GET /segments/list`: groups of 100, `page` from 0, sorted by creation time, archived segments
 *   left out, no filter by time; items `{id, name, analytics_tracking_enabled, tags}` carry no time.
 * - Nothing is deleted through these APIs: users archive campaigns, Canvases and segments in the
 *   dashboard, which leaves them out of the lists (archiving counts as an edit of `last_edited`).
 * - Every answer carries `X-RateLimit-Limit`, `-Remaining` and `-Reset` (epoch seconds); past the
 *   limit (250,000 requests an hour for these endpoints) 429 `{message}`. Errors `{message,
 *   errors?}`: 400 for a bad parameter.
 */

type Item = Record<string, unknown> & { id: string; name: string; last_edited?: string };
type Row = { item: Item; createdMs: number; modifiedMs: number; visibleFromMs?: number; archived: boolean };

type BrazeObject = 'campaigns' | 'canvases' | 'segments';
const GROUP = 100;
const HOURLY_LIMIT = 250_000;

const wholeSecond = (ms: number) => Math.floor(ms / 1000) * 1000;
const brazeTime = (ms: number) => new Date(wholeSecond(ms)).toISOString().replace('.000Z', '+00:00');

/** ISO 8601 as Braze takes it, including its documented `-5:00` offsets. */
function parseTime(text: string): number {
  const normalized = text.replace(/([+-])(\d):(\d{2})$/, '$10$2:$3').replace(' ', '+');
  const value = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(normalized) ? `${normalized}T00:00:00Z` : normalized);
  if (Number.isNaN(value)) throw new FakeHttpError(400, `Invalid date format: ${text}`);
  return value;
}

const hexId = (n: number) =>
  `${n.toString(16).padStart(8, '0')}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

export async function startFakeBraze(): Promise<ConformanceFake> {
  const stores: Record<BrazeObject, Map<string, Row>> = {
    campaigns: new Map(),
    canvases: new Map(),
    segments: new Map(),
  };
  let next = 1;
  const budget = new RequestWindow(HOURLY_LIMIT, 3_600_000);

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) =>
      error.status === 401
        ? { message: 'Invalid API key: the key is missing, revoked or does not have access to this endpoint' }
        : error.status === 429
          ? { message: 'Rate limit exceeded. Please wait until the rate limit resets.' }
          : { message: error.message, ...(error.status === 400 && { errors: [error.message] }) },
    rateLimitHeaders: () => ({
      'X-RateLimit-Limit': String(HOURLY_LIMIT),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(Math.ceil(Date.now() / 1000) + 1),
    }),
  });
  const now = () => fake.now();
  const router = fake.router;

  router.use(async (ctx, next) => {
    const taken = budget.take();
    ctx.set('X-RateLimit-Limit', String(HOURLY_LIMIT));
    ctx.set('X-RateLimit-Remaining', String(Math.max(0, HOURLY_LIMIT - taken.used)));
    ctx.set('X-RateLimit-Reset', String(Math.ceil(taken.resetMs / 1000)));
    if (!taken.allowed) throw new FakeHttpError(429, 'Rate limit exceeded');
    await next();
  });

  const pageOf = (ctx: Context) => {
    const text = ctx.query.page;
    const page = text === undefined ? 0 : Number(text);
    if (!Number.isInteger(page) || page < 0) throw new FakeHttpError(400, `Invalid page: ${String(text)}`);
    return page;
  };
  const directionOf = (ctx: Context) => {
    const direction = ctx.query.sort_direction === undefined ? 'asc' : String(ctx.query.sort_direction);
    if (direction !== 'asc' && direction !== 'desc')
      throw new FakeHttpError(400, `Invalid sort_direction: ${direction}`);
    return direction;
  };
  const flag = (ctx: Context, name: string) => {
    const text = ctx.query[name];
    if (text === undefined) return false;
    if (text !== 'true' && text !== 'false') throw new FakeHttpError(400, `Invalid ${name}: ${String(text)}`);
    return text === 'true';
  };

  /** One group of 100 of `object`, sorted by creation, as the list endpoints answer. */
  const list = (ctx: Context, object: BrazeObject, filtered: boolean) => {
    const page = pageOf(ctx);
    const direction = directionOf(ctx);
    const archived = filtered && flag(ctx, 'include_archived');
    const sinceText = ctx.query['last_edit.time[gt]'];
    if (!filtered && sinceText !== undefined)
      throw new FakeHttpError(400, `Unknown parameter: last_edit.time[gt]`);
    const after = sinceText === undefined ? undefined : parseTime(String(sinceText));
    fake.logListing(ctx, { object, pageSize: GROUP, maxPageSize: GROUP });
    const rows = [...stores[object].values()]
      .filter((row) => (archived || !row.archived) && (row.visibleFromMs ?? row.modifiedMs) <= now())
      .filter((row) => after === undefined || row.modifiedMs > after)
      .sort(
        (a, b) =>
          (a.createdMs - b.createdMs || a.item.id.localeCompare(b.item.id)) * (direction === 'asc' ? 1 : -1),
      );
    return rows.slice(page * GROUP, (page + 1) * GROUP).map((row) => row.item);
  };

  router.get('/campaigns/list', (ctx) => {
    ctx.body = { campaigns: list(ctx, 'campaigns', true), message: 'success' };
  });
  router.get('/canvas/list', (ctx) => {
    ctx.body = { canvases: list(ctx, 'canvases', true), message: 'success' };
  });
  router.get('/segments/list', (ctx) => {
    ctx.body = { segments: list(ctx, 'segments', false), message: 'success' };
  });

  const create = (object: BrazeObject, ms: number): Row => {
    const n = next++;
    const id = hexId(n);
    const item: Item =
      object === 'campaigns'
        ? {
            id,
            name: `Campaign ${n}`,
            is_api_campaign: n % 2 === 0,
            tags: ['seeded'],
            last_edited: brazeTime(ms),
          }
        : object === 'canvases'
          ? { id, name: `Canvas ${n}`, tags: ['seeded'], last_edited: brazeTime(ms) }
          : { id, name: `Segment ${n}`, analytics_tracking_enabled: false, tags: ['seeded'] };
    const row: Row = { item, createdMs: ms, modifiedMs: wholeSecond(ms), archived: false };
    stores[object].set(id, row);
    return row;
  };
  const edit = (row: Row, object: BrazeObject, ms: number, visibleFromMs?: number) => {
    row.modifiedMs = wholeSecond(ms);
    row.visibleFromMs = visibleFromMs;
    if (object !== 'segments') row.item.last_edited = brazeTime(ms);
    else row.item.name = `${row.item.name.replace(/ \(edited.*\)$/, '')} (edited ${brazeTime(ms)})`;
  };

  await fake.start();

  const rowOf = (object: string, id: string) => {
    const row = stores[object as BrazeObject].get(id);
    if (!row) throw new Error(`no ${object} ${id}`);
    return row;
  };

  return asConformanceFake(fake, {
    seed: (object, times) => times.map((ms) => create(object as BrazeObject, ms).item.id),
    touch(object, id, modifiedMs, options) {
      edit(rowOf(object, id), object as BrazeObject, modifiedMs, options?.visibleFromMs);
    },
    remove(object, id, atMs) {
      // Archived in the dashboard: left out of the lists; archiving is an edit.
      const row = rowOf(object, id);
      edit(row, object as BrazeObject, atMs);
      row.archived = true;
    },
    stored: (object, id) => {
      const row = stores[object as BrazeObject].get(id);
      return row && !row.archived ? row.item : undefined;
    },
  });
}

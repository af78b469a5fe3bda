import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import { asConformanceFake, FakeHttpError, FakeProvider, RecordStore } from '../kit/fake-provider.js';

/**
 * A local stand-in for Iterable's REST API (https://api.iterable.com/api/docs), written from its
 * reference (lists, campaigns; API keys; error responses):
 *
 * - The API key in the `Api-Key` header; a missing or revoked key answers 401 `BadApiKey`.
 * - Every answer outside a listing is `{msg, code, params}`: `Success`, `BadParams` (400),
 *   `BadApiKey` (401), `NotFound` (404), `RateLimitExceeded` (429).
 * - `GET /api/lists` answers every list of the project at once, `{lists: [{id, name, createdAt,
 *   listType, description}]}`: no paging, no filter, nothing says when a list last changed
 *   (`createdAt` only, epoch milliseconds). `POST /api/lists {name, description?}` answers
 *   `{listId}`; `DELETE /api/lists/{listId}` deletes it: a deleted list is listed nowhere.
 * - `GET /api/campaigns?page=&pageSize=&sort=` pages campaigns by page number (from 1; `pageSize`
 *   default 20, at most 1000 (verify)), sorted by `sort` (`id` by default, `-` descending), with
 *   `totalCampaignsCount` and a relative `nextPageUrl` (`/api/campaigns?page=2&...`) absent on the
 *   last page. No parameter filters by time: `createdAt`/`updatedAt` are epoch milliseconds that
 *   the listing only shows. A campaign deleted in the app is listed nowhere.
 */

type Campaign = {
  id: number;
  name: string;
  createdAt: number;
  updatedAt: number;
  createdByUserId: string;
  updatedByUserId: string;
  templateId: number;
  messageMedium: string;
  campaignState: string;
  type: string;
  listIds: number[];
  suppressionListIds: number[];
  labels: string[];
  sendSize?: number;
};
type List = { id: number; name: string; createdAt: number; listType: string; description?: string };

const CAMPAIGN_PAGE_MAX = 1000;
const CAMPAIGN_PAGE_DEFAULT = 20;
/** `GET /api/lists` answers every list: the page is the whole project. */
const WHOLE_LISTING = Number.MAX_SAFE_INTEGER;
const sortable = new Set(['id', 'name', 'createdAt', 'updatedAt']);

export async function startFakeIterable(): Promise<ConformanceFake> {
  const campaigns = new RecordStore<Campaign>();
  const lists = new RecordStore<List>();
  const nextId = { campaigns: 1000, lists: 500 };

  const fake = new FakeProvider({
    credentialOf: (ctx) => ctx.get('api-key') || undefined,
    errorBody: (error) => ({
      msg: error.status === 401 ? 'Invalid API key' : error.message,
      code:
        error.status === 401
          ? 'BadApiKey'
          : error.status === 429
            ? 'RateLimitExceeded'
            : (error.code ??
              (error.status === 404 ? 'NotFound' : error.status >= 500 ? 'GenericError' : 'BadParams')),
      params: null,
    }),
    rateLimitHeaders: () => ({}),
    rateLimitCode: 'RateLimitExceeded',
  });
  const now = () => fake.now();
  const router = fake.router;
  const visible = <T>(rows: { record: T; visibleFromMs?: number; modifiedMs: number }[]) =>
    rows.filter((row) => (row.visibleFromMs ?? row.modifiedMs) <= now());

  const badParams = (message: string) => new FakeHttpError(400, message, 'BadParams');

  router.get('/api/lists', (ctx) => {
    fake.logListing(ctx, { object: 'lists', pageSize: WHOLE_LISTING, maxPageSize: WHOLE_LISTING });
    ctx.body = { lists: visible(lists.live()).map((row) => row.record) };
  });

  router.post('/api/lists', (ctx) => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    if (typeof body.name !== 'string' || !body.name) throw badParams('name is required');
    const id = nextId.lists++;
    const at = now();
    lists.put(
      String(id),
      {
        id,
        name: body.name,
        createdAt: at,
        listType: 'Standard',
        ...(typeof body.description === 'string' && { description: body.description }),
      },
      at,
    );
    ctx.body = { listId: id };
  });

  router.delete('/api/lists/:listId', (ctx) => {
    if (!lists.remove(ctx.params.listId, now()))
      throw badParams(`error.lists.deleteFailed(${ctx.params.listId})`);
    ctx.body = { msg: `Deleted list ${ctx.params.listId}`, code: 'Success', params: null };
  });

  const positiveInteger = (ctx: Context, name: string, fallback: number): number => {
    const text = ctx.query[name];
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1) throw badParams(`${name} must be a positive integer`);
    return value;
  };

  router.get('/api/campaigns', (ctx) => {
    const page = positiveInteger(ctx, 'page', 1);
    const pageSize = positiveInteger(ctx, 'pageSize', CAMPAIGN_PAGE_DEFAULT);
    if (pageSize > CAMPAIGN_PAGE_MAX) throw badParams(`pageSize must be at most ${CAMPAIGN_PAGE_MAX}`);
    fake.logListing(ctx, { object: 'campaigns', pageSize, maxPageSize: CAMPAIGN_PAGE_MAX });
    const sort = ctx.query.sort === undefined ? 'id' : String(ctx.query.sort);
    const field = sort.replace(/^-/, '');
    if (!sortable.has(field)) throw badParams(`Cannot sort by ${sort}`);
    const direction = sort.startsWith('-') ? -1 : 1;
    const all = visible(campaigns.live())
      .map((row) => row.record)
      .sort((a, b) => {
        const [x, y] = [a[field as keyof Campaign], b[field as keyof Campaign]] as (string | number)[];
        return ((x < y ? -1 : x > y ? 1 : 0) || a.id - b.id) * direction;
      });
    const start = (page - 1) * pageSize;
    const query = (n: number) => {
      const params = new URLSearchParams({ page: String(n), pageSize: String(pageSize) });
      if (ctx.query.sort !== undefined) params.set('sort', sort);
      return `/api/campaigns?${params.toString()}`;
    };
    ctx.body = {
      campaigns: all.slice(start, start + pageSize),
      totalCampaignsCount: all.length,
      ...(start + pageSize < all.length && { nextPageUrl: query(page + 1) }),
      ...(page > 1 && { previousPageUrl: query(page - 1) }),
    };
  });

  router.get('/api/campaigns/:id', (ctx) => {
    const row = campaigns.get(ctx.params.id);
    if (!row) throw new FakeHttpError(404, `Campaign ${ctx.params.id} not found`, 'NotFound');
    ctx.body = row.record;
  });

  await fake.start();

  const seedOne = (object: string, ms: number): string => {
    if (object === 'lists') {
      const id = nextId.lists++;
      lists.put(
        String(id),
        { id, name: `List ${id}`, createdAt: ms, listType: 'Standard', description: 'Seeded' },
        ms,
      );
      return String(id);
    }
    const id = nextId.campaigns++;
    campaigns.put(
      String(id),
      {
        id,
        name: `Campaign ${id}`,
        createdAt: ms,
        updatedAt: ms,
        createdByUserId: 'owner@example.com',
        updatedByUserId: 'owner@example.com',
        templateId: 9000 + id,
        messageMedium: 'Email',
        campaignState: 'Draft',
        type: 'Blast',
        listIds: [],
        suppressionListIds: [],
        labels: [],
      },
      ms,
    );
    return String(id);
  };
  const storeOf = (object: string): RecordStore<Campaign> | RecordStore<List> =>
    object === 'lists' ? lists : campaigns;

  return asConformanceFake(fake, {
    seed: (object, times) => times.map((ms) => seedOne(object, ms)),
    touch(object, id, modifiedMs, options) {
      const row = storeOf(object).get(id);
      if (!row) throw new Error(`no ${object} ${id}`);
      Object.assign(row, { modifiedMs, visibleFromMs: options?.visibleFromMs });
      // A list keeps no modification time: an edit shows only in what it says of itself.
      if (object === 'lists')
        (row.record as List).description = `Edited ${new Date(modifiedMs).toISOString()}`;
      else Object.assign(row.record, { updatedAt: modifiedMs, updatedByUserId: 'editor@example.com' });
    },
    remove: (object, id, atMs) => void storeOf(object).remove(id, atMs),
    stored: (object, id) => storeOf(object).get(id)?.record,
  });
}

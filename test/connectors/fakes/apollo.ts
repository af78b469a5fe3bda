import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  asConformanceFake,
  FakeHttpError,
  FakeProvider,
  RecordStore,
  type StoredRecord,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for Apollo.io's REST API (https://docs.apollo.io/reference), written from its
 * reference (search for contacts, search for accounts, create and update a contact or an account,
 * rate limits https://docs.apollo.io/reference/rate-limits, authentication):
 *
 * - Under `/api/v1` of https://api.apollo.io (the fake's `url` is the origin), the API key in
 *   `X-Api-Key`.
 * - Reads: `POST /api/v1/contacts/search`, `POST /api/v1/accounts/search` with a JSON body:
 *   `page` (from 1), `per_page` (default 10, at most 100), `sort_by_field` (contacts:
 *   `contact_last_activity_date`, `contact_email_last_opened_at`, `contact_email_last_clicked_at`,
 *   `contact_created_at`, `contact_updated_at`; accounts: `account_last_activity_date`,
 *   `account_created_at`, `account_updated_at`), `sort_ascending` (default false), `q_keywords`.
 *   No filter by modification time: a reader sorts by `*_updated_at` and stops where it passes its
 *   window. The answer: `{contacts|accounts: [...], pagination: {page, per_page, total_entries,
 *   total_pages}, breadcrumbs}`; no more than 50,000 records (500 pages of 100) can be paged
 *   through. Positions are counted per request: a record that changes between two pages moves.
 * - Records: `id` (24 hex characters), `created_at`, `updated_at` ISO 8601 with milliseconds and
 *   `+00:00` (`2024-01-15T10:30:00.123+00:00`).
 * - Writes: `POST /api/v1/contacts` and `POST /api/v1/accounts` (the record under `contact` or
 *   `account`), `PUT /api/v1/contacts/{id}`, `PUT /api/v1/accounts/{id}` (only the members sent
 *   change), `GET` one by id. No delete through the API: a contact or account deleted in Apollo is
 *   gone from the searches, listed nowhere.
 * - Errors `{error}` (401 `Invalid access credentials.`, 422 with the reason, 404). Limits per
 *   endpoint per minute (200 here, as on a paid plan: verify for the account's plan); every answer
 *   carries `x-minute-usage` and `x-minute-request-limit`; past the limit, 429.
 */

type ApolloObject = 'contacts' | 'accounts';
type Item = Record<string, unknown> & { id: string };
type Row = StoredRecord<Item>;

const PAGE_MAX = 100;
const PAGE_DEFAULT = 10;
const REACHABLE = 50_000;
const PER_MINUTE = 200;
const singular: Record<ApolloObject, 'contact' | 'account'> = { contacts: 'contact', accounts: 'account' };
const sortFields: Record<ApolloObject, Record<string, string>> = {
  contacts: {
    contact_last_activity_date: 'last_activity_date',
    contact_email_last_opened_at: 'email_last_opened_at',
    contact_email_last_clicked_at: 'email_last_clicked_at',
    contact_created_at: 'created_at',
    contact_updated_at: 'updated_at',
  },
  accounts: {
    account_last_activity_date: 'last_activity_date',
    account_created_at: 'created_at',
    account_updated_at: 'updated_at',
  },
};
const writable: Record<ApolloObject, string[]> = {
  contacts: [
    'first_name',
    'last_name',
    'title',
    'email',
    'organization_name',
    'account_id',
    'direct_phone',
    'label_names',
  ],
  accounts: ['name', 'domain', 'phone', 'raw_address', 'label_names'],
};

const apolloTime = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00');

export async function startFakeApollo(): Promise<ConformanceFake> {
  const stores: Record<ApolloObject, RecordStore<Item>> = {
    contacts: new RecordStore(),
    accounts: new RecordStore(),
  };
  /** The version a search shows until a late edit becomes visible. */
  const shown: Record<ApolloObject, Map<string, { record: Item; modifiedMs: number }>> = {
    contacts: new Map(),
    accounts: new Map(),
  };
  const calls = new Map<string, number[]>();
  let serial = 0x5f00_0000;

  const fake = new FakeProvider({
    credentialOf: (ctx) => ctx.get('x-api-key') || undefined,
    errorBody: (error) => ({
      error:
        error.status === 401
          ? 'Invalid access credentials.'
          : error.status === 429
            ? 'The maximum number of api calls allowed for this endpoint per minute has been reached. Please try again later.'
            : error.message,
    }),
    rateLimitHeaders: () => ({
      'x-minute-usage': String(PER_MINUTE),
      'x-minute-request-limit': String(PER_MINUTE),
    }),
  });
  const now = () => fake.now();
  const router = fake.router;

  // Each endpoint's per-minute budget, counted on real time.
  router.use(async (ctx, next) => {
    const endpoint = `${ctx.method} ${ctx.path.replace(/\/[0-9a-f]{24}$/, '/:id')}`;
    const at = Date.now();
    const log = calls.get(endpoint) ?? [];
    while (log.length && log[0] <= at - 60_000) log.shift();
    log.push(at);
    calls.set(endpoint, log);
    ctx.set('x-minute-usage', String(log.length));
    ctx.set('x-minute-request-limit', String(PER_MINUTE));
    if (log.length > PER_MINUTE) throw new FakeHttpError(429, 'rate limited');
    await next();
  });

  const newId = () => (serial++).toString(16).padStart(8, '0') + 'a1b2c3d4e5f6a7b8';

  const create = (object: ApolloObject, values: Record<string, unknown>, ms: number): Item => {
    const id = newId();
    const n = serial - 0x5f00_0000;
    const base =
      object === 'contacts'
        ? {
            first_name: `First${n}`,
            last_name: `Last${n}`,
            title: 'Buyer',
            email: `p${n}@example.com`,
            organization_name: `Org ${n}`,
            account_id: null,
            direct_phone: null,
            label_names: [],
            last_activity_date: null,
            email_last_opened_at: null,
            email_last_clicked_at: null,
          }
        : {
            name: `Account ${n}`,
            domain: `a${n}.example.com`,
            phone: null,
            raw_address: null,
            label_names: [],
            last_activity_date: null,
          };
    const record: Item = { id, ...base, ...values, created_at: apolloTime(ms), updated_at: apolloTime(ms) };
    if (object === 'contacts')
      record.name = `${String(record.first_name ?? '')} ${String(record.last_name ?? '')}`.trim();
    stores[object].put(id, record, ms);
    return record;
  };

  const edit = (
    object: ApolloObject,
    row: Row,
    values: Record<string, unknown>,
    ms: number,
    visibleFromMs?: number,
  ) => {
    if (visibleFromMs !== undefined)
      shown[object].set(row.record.id, { record: row.record, modifiedMs: row.modifiedMs });
    else shown[object].delete(row.record.id);
    const record: Item = { ...row.record, ...values, updated_at: apolloTime(ms) };
    if (object === 'contacts')
      record.name = `${String(record.first_name ?? '')} ${String(record.last_name ?? '')}`.trim();
    stores[object].put(row.record.id, record, ms, visibleFromMs);
  };

  const rowOf = (object: ApolloObject, id: string): Row => {
    const row = stores[object].get(id);
    if (!row) throw new FakeHttpError(404, `${singular[object]} not found`);
    return row;
  };

  const valuesOf = (object: ApolloObject, ctx: Context): Record<string, unknown> => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const values: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(body)) {
      if (!writable[object].includes(name)) continue; // Apollo ignores what it does not take.
      if (name === 'label_names' ? !Array.isArray(value) : value !== null && typeof value !== 'string')
        throw new FakeHttpError(422, `${name} is invalid`);
      values[name] = value;
    }
    return values;
  };

  for (const object of ['contacts', 'accounts'] as const) {
    router.post(`/api/v1/${object}/search`, (ctx) => {
      const body = (ctx.request.body ?? {}) as Record<string, unknown>;
      const asked = body.per_page === undefined ? PAGE_DEFAULT : Number(body.per_page);
      const page = body.page === undefined ? 1 : Number(body.page);
      if (!Number.isInteger(asked) || asked < 1) throw new FakeHttpError(422, 'per_page is invalid');
      if (!Number.isInteger(page) || page < 1) throw new FakeHttpError(422, 'page is invalid');
      fake.logListing(ctx, { object, pageSize: asked, maxPageSize: PAGE_MAX });
      const perPage = Math.min(asked, PAGE_MAX);
      const sortBy = body.sort_by_field === undefined ? undefined : String(body.sort_by_field);
      if (sortBy !== undefined && !(sortBy in sortFields[object]))
        throw new FakeHttpError(
          422,
          `sort_by_field must be one of ${Object.keys(sortFields[object]).join(', ')}`,
        );
      const ascending = body.sort_ascending === true || body.sort_ascending === 'true';
      const keywords = typeof body.q_keywords === 'string' ? body.q_keywords.toLowerCase() : undefined;
      const field = sortBy ? sortFields[object][sortBy] : 'created_at';
      const listed = stores[object]
        .live()
        .map((row) => {
          if ((row.visibleFromMs ?? row.modifiedMs) <= now()) return row.record;
          return shown[object].get(row.record.id)?.record;
        })
        .filter((record): record is Item => record !== undefined)
        .filter((record) => !keywords || JSON.stringify(record).toLowerCase().includes(keywords))
        .sort((a, b) => {
          const left = a[field] === null ? '' : String(a[field]);
          const right = b[field] === null ? '' : String(b[field]);
          const order = left < right ? -1 : left > right ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
          return ascending ? order : -order;
        });
      const reachable = listed.slice(0, REACHABLE);
      const items = reachable.slice((page - 1) * perPage, page * perPage);
      ctx.body = {
        breadcrumbs: [],
        [object]: items,
        pagination: {
          page,
          per_page: perPage,
          total_entries: listed.length,
          total_pages: Math.ceil(reachable.length / perPage),
        },
      };
    });

    router.get(`/api/v1/${object}/:id`, (ctx) => {
      ctx.body = { [singular[object]]: rowOf(object, ctx.params.id).record };
    });

    router.post(`/api/v1/${object}`, (ctx) => {
      const values = valuesOf(object, ctx);
      if (object === 'accounts' && !values.name) throw new FakeHttpError(422, 'name is required');
      ctx.body = { [singular[object]]: create(object, values, now()) };
    });

    router.put(`/api/v1/${object}/:id`, (ctx) => {
      const row = rowOf(object, ctx.params.id);
      edit(object, row, valuesOf(object, ctx), now());
      ctx.body = { [singular[object]]: stores[object].get(ctx.params.id)!.record };
    });
  }

  await fake.start();

  return asConformanceFake(fake, {
    seed: (object, times) => times.map((ms) => create(object as ApolloObject, {}, ms).id),
    touch(object, id, modifiedMs, options) {
      const row = stores[object as ApolloObject].get(id);
      if (!row) throw new Error(`no ${object} ${id}`);
      const change =
        object === 'contacts' ? { title: `Title ${modifiedMs}` } : { phone: `+1 555 ${modifiedMs % 10_000}` };
      edit(object as ApolloObject, row, change, modifiedMs, options?.visibleFromMs);
    },
    remove(object, id) {
      // Deleted in Apollo's app: gone from the searches, listed nowhere.
      stores[object as ApolloObject].rows.delete(id);
    },
    stored: (object, id) => stores[object as ApolloObject].get(id)?.record,
  });
}

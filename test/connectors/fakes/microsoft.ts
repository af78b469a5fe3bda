import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  bearerCredential,
  FakeHttpError,
  FakeProvider,
  RecordStore,
  RequestWindow,
} from '../kit/fake-provider.js';
import { addGraphSubscriptionRoutes, GRAPH_USER_ID } from './microsoft-webhooks.js';

/**
 * A local stand-in for Microsoft Graph v1.0's Outlook contacts and calendar events
 * (https://learn.microsoft.com/graph/api/user-list-contacts, .../user-list-events, .../contact-update,
 * .../event-update; https://learn.microsoft.com/graph/query-parameters, /graph/paging,
 * /graph/errors, /graph/throttling and /graph/throttling-limits), answering as they document:
 *
 * - OAuth2 bearer tokens (refreshed at the token endpoint); an expired one answers 401
 *   `InvalidAuthenticationToken`.
 * - `GET /v1.0/me/contacts`, `/v1.0/me/events`: `{"@odata.context", value, "@odata.nextLink"?}`.
 *   `$top` sets the page (default 10, at most 1000); `@odata.nextLink` is the whole next URL (it
 *   carries `$skip`: an offset over the same query), absent on the last page.
 * - `$filter=lastModifiedDateTime ge 2024-01-01T00:00:00Z` (also `gt`, `le`, `lt`, joined by `and`),
 *   times unquoted ISO 8601; `$orderby=lastModifiedDateTime` (`asc` by default, or `desc`). Outlook
 *   refuses (400 `InefficientFilter`) a `$filter` with an `$orderby` unless the `$orderby`
 *   properties also appear in the `$filter`, in the same order. Without `$orderby` the order is
 *   unspecified; this fake lists in creation order.
 * - `$select=givenName,surname` returns those properties, `id` and `@odata.etag` only.
 * - `lastModifiedDateTime`/`createdDateTime` are UTC with seven fractional digits
 *   (`2026-03-09T20:44:33.6438977Z`): finer than a second (this fake keeps milliseconds).
 * - `POST` creates (201 with the item), `PATCH /{id}` changes only the properties sent (200 with the
 *   item), `DELETE /{id}` answers 204. A deleted item is gone from these listings (only the delta
 *   functions report removals; not modelled). An unknown property in a body is refused (400
 *   `RequestBodyRead`), read-only ones too (400 `ErrorInvalidProperty`). An event needs `start` and
 *   `end` (`{dateTime, timeZone}`).
 * - Change notifications (`/v1.0/subscriptions`): see microsoft-webhooks.ts; an item is also
 *   answered at the path a notification names, `/v1.0/Users/{user id}/Contacts/{id}`.
 * - Errors `{error: {code, message, innerError: {date, request-id, client-request-id}}}`; throttling
 *   answers 429 with `Retry-After` (seconds); Outlook allows 10,000 requests in 10 minutes per app
 *   and mailbox.
 */

type Item = Record<string, unknown> & { id: string };

const objects = ['contacts', 'events'] as const;
type GraphObject = (typeof objects)[number];

const TOP_DEFAULT = 10;
const TOP_MAX = 1000;
const WINDOW_MS = 600_000;
const WINDOW_LIMIT = 10_000;

const writable: Record<GraphObject, string[]> = {
  contacts: [
    'givenName',
    'surname',
    'middleName',
    'displayName',
    'nickName',
    'title',
    'jobTitle',
    'companyName',
    'department',
    'officeLocation',
    'businessHomePage',
    'personalNotes',
    'mobilePhone',
    'homePhones',
    'businessPhones',
    'emailAddresses',
    'birthday',
    'categories',
    'businessAddress',
    'homeAddress',
  ],
  events: [
    'subject',
    'body',
    'start',
    'end',
    'location',
    'attendees',
    'isAllDay',
    'importance',
    'sensitivity',
    'showAs',
    'categories',
    'isReminderOn',
    'reminderMinutesBeforeStart',
  ],
};
const readOnly = [
  'id',
  'createdDateTime',
  'lastModifiedDateTime',
  'changeKey',
  'parentFolderId',
  'bodyPreview',
];
const typeName: Record<GraphObject, string> = { contacts: 'contact', events: 'event' };

/** Seven fractional digits, as Exchange writes them (the fake keeps milliseconds). */
const graphTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$10000Z');

function graphError(status: number, code: string, message: string, headers: Record<string, string> = {}) {
  return new FakeHttpError(status, message, code, headers);
}

type Clause = { field: string; op: 'ge' | 'gt' | 'le' | 'lt'; ms: number };

/** `lastModifiedDateTime ge 2024-01-01T00:00:00Z and ...` → clauses; anything else is refused. */
function parseFilter(text: string): Clause[] {
  return text.split(/\s+and\s+/i).map((part) => {
    const match = /^\s*(lastModifiedDateTime|createdDateTime)\s+(ge|gt|le|lt)\s+(\S+)\s*$/i.exec(part);
    if (!match) throw graphError(400, 'BadRequest', `Invalid filter clause: '${part.trim()}'.`);
    const ms = Date.parse(match[3]);
    if (!/^\d{4}-\d{2}-\d{2}T[\d:.]+(Z|[+-]\d{2}:\d{2})$/i.test(match[3]) || Number.isNaN(ms))
      throw graphError(
        400,
        'BadRequest',
        `The DateTimeOffset text '${match[3]}' should be in ISO 8601 format.`,
      );
    return { field: match[1], op: match[2].toLowerCase() as Clause['op'], ms };
  });
}

export async function startFakeMicrosoft(): Promise<ConformanceFake> {
  const stores: Record<GraphObject, RecordStore<Item>> = {
    contacts: new RecordStore(),
    events: new RecordStore(),
  };
  const budget = new RequestWindow(WINDOW_LIMIT, WINDOW_MS);

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => ({
      error: {
        code:
          error.status === 401
            ? 'InvalidAuthenticationToken'
            : error.status === 429
              ? 'ApplicationThrottled'
              : error.status >= 500
                ? 'ServiceNotAvailable'
                : (error.code ?? (error.status === 404 ? 'ErrorItemNotFound' : 'BadRequest')),
        message:
          error.status === 401
            ? 'Access token has expired or is not yet valid.'
            : error.status === 429
              ? 'Application is over its MailboxConcurrency limit.'
              : error.message,
        innerError: {
          date: new Date().toISOString().slice(0, 19),
          'request-id': randomBytes(16).toString('hex'),
          'client-request-id': randomBytes(16).toString('hex'),
        },
      },
    }),
    rateLimitHeaders: () => ({ 'Retry-After': '1' }),
    rateLimitCode: 'ApplicationThrottled',
  });
  const now = () => fake.now();
  const router = fake.router;

  // Outlook's per-app-and-mailbox budget, counted on the fake's own (real) time.
  router.use(async (ctx, next) => {
    const taken = budget.take();
    if (!taken.allowed)
      throw graphError(429, 'ApplicationThrottled', 'Too many requests.', {
        'Retry-After': String(taken.retryAfterSeconds),
      });
    await next();
  });

  const origin = (ctx: Context) => `${ctx.protocol}://${ctx.host}`;
  const objectOf = (ctx: Context): GraphObject => {
    const object = ctx.params.object as GraphObject;
    if (!objects.includes(object))
      throw graphError(400, 'BadRequest', `Resource not found for the segment '${ctx.params.object}'.`);
    return object;
  };
  const rowOf = (object: GraphObject, id: string) => {
    const row = stores[object].get(id);
    if (!row) throw graphError(404, 'ErrorItemNotFound', 'The specified object was not found in the store.');
    return row;
  };
  const etag = (item: Item) => `W/"${Buffer.from(String(item.changeKey)).toString('base64')}"`;
  const present = (item: Item, select?: string[]) =>
    select
      ? {
          '@odata.etag': etag(item),
          id: item.id,
          ...Object.fromEntries(select.filter((name) => name in item).map((name) => [name, item[name]])),
        }
      : { '@odata.etag': etag(item), ...item };

  router.get('/v1.0/me/:object', (ctx) => {
    const object = objectOf(ctx);
    const topText = ctx.query.$top;
    const top = topText === undefined ? TOP_DEFAULT : Number(topText);
    if (!Number.isInteger(top) || top < 1 || top > TOP_MAX)
      throw graphError(
        400,
        'ErrorInvalidParameter',
        `The value '${String(topText)}' of $top is out of range (1 to ${TOP_MAX}).`,
      );
    const skip = ctx.query.$skip === undefined ? 0 : Number(ctx.query.$skip);
    if (!Number.isInteger(skip) || skip < 0) throw graphError(400, 'BadRequest', 'Invalid $skip.');
    fake.logListing(ctx, { object, pageSize: top, maxPageSize: TOP_MAX });

    const clauses = ctx.query.$filter === undefined ? [] : parseFilter(String(ctx.query.$filter));
    const orderText = ctx.query.$orderby === undefined ? undefined : String(ctx.query.$orderby).trim();
    let order: { field: string; desc: boolean } | undefined;
    if (orderText) {
      const match = /^(lastModifiedDateTime|createdDateTime)(?:\s+(asc|desc))?$/i.exec(orderText);
      if (!match) throw graphError(400, 'BadRequest', `Invalid $orderby: '${orderText}'.`);
      order = { field: match[1], desc: match[2]?.toLowerCase() === 'desc' };
      if (clauses.length && clauses[0].field !== order.field)
        throw graphError(
          400,
          'InefficientFilter',
          'The restriction or sort order is too complex for this operation.',
        );
    }
    const select =
      ctx.query.$select === undefined ? undefined : String(ctx.query.$select).split(',').filter(Boolean);
    const timeOf = (row: { modifiedMs: number; record: Item }, field: string) =>
      field === 'lastModifiedDateTime' ? row.modifiedMs : Date.parse(String(row.record.createdDateTime));
    const found = stores[object]
      .live()
      .filter((row) => (row.visibleFromMs ?? row.modifiedMs) <= now())
      .filter((row) =>
        clauses.every(({ field, op, ms }) => {
          const value = timeOf(row, field);
          return op === 'ge'
            ? value >= ms
            : op === 'gt'
              ? value > ms
              : op === 'le'
                ? value <= ms
                : value < ms;
        }),
      );
    if (order) {
      const { field, desc } = order;
      found.sort((a, b) => (timeOf(a, field) - timeOf(b, field)) * (desc ? -1 : 1));
    }
    const page = found.slice(skip, skip + top);
    const body: Record<string, unknown> = {
      '@odata.context': `${origin(ctx)}/v1.0/$metadata#users('me')/${object}`,
      value: page.map((row) => present(row.record, select)),
    };
    if (found.length > skip + top) {
      const query = new URLSearchParams();
      for (const [name, value] of Object.entries(ctx.query))
        if (name !== '$skip') query.set(name, String(value));
      query.set('$skip', String(skip + top));
      body['@odata.nextLink'] = `${origin(ctx)}/v1.0/me/${object}?${query.toString()}`;
    }
    ctx.body = body;
  });

  router.get('/v1.0/me/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    ctx.body = present(rowOf(object, ctx.params.id).record);
  });

  // The path a change notification names (`Users/{user id}/Contacts/{id}`): the same item.
  router.get('/v1.0/users/:user/:object/:id', (ctx) => {
    if (ctx.params.user !== GRAPH_USER_ID && ctx.params.user !== 'me')
      throw graphError(404, 'ErrorInvalidUser', `The requested user '${ctx.params.user}' is invalid.`);
    ctx.params.object = ctx.params.object.toLowerCase();
    const object = objectOf(ctx);
    ctx.body = present(rowOf(object, ctx.params.id).record);
  });

  addGraphSubscriptionRoutes(router, now);

  const bodyOf = (ctx: Context, object: GraphObject): Record<string, unknown> => {
    const body = ctx.request.body;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw graphError(400, 'RequestBodyRead', 'The request body must be a JSON object.');
    for (const name of Object.keys(body)) {
      if (name.startsWith('@odata.')) continue;
      if (readOnly.includes(name))
        throw graphError(
          400,
          'ErrorInvalidProperty',
          `The property '${name}' is read-only and cannot be set.`,
        );
      if (!writable[object].includes(name))
        throw graphError(
          400,
          'RequestBodyRead',
          `The property '${name}' does not exist on type 'microsoft.graph.${typeName[object]}'. Make sure to only use property names that are defined by the type or mark the type as open type.`,
        );
    }
    return Object.fromEntries(Object.entries(body).filter(([name]) => !name.startsWith('@odata.')));
  };

  const stamp = (item: Item, ms: number) => {
    item.lastModifiedDateTime = graphTime(ms);
    item.changeKey = randomBytes(12).toString('base64');
  };
  const create = (object: GraphObject, values: Record<string, unknown>, ms: number): Item => {
    const n = stores[object].nextId();
    const id = `AAMkAGY0YzAwY2ViLWQy${object === 'contacts' ? 'Q' : 'R'}BGAAAAAABeMJSl${String(n).padStart(8, '0')}AAA=`;
    const base =
      object === 'contacts'
        ? {
            givenName: null,
            surname: null,
            displayName: '',
            jobTitle: null,
            companyName: null,
            emailAddresses: [],
          }
        : { subject: null, bodyPreview: '', isAllDay: false, categories: [], isReminderOn: true };
    const item: Item = {
      id,
      createdDateTime: graphTime(ms),
      lastModifiedDateTime: graphTime(ms),
      changeKey: '',
      categories: [],
      ...(object === 'contacts' && { parentFolderId: 'AAMkAGY0YzAwY2ViLWQyODktContacts' }),
      ...base,
      ...values,
    };
    if (object === 'contacts' && !values.displayName)
      item.displayName = [item.givenName, item.surname].filter(Boolean).join(' ');
    stamp(item, ms);
    stores[object].put(id, item, ms);
    return item;
  };

  router.post('/v1.0/me/:object', (ctx) => {
    const object = objectOf(ctx);
    const values = bodyOf(ctx, object);
    if (object === 'events' && (!values.start || !values.end))
      throw graphError(
        400,
        'ErrorInvalidRequest',
        'Your request can\u2019t be completed. An event needs a start and an end.',
      );
    ctx.status = 201;
    ctx.body = present(create(object, values, now()));
  });

  router.patch('/v1.0/me/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = rowOf(object, ctx.params.id);
    Object.assign(row.record, bodyOf(ctx, object));
    stamp(row.record, now());
    row.modifiedMs = now();
    row.visibleFromMs = undefined;
    ctx.body = present(row.record);
  });

  router.delete('/v1.0/me/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    rowOf(object, ctx.params.id);
    stores[object].rows.delete(ctx.params.id);
    ctx.status = 204;
  });

  await fake.start();

  const seedValues = (object: GraphObject, n: number): Record<string, unknown> =>
    object === 'contacts'
      ? {
          givenName: `First${n}`,
          surname: `Last${n}`,
          jobTitle: 'Buyer',
          companyName: `Org ${n}`,
          emailAddresses: [{ name: `First${n} Last${n}`, address: `c${n}@example.com` }],
        }
      : {
          subject: `Meeting ${n}`,
          start: { dateTime: '2026-09-01T09:00:00.0000000', timeZone: 'UTC' },
          end: { dateTime: '2026-09-01T10:00:00.0000000', timeZone: 'UTC' },
          location: { displayName: `Room ${n}` },
        };

  return {
    url: fake.url,
    tokenUrl: fake.tokenUrl,
    get credential() {
      return fake.credential;
    },
    rotateCredential: () => fake.rotateCredential(),
    refuseRefresh: () => fake.refuseRefresh(),
    requests: fake.requests,
    setClock: (clock) => fake.setClock(clock),
    seed: (object, times) =>
      times.map(
        (ms, index) => create(object as GraphObject, seedValues(object as GraphObject, index + 1), ms).id,
      ),
    touch(object, id, modifiedMs, options) {
      const row = rowOf(object as GraphObject, id);
      stamp(row.record, modifiedMs);
      row.modifiedMs = modifiedMs;
      row.visibleFromMs = options?.visibleFromMs;
    },
    remove(object, id) {
      // Deleted in Outlook or through the API: gone from the listings.
      stores[object as GraphObject].rows.delete(id);
    },
    stored: (object, id) => stores[object as GraphObject].get(id)?.record,
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    stop: () => fake.stop(),
  };
}

import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  asConformanceFake,
  bearerCredential,
  FakeHttpError,
  FakeProvider,
  RecordStore,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for Dixa's API v1 (https://docs.dixa.io/openapi/dixa-api/v1/), written from its
 * reference (end users, agents; API standards & rules: bearer tokens, rate limits, pagination):
 *
 * - An API token as `Authorization: Bearer <token>`; JSON everywhere, errors as `{message}`.
 * - 10 requests a second per token with bursts of 4, 864,000 a day: past that a 429.
 * - `GET /v1/endusers` and `GET /v1/agents` list every end user or agent, `{data: [...], meta:
 *   {next?, previous?}}`, `pageLimit` (at most 100 (verify): the reference names no maximum) and an
 *   opaque base64 `pageKey`; `meta.next` is the next page's path and query
 *   (`/v1/endusers?pageKey=...`), absent on the last page. Filters `email`, `phone`, `externalId`
 *   only: nothing filters by time, and a record carries `createdAt` (ISO) but no modification time.
 * - `POST /v1/endusers` (201), `PATCH /v1/endusers/{userId}` (only the fields sent change), both
 *   answering `{data: <end user>}`; likewise `/v1/agents[/{agentId}]`, which an agent needs an
 *   `email` and a `displayName` for. `DELETE /v1/agents/{agentId}` (204) removes an agent; an end
 *   user is never deleted through the API (only anonymized). A removed agent or end user is listed
 *   nowhere.
 */

type Person = Record<string, unknown> & { id: string; createdAt: string };
type DixaObject = 'endusers' | 'agents';

const PAGE_MAX = 100;
const PAGE_DEFAULT = 50;
const PER_SECOND = 10;
const BURST = 4;
const writable: Record<DixaObject, string[]> = {
  endusers: [
    'displayName',
    'email',
    'phoneNumber',
    'additionalEmails',
    'additionalPhoneNumbers',
    'firstName',
    'lastName',
    'middleNames',
    'avatarUrl',
    'externalId',
  ],
  agents: [
    'displayName',
    'email',
    'phoneNumber',
    'additionalEmails',
    'additionalPhoneNumbers',
    'firstName',
    'lastName',
    'middleNames',
    'avatarUrl',
  ],
};

export async function startFakeDixa(): Promise<ConformanceFake> {
  const stores: Record<DixaObject, RecordStore<Person>> = {
    endusers: new RecordStore(),
    agents: new RecordStore(),
  };
  // A token bucket on the fake's own (real) clock: 10 a second, bursts of 4 beyond.
  let tokens = PER_SECOND + BURST;
  let filledAt = Date.now();

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => ({
      message:
        error.status === 401 ? 'Unauthorized' : error.status === 429 ? 'Too Many Requests' : error.message,
    }),
  });
  const now = () => fake.now();
  const router = fake.router;

  router.use(async (_ctx, next) => {
    const at = Date.now();
    tokens = Math.min(PER_SECOND + BURST, tokens + ((at - filledAt) / 1000) * PER_SECOND);
    filledAt = at;
    if (tokens < 1) throw new FakeHttpError(429, 'Too Many Requests', undefined, { 'Retry-After': '1' });
    tokens -= 1;
    await next();
  });

  const objectOf = (ctx: Context): DixaObject => {
    const object = ctx.params.object;
    if (object !== 'endusers' && object !== 'agents') throw new FakeHttpError(404, `Not found: ${ctx.path}`);
    return object;
  };

  router.get('/v1/:object', (ctx) => {
    const object = objectOf(ctx);
    const limitText = ctx.query.pageLimit;
    let pageLimit = limitText === undefined ? PAGE_DEFAULT : Number(limitText);
    let offset = 0;
    const filters: Record<string, string> = {};
    for (const name of ['email', 'phone', 'externalId'])
      if (typeof ctx.query[name] === 'string') filters[name] = ctx.query[name] as string;
    if (ctx.query.pageKey !== undefined) {
      // The key carries the listing's own parameters; a pageLimit beside it changes the page size.
      try {
        const key = JSON.parse(Buffer.from(String(ctx.query.pageKey), 'base64').toString('utf8')) as {
          offset: number;
          limit: number;
          filters: Record<string, string>;
        };
        offset = key.offset;
        if (limitText === undefined) pageLimit = key.limit;
        Object.assign(filters, key.filters);
      } catch {
        throw new FakeHttpError(400, 'Invalid pageKey');
      }
    }
    if (!Number.isInteger(pageLimit) || pageLimit < 1 || pageLimit > PAGE_MAX)
      throw new FakeHttpError(400, `pageLimit must be between 1 and ${PAGE_MAX}`);
    fake.logListing(ctx, { object, pageSize: pageLimit, maxPageSize: PAGE_MAX });
    const rows = stores[object]
      .live()
      .filter((row) => (row.visibleFromMs ?? row.modifiedMs) <= now())
      .map((row) => row.record)
      .filter(
        (record) =>
          (!filters.email || record.email === filters.email) &&
          (!filters.phone || record.phoneNumber === filters.phone) &&
          (!filters.externalId || record.externalId === filters.externalId),
      );
    const page = rows.slice(offset, offset + pageLimit);
    const keyOf = (at: number) =>
      Buffer.from(JSON.stringify({ offset: at, limit: pageLimit, filters })).toString('base64');
    ctx.body = {
      data: page,
      meta: {
        ...(offset + pageLimit < rows.length && {
          next: `/v1/${object}?pageKey=${encodeURIComponent(keyOf(offset + pageLimit))}`,
        }),
        ...(offset > 0 && {
          previous: `/v1/${object}?pageKey=${encodeURIComponent(keyOf(Math.max(0, offset - pageLimit)))}`,
        }),
      },
    };
  });

  const rowOf = (object: DixaObject, id: string) => {
    const row = stores[object].get(id);
    if (!row) throw new FakeHttpError(404, `${object === 'agents' ? 'Agent' : 'End user'} ${id} not found`);
    return row;
  };

  router.get('/v1/:object/:id', (ctx) => {
    ctx.body = { data: rowOf(objectOf(ctx), ctx.params.id).record };
  });

  const valuesOf = (ctx: Context, object: DixaObject): Record<string, unknown> => {
    const body = ctx.request.body;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new FakeHttpError(400, 'Invalid JSON body');
    for (const name of Object.keys(body))
      if (!writable[object].includes(name)) throw new FakeHttpError(400, `Unknown field '${name}'`);
    return body as Record<string, unknown>;
  };

  const create = (object: DixaObject, values: Record<string, unknown>, ms: number): Person => {
    const id = randomUUID();
    const record: Person = {
      id,
      createdAt: new Date(ms).toISOString(),
      displayName: null,
      email: null,
      phoneNumber: null,
      additionalEmails: [],
      additionalPhoneNumbers: [],
      firstName: null,
      lastName: null,
      middleNames: [],
      avatarUrl: null,
      ...(object === 'endusers' ? { externalId: null, customAttributes: [] } : { roles: ['Agent'] }),
      ...values,
    };
    stores[object].put(id, record, ms);
    return record;
  };

  router.post('/v1/:object', (ctx) => {
    const object = objectOf(ctx);
    const values = valuesOf(ctx, object);
    if (object === 'agents' && (typeof values.email !== 'string' || typeof values.displayName !== 'string'))
      throw new FakeHttpError(400, 'An agent needs an email and a displayName');
    ctx.status = 201;
    ctx.body = { data: create(object, values, now()) };
  });

  router.patch('/v1/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = rowOf(object, ctx.params.id);
    Object.assign(row.record, valuesOf(ctx, object));
    row.modifiedMs = now();
    ctx.body = { data: row.record };
  });

  router.delete('/v1/agents/:id', (ctx) => {
    rowOf('agents', ctx.params.id);
    stores.agents.remove(ctx.params.id, now());
    ctx.status = 204;
  });

  await fake.start();

  const storeOf = (object: string) => stores[object as DixaObject];
  return asConformanceFake(fake, {
    seed: (object, times) =>
      times.map((ms) => {
        const n = storeOf(object).nextId();
        return create(
          object as DixaObject,
          {
            displayName: `Person ${n}`,
            email: `person${n}@example.com`,
            firstName: `First${n}`,
            lastName: `Last${n}`,
          },
          ms,
        ).id;
      }),
    touch(object, id, modifiedMs, options) {
      const row = storeOf(object).get(id);
      if (!row) throw new Error(`no ${object} ${id}`);
      // Nothing in a record says when it changed: an edit shows only in the values it changes.
      Object.assign(row, { modifiedMs, visibleFromMs: options?.visibleFromMs });
      row.record.lastName = `Edited ${new Date(modifiedMs).toISOString()}`;
    },
    remove: (object, id, atMs) => void storeOf(object).remove(id, atMs),
    stored: (object, id) => storeOf(object).get(id)?.record,
  });
}

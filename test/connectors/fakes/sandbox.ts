import type { ConformanceFake } from '../kit/conformance.js';
import { FakeHttpError, FakeProvider, RecordStore } from '../kit/fake-provider.js';

/**
 * The sandbox CRM's contacts API (src/sandbox, its routes and list query), as its `people` listing
 * reads it: `GET /api/v1/contacts?limit=&cursor=&fields=` in (updatedAt, id) order, at most 1000 a
 * page, the next cursor at `nextCursor`; `fields` keeps `id` and `updatedAt` besides those named;
 * deleted contacts are listed only with `includeDeleted=true`, which `people` never asks. Writes are
 * `POST /contacts`, `PATCH` and `DELETE /contacts/{id}`; errors are `{message}`.
 */

interface Contact extends Record<string, unknown> {
  id: string;
  updatedAt: string;
}

type Where = { field: string; value: unknown }[];
interface Cursor {
  updatedAt: string;
  id: string;
  where: Where;
}

const iso = (ms: number) => new Date(ms).toISOString();
/** The contact fields the sandbox describes (src/sandbox/schema.ts). */
const FIELDS = [
  'id',
  'firstName',
  'lastName',
  'email',
  'phone',
  'company',
  'jobTitle',
  'lifecycleStage',
  'createdAt',
  'updatedAt',
];

export async function startSandboxFake(): Promise<ConformanceFake> {
  const fake = new FakeProvider({
    prefix: '/api/v1',
    credentialOf: (ctx) => ctx.get('x-api-key') || undefined,
    errorBody: (error) => ({ message: error.message }),
  });
  const contacts = new RecordStore<Contact>();
  /** The version a listing shows before a late change becomes visible. */
  const shown = new Map<string, Contact>();

  const create = (values: Record<string, unknown>, modifiedMs: number): Contact => {
    const id = `ctc_${String(contacts.nextId()).padStart(8, '0')}`;
    const n = id.slice(-4);
    return contacts.put(
      id,
      {
        id,
        firstName: `First${n}`,
        lastName: `Last${n}`,
        email: `person${n}@example.com`,
        phone: null,
        ...values,
        createdAt: iso(modifiedMs),
        updatedAt: iso(modifiedMs),
      },
      modifiedMs,
    );
  };
  const change = (
    id: string,
    values: Record<string, unknown>,
    modifiedMs: number,
    visibleFromMs?: number,
  ) => {
    const row = contacts.get(id);
    if (!row) throw new FakeHttpError(404, `No contacts record has id "${id}".`);
    if (visibleFromMs !== undefined) shown.set(id, row.record);
    else shown.delete(id);
    return contacts.put(
      id,
      { ...row.record, ...values, updatedAt: iso(modifiedMs) },
      modifiedMs,
      visibleFromMs,
    );
  };

  fake.router.get('/contacts', (ctx) => {
    const limit = Number(ctx.query.limit ?? 100);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw new FakeHttpError(400, 'limit: an integer from 1 to 1000.');
    fake.logListing(ctx, { object: 'people', pageSize: limit, maxPageSize: 1000 });
    const now = fake.now();
    const listed = contacts
      .live()
      .map((row) => ((row.visibleFromMs ?? row.modifiedMs) <= now ? row.record : shown.get(row.record.id)))
      .filter((record): record is Contact => record !== undefined)
      .sort((a, b) => a.updatedAt.localeCompare(b.updatedAt) || a.id.localeCompare(b.id));
    // A cursor carries the filters of the listing it continues, as the sandbox's does.
    const cursor =
      typeof ctx.query.cursor === 'string'
        ? (JSON.parse(Buffer.from(ctx.query.cursor, 'base64url').toString()) as Cursor)
        : undefined;
    // A search: `where`, a JSON list of {field, value} every record returned equals.
    const where =
      cursor?.where ?? (typeof ctx.query.where === 'string' ? (JSON.parse(ctx.query.where) as Where) : []);
    const fields = typeof ctx.query.fields === 'string' ? ctx.query.fields.split(',') : undefined;
    for (const field of [...where.map((clause) => clause.field), ...(fields ?? [])])
      if (!FIELDS.includes(field)) throw new FakeHttpError(400, `Unknown field "${field}".`);
    const rest = listed.filter(
      (record) =>
        where.every(({ field, value }) => (record[field] ?? null) === value) &&
        (!cursor ||
          record.updatedAt > cursor.updatedAt ||
          (record.updatedAt === cursor.updatedAt && record.id > cursor.id)),
    );
    const page = rest.slice(0, limit);
    const last = page[page.length - 1];
    ctx.body = {
      results: page.map((record) =>
        fields
          ? {
              id: record.id,
              updatedAt: record.updatedAt,
              ...Object.fromEntries(fields.map((f) => [f, record[f] ?? null])),
            }
          : record,
      ),
      nextCursor:
        rest.length > limit
          ? Buffer.from(JSON.stringify({ updatedAt: last.updatedAt, id: last.id, where })).toString(
              'base64url',
            )
          : null,
    };
  });
  fake.router.get('/contacts/:id', (ctx) => {
    const row = contacts.get(ctx.params.id);
    if (!row) throw new FakeHttpError(404, `No contacts record has id "${ctx.params.id}".`);
    ctx.body = row.record;
  });
  fake.router.post('/contacts', (ctx) => {
    ctx.status = 201;
    ctx.body = create(ctx.request.body as Record<string, unknown>, fake.now());
  });
  fake.router.patch('/contacts/:id', (ctx) => {
    ctx.body = change(ctx.params.id, ctx.request.body as Record<string, unknown>, fake.now());
  });
  fake.router.delete('/contacts/:id', (ctx) => {
    if (!contacts.remove(ctx.params.id, fake.now()))
      throw new FakeHttpError(404, `No contacts record has id "${ctx.params.id}".`);
    ctx.status = 204;
  });
  await fake.start();

  return {
    get url() {
      return fake.url;
    },
    get credential() {
      return fake.credential;
    },
    requests: fake.requests,
    rotateCredential: () => fake.rotateCredential(),
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    setClock: (now) => fake.setClock(now),
    seed: (_object, times) => times.map((ms) => create({}, ms).id),
    touch: (_object, id, modifiedMs, options) =>
      void change(id, { lastName: `Touched ${modifiedMs}` }, modifiedMs, options?.visibleFromMs),
    remove: (_object, id, atMs) => void contacts.remove(id, atMs),
    stored: (_object, id) => contacts.get(id)?.record,
    stop: () => fake.stop(),
  };
}

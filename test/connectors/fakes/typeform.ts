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
 * A local stand-in for Typeform's Create and Responses APIs (https://www.typeform.com/developers/,
 * "Create API: Forms" and "Responses API: Retrieve responses, Delete responses", "Get started: Rate
 * limits, Errors"), written from that reference:
 *
 * - OAuth 2 bearer tokens (personal tokens alike). Errors `{code, description, details?}`
 *   (`AUTHENTICATION_FAILED` 401, `FORM_NOT_FOUND` 404, `VALIDATION_ERROR` 400 with
 *   `details: [{code, description, field, in}]`); more than 2 requests a second per account answer
 *   429 with `Retry-After`.
 * - `GET /forms`: `page` (from 1), `page_size` (default 10, at most 200), `search`, `workspace_id`,
 *   `sort_by` (`created_at`, `last_updated_at`), `order_by` (`asc`, `desc`); `{total_items,
 *   page_count, items: [{id, title, last_updated_at, created_at, settings, self, theme, _links}]}`.
 *   No filter by modification time. `POST /forms` (201, the form), `PUT /forms/{id}` replaces the
 *   whole definition (what a PUT leaves out is reset), `DELETE /forms/{id}` (204): gone.
 * - `GET /forms/{form_id}/responses`: `page_size` (default 25, at most 1000), `since` and `until`
 *   (ISO 8601 or Unix seconds; both inclusive, to the second: verify) on `submitted_at`, `after` and
 *   `before` (a response's `token`; not together with `sort`), `sort` (`submitted_at,desc` by
 *   default), `completed`; `{total_items, page_count, items: [{landing_id, token, response_id,
 *   landed_at, submitted_at, metadata, answers, hidden, calculated}]}`, newest first. A response
 *   changes only once: when a partial response is completed, `submitted_at` becomes that moment.
 *   Deleting responses (`DELETE /forms/{form_id}/responses?included_response_ids=…`, 200) removes
 *   them from every listing.
 * - Responses live in their forms. The records the suite seeds as `responses` go to one form, whose
 *   id is `FAKE_RESPONSES_FORM`, the oldest form.
 */

export const FAKE_RESPONSES_FORM = 'rspForm1';

type Form = Record<string, unknown> & { id: string };
type Response = Record<string, unknown> & { token: string; response_id: string };

interface FormRow {
  form: Form;
  modifiedMs: number;
  visibleFromMs?: number;
  createdMs: number;
}
interface ResponseRow {
  formId: string;
  response: Response;
  submittedMs: number;
  visibleFromMs?: number;
}

const FORMS_PAGE_DEFAULT = 10;
const FORMS_PAGE_MAX = 200;
const RESPONSES_PAGE_DEFAULT = 25;
const RESPONSES_PAGE_MAX = 1000;
const PER_SECOND = 2;

const wholeSecond = (ms: number) => Math.floor(ms / 1000) * 1000;
const tfTime = (ms: number) => new Date(wholeSecond(ms)).toISOString().replace('.000Z', 'Z');

function validation(field: string, description: string): FakeHttpError {
  return Object.assign(new FakeHttpError(400, 'Validation error', 'VALIDATION_ERROR'), {
    details: [{ code: 'INVALID_VALUE', description, field, in: 'query' }],
  });
}

/** `since`/`until`: ISO 8601 or Unix seconds, kept to the second. */
function timeArg(ctx: Context, name: string): number | undefined {
  const text = ctx.query[name];
  if (text === undefined || text === '') return undefined;
  const value = String(text);
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value);
  if (Number.isNaN(ms))
    throw validation(name, `${name} must be an ISO 8601 date and time or a Unix timestamp`);
  return wholeSecond(ms);
}

function sizeArg(ctx: Context, fallback: number, max: number): number {
  const size = ctx.query.page_size === undefined ? fallback : Number(ctx.query.page_size);
  if (!Number.isInteger(size) || size < 1 || size > max)
    throw validation('page_size', `page_size must be between 1 and ${max}`);
  return size;
}

export async function startFakeTypeform(): Promise<ConformanceFake> {
  const forms = new Map<string, FormRow>();
  const responses = new Map<string, ResponseRow>();
  const budget = new RequestWindow(PER_SECOND, 1000, false);
  let counter = 0;

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => {
      const details = (error as { details?: unknown }).details;
      const code =
        error.status === 401
          ? 'AUTHENTICATION_FAILED'
          : error.status === 429
            ? 'RATE_LIMIT_EXCEEDED'
            : error.status >= 500
              ? 'INTERNAL_SERVER_ERROR'
              : (error.code ?? (error.status === 404 ? 'NOT_FOUND' : 'VALIDATION_ERROR'));
      return {
        code,
        description:
          error.status === 401
            ? 'Authentication credentials not found on the Request Headers'
            : error.message,
        ...(details !== undefined && { details }),
      };
    },
    rateLimitHeaders: () => ({ 'Retry-After': '1' }),
  });
  const router = fake.router;
  const now = () => fake.now();

  // Two requests a second per account, counted on the fake's own (real) time.
  router.use(
    budget.refusing((headers) => new FakeHttpError(429, 'Too many requests', 'RATE_LIMIT_EXCEEDED', headers)),
  );

  const origin = (ctx: Context) => `${ctx.protocol}://${ctx.host}`;
  const presentForm = (ctx: Context, row: FormRow) => ({
    ...row.form,
    self: { href: `${origin(ctx)}/forms/${row.form.id}` },
    _links: { display: `https://acme.typeform.com/to/${row.form.id}` },
  });
  const formOf = (id: string): FormRow => {
    const row = forms.get(id);
    if (!row) throw new FakeHttpError(404, 'Non existing form with uid ' + id, 'FORM_NOT_FOUND');
    return row;
  };
  const visible = (row: { visibleFromMs?: number }, ms: number) => (row.visibleFromMs ?? ms) <= now();

  router.get('/forms', (ctx) => {
    const size = sizeArg(ctx, FORMS_PAGE_DEFAULT, FORMS_PAGE_MAX);
    fake.logListing(ctx, { object: 'forms', pageSize: size, maxPageSize: FORMS_PAGE_MAX });
    const page = ctx.query.page === undefined ? 1 : Number(ctx.query.page);
    if (!Number.isInteger(page) || page < 1) throw validation('page', 'page must be a positive integer');
    const sortBy = ctx.query.sort_by === undefined ? 'created_at' : String(ctx.query.sort_by);
    if (!['created_at', 'last_updated_at'].includes(sortBy))
      throw validation('sort_by', 'sort_by must be created_at or last_updated_at');
    const sign = String(ctx.query.order_by ?? 'desc') === 'asc' ? 1 : -1;
    const search = ctx.query.search === undefined ? undefined : String(ctx.query.search).toLowerCase();
    const rows = [...forms.values()]
      .filter((row) => visible(row, row.modifiedMs))
      .filter((row) => !search || String(row.form.title).toLowerCase().includes(search))
      .sort((a, b) => {
        const x = sortBy === 'created_at' ? a.createdMs : a.modifiedMs;
        const y = sortBy === 'created_at' ? b.createdMs : b.modifiedMs;
        return (x - y || (a.form.id < b.form.id ? -1 : 1)) * sign;
      });
    ctx.body = {
      total_items: rows.length,
      page_count: Math.max(1, Math.ceil(rows.length / size)),
      items: rows.slice((page - 1) * size, page * size).map((row) => presentForm(ctx, row)),
    };
  });

  router.get('/forms/:id', (ctx) => {
    ctx.body = presentForm(ctx, formOf(ctx.params.id));
  });

  const definition = (ctx: Context): Record<string, unknown> => {
    const body = ctx.request.body as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw Object.assign(
        new FakeHttpError(400, 'The payload must be a form definition', 'VALIDATION_ERROR'),
        {
          details: [
            {
              code: 'INVALID_PAYLOAD',
              description: 'The payload must be a form definition',
              field: '',
              in: 'body',
            },
          ],
        },
      );
    if (typeof body.title !== 'string' || !body.title)
      throw Object.assign(new FakeHttpError(400, 'title is required', 'VALIDATION_ERROR'), {
        details: [{ code: 'REQUIRED', description: 'title is required', field: '/title', in: 'body' }],
      });
    for (const name of Object.keys(body))
      if (
        ![
          'title',
          'type',
          'fields',
          'settings',
          'theme',
          'workspace',
          'hidden',
          'welcome_screens',
          'thankyou_screens',
          'logic',
          'variables',
        ].includes(name)
      )
        throw Object.assign(new FakeHttpError(400, `${name} is not a form property`, 'VALIDATION_ERROR'), {
          details: [
            {
              code: 'ADDITIONAL_PROPERTY',
              description: `${name} is not allowed`,
              field: `/${name}`,
              in: 'body',
            },
          ],
        });
    return body;
  };

  const blankForm = (id: string, values: Record<string, unknown>, ms: number, createdMs = ms): Form => ({
    id,
    type: 'form',
    title: null,
    fields: [],
    hidden: [],
    settings: { language: 'en', progress_bar: 'proportion', is_public: true, is_trial: false },
    theme: { href: 'https://api.typeform.com/themes/qHWOQ7' },
    workspace: { href: 'https://api.typeform.com/workspaces/Aw33bz' },
    ...values,
    created_at: tfTime(createdMs),
    last_updated_at: tfTime(ms),
  });

  const createForm = (values: Record<string, unknown>, ms: number, id?: string): FormRow => {
    counter += 1;
    const formId = id ?? `frm${counter.toString(36).padStart(5, '0')}`;
    const row: FormRow = {
      form: blankForm(formId, values, ms),
      modifiedMs: wholeSecond(ms),
      createdMs: wholeSecond(ms),
    };
    forms.set(formId, row);
    return row;
  };

  router.post('/forms', (ctx) => {
    const row = createForm(definition(ctx), now());
    ctx.status = 201;
    ctx.body = presentForm(ctx, row);
  });

  router.put('/forms/:id', (ctx) => {
    const row = formOf(ctx.params.id);
    // A PUT replaces the definition: what it leaves out is reset.
    row.form = blankForm(row.form.id, definition(ctx), now(), row.createdMs);
    row.modifiedMs = wholeSecond(now());
    row.visibleFromMs = undefined;
    ctx.body = presentForm(ctx, row);
  });

  router.delete('/forms/:id', (ctx) => {
    formOf(ctx.params.id);
    forms.delete(ctx.params.id);
    for (const [token, row] of responses) if (row.formId === ctx.params.id) responses.delete(token);
    ctx.status = 204;
  });

  router.get('/forms/:id/responses', (ctx) => {
    const formId = formOf(ctx.params.id).form.id;
    const size = sizeArg(ctx, RESPONSES_PAGE_DEFAULT, RESPONSES_PAGE_MAX);
    fake.logListing(ctx, { object: 'responses', pageSize: size, maxPageSize: RESPONSES_PAGE_MAX });
    const since = timeArg(ctx, 'since');
    const until = timeArg(ctx, 'until');
    const after = ctx.query.after === undefined ? undefined : String(ctx.query.after);
    const before = ctx.query.before === undefined ? undefined : String(ctx.query.before);
    const sort = ctx.query.sort === undefined ? undefined : String(ctx.query.sort);
    if (sort !== undefined && (after !== undefined || before !== undefined))
      throw validation('sort', 'sort cannot be used together with after or before');
    const [sortField, sortDirection] = (sort ?? 'submitted_at,desc').split(',');
    if (
      !['submitted_at', 'landed_at'].includes(sortField) ||
      !['asc', 'desc'].includes(sortDirection ?? 'desc')
    )
      throw validation('sort', 'sort must be {submitted_at|landed_at},{asc|desc}');
    const completed = ctx.query.completed === undefined ? undefined : ctx.query.completed === 'true';
    type Key = [number, string];
    const keyOf = (row: ResponseRow): Key => [
      sortField === 'landed_at' ? Date.parse(String(row.response.landed_at)) : row.submittedMs,
      row.response.token,
    ];
    const compare = (a: Key, b: Key) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
    const sign = (sortDirection ?? 'desc') === 'asc' ? 1 : -1;
    const rows = [...responses.values()]
      .filter((row) => row.formId === formId && visible(row, row.submittedMs))
      .filter((row) => completed === undefined || completed === (row.response.submitted_at !== null))
      .filter((row) => since === undefined || row.submittedMs >= since)
      .filter((row) => until === undefined || row.submittedMs <= until)
      .sort((a, b) => compare(keyOf(a), keyOf(b)) * sign);
    const anchor = (token: string) => {
      const row = responses.get(token);
      if (!row || row.formId !== formId)
        throw validation(after ? 'after' : 'before', `unknown token ${token}`);
      return keyOf(row);
    };
    let listed = rows;
    // `before`: older than that response (the next page, newest first); `after`: newer.
    if (before !== undefined) {
      const key = anchor(before);
      listed = listed.filter((row) => compare(keyOf(row), key) < 0);
    }
    if (after !== undefined) {
      const key = anchor(after);
      listed = listed.filter((row) => compare(keyOf(row), key) > 0);
    }
    const items = listed.slice(0, size).map((row) => row.response);
    ctx.body = {
      total_items: listed.length,
      page_count: Math.max(1, Math.ceil(listed.length / size)),
      items,
    };
  });

  router.delete('/forms/:id/responses', (ctx) => {
    const formId = formOf(ctx.params.id).form.id;
    const ids = String(ctx.query.included_response_ids ?? '')
      .split(',')
      .filter(Boolean);
    if (!ids.length) throw validation('included_response_ids', 'included_response_ids is required');
    for (const id of ids) {
      const row = responses.get(id);
      if (row?.formId === formId) responses.delete(id);
    }
    ctx.body = {};
  });

  await fake.start();
  createForm(
    {
      title: 'Customer feedback',
      fields: [{ id: 'q1', ref: 'rating', type: 'opinion_scale', title: 'How likely…?' }],
    },
    Date.UTC(2023, 0, 1),
    FAKE_RESPONSES_FORM,
  );

  const submit = (row: ResponseRow, ms: number, visibleFromMs?: number) => {
    row.submittedMs = wholeSecond(ms);
    row.visibleFromMs = visibleFromMs;
    row.response.submitted_at = tfTime(ms);
  };

  return asConformanceFake(fake, {
    seed: (object, times) =>
      times.map((ms) => {
        if (object === 'forms') return createForm({ title: `Survey ${counter + 1}` }, ms).form.id;
        counter += 1;
        const token = `tok${counter.toString(36).padStart(8, '0')}`;
        const row: ResponseRow = {
          formId: FAKE_RESPONSES_FORM,
          submittedMs: wholeSecond(ms),
          response: {
            landing_id: token,
            token,
            response_id: token,
            landed_at: tfTime(ms - 60_000),
            submitted_at: tfTime(ms),
            metadata: {
              user_agent: 'Mozilla/5.0',
              platform: 'other',
              referer: `https://acme.typeform.com/to/${FAKE_RESPONSES_FORM}`,
              network_id: 'net1',
              browser: 'default',
            },
            hidden: {},
            calculated: { score: 0 },
            answers: [
              {
                field: { id: 'q1', type: 'opinion_scale', ref: 'rating' },
                type: 'number',
                number: counter % 11,
              },
            ],
          },
        };
        responses.set(token, row);
        return token;
      }),
    touch(object, id, modifiedMs, options) {
      if (object === 'forms') {
        const row = formOf(id);
        row.modifiedMs = wholeSecond(modifiedMs);
        row.visibleFromMs = options?.visibleFromMs;
        row.form.last_updated_at = tfTime(modifiedMs);
        return;
      }
      // A partial response completed: submitted then.
      const row = responses.get(id);
      if (!row) throw new Error(`no response ${id}`);
      submit(row, modifiedMs, options?.visibleFromMs);
    },
    remove(object, id) {
      if (object === 'forms') forms.delete(id);
      else responses.delete(id);
    },
    stored: (object, id) => (object === 'forms' ? forms.get(id)?.form : responses.get(id)?.response),
  });
}

import type { ProviderRecord, ReadPageInput, ReadPageResult } from '../connector.js';
import type { ConnectorHooks } from '../declarative/connector.js';
import type { HookContext } from '../declarative/context.js';
import { valueAt } from '../declarative/json-pointer.js';
import { providerSince } from '../declarative/read.js';
import { ConnectorInputError } from '../errors.js';
import { decodePageToken, encodePageToken } from '../page-token.js';

/**
 * Typeform's quirks (the rest is `catalog/connectors/typeform.json`):
 * - responses are listed per form (`GET /forms/{form_id}/responses`): a read walks the account's
 *   forms and lists each one's responses, or only the form the connection names (`formId`);
 * - responses come newest first; a page continues with `before=<the last response's token>` and says nothing of
 *   whether more follow but `page_count`, so the walk asks again until a page comes back short;
 * - `PUT /forms/{id}` replaces the whole form, dropping what it does not name: an update sends the
 *   stored form with the written values over it.
 */

/** Where a walk over the forms' responses stands between pages. */
interface ResponsesWalk extends Record<string, unknown> {
  o: string;
  /** Forms still to read, the current one first. */
  q: string[];
  /** The forms listing's next page token; absent once every form is queued. */
  p?: string;
  /** Whether the forms listing has been started. */
  s?: boolean;
  /** The token of the current form's last response read. */
  a?: string;
  since?: number;
  until?: number;
  n?: number;
}

const formsPerPage = 200;

async function queueForms(connector: HookContext, walk: ResponsesWalk): Promise<void> {
  const forms = await connector.readDeclaredPage({
    objectName: 'forms',
    pageSize: formsPerPage,
    ...(walk.p && { pageToken: walk.p }),
  });
  walk.q = forms.records.map((form) => form.id);
  walk.p = forms.done ? undefined : forms.nextPageToken;
  walk.s = true;
}

/** One page of the current form's responses, in the window, and whether the form has more. */
async function formPage(
  connector: HookContext,
  walk: ResponsesWalk,
  form: string,
): Promise<{ records: ProviderRecord[]; more: boolean; last?: string }> {
  const object = connector.object(walk.o);
  const listing = object.read!.list;
  const pageSize = Math.min(walk.n ?? listing.pageSize.max, listing.pageSize.max);
  const since = walk.since === undefined ? undefined : new Date(walk.since);
  const values = {
    ...connector.templateValues(walk.o, object),
    since: providerSince(since, listing.changes),
    until: walk.until === undefined ? undefined : new Date(walk.until),
    pageSize,
    parent: form,
    lastId: walk.a,
  };
  const response = await connector.send(walk.o, connector.request(listing.request, values, true));
  const listed = valueAt(response.body, listing.records);
  const items = Array.isArray(listed) ? listed : [];
  const records = items
    .map((item) => connector.record(object, item, listing))
    .filter((record) => {
      // `until` is inclusive at Typeform: a response submitted at the window's end belongs to the next.
      const time = record.updatedAt ? Date.parse(record.updatedAt) : undefined;
      return time === undefined || walk.until === undefined || time < walk.until;
    });
  const last = items.length ? String(valueAt(items.at(-1), '/token')) : undefined;
  return { records, more: items.length >= pageSize, last };
}

async function readResponses(connector: HookContext, walk: ResponsesWalk): Promise<ReadPageResult> {
  // A connection that names its form (`formId`) reads that form's responses only.
  const named = (
    connector.templateValues(walk.o, connector.object(walk.o)).connection as
      Record<string, unknown> | undefined
  )?.formId;
  if (!walk.s && typeof named === 'string' && named) Object.assign(walk, { q: [named], s: true });
  if (!walk.q.length && (!walk.s || walk.p)) await queueForms(connector, walk);
  const form = walk.q[0];
  if (form === undefined) return { records: [], done: true };
  const page = await formPage(connector, walk, form);
  const next: ResponsesWalk = page.more
    ? { ...walk, a: page.last }
    : { ...walk, q: walk.q.slice(1), a: undefined };
  if (!next.q.length && !next.p) return { records: page.records, done: true };
  return { records: page.records, done: false, nextPageToken: encodePageToken(next) };
}

export const typeformHooks: ConnectorHooks = {
  async readPage(connector, input: ReadPageInput, declared) {
    if (input.objectName !== 'responses') return declared();
    const walk = input.pageToken
      ? decodePageToken<ResponsesWalk>(input.pageToken, connector.provider, input.objectName)
      : {
          o: input.objectName,
          q: [],
          ...(input.pageSize && { n: input.pageSize }),
          ...(input.since && { since: input.since.getTime() }),
          ...(input.until && { until: input.until.getTime() }),
        };
    if (!Array.isArray(walk.q))
      throw new ConnectorInputError(
        'The page token was not issued by this read of Typeform.',
        connector.provider,
      );
    return readResponses(connector, walk);
  },

  async write(connector, input, declared) {
    if (input.objectName !== 'forms' || input.type !== 'update') return declared();
    // PUT replaces the whole form: send the stored form with the written values over it.
    const id = connector.targetRecordId(input);
    const forms = connector.object('forms');
    const current = await connector.send(
      'forms',
      connector.request(forms.read!.get!.request, { ...connector.templateValues('forms', forms), id }),
    );
    // What Typeform sets itself is refused in a PUT body.
    const stored = Object.fromEntries(
      Object.entries((current.body ?? {}) as Record<string, unknown>).filter(
        ([name]) => !['id', 'created_at', 'last_updated_at', 'published_at', '_links', 'self'].includes(name),
      ),
    );
    return connector.writeDeclared({
      ...input,
      recordId: id,
      record: { ...stored, ...connector.writeValues(input) },
    });
  },
};

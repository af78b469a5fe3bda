import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  bearerCredential,
  FakeHttpError,
  FakeProvider,
  RecordStore,
  RequestWindow,
  type StoredRecord,
} from '../kit/fake-provider.js';
import { addGraphSubscriptionRoutes, GRAPH_USER_ID } from './microsoft-webhooks.js';

/**
 * A local stand-in for Microsoft Graph v1.0's Outlook contacts, calendar events and mail messages
 * (https://learn.microsoft.com/graph/api/user-list-contacts, .../user-list-events,
 * .../user-list-messages, .../contact-update, .../event-update, .../message-get,
 * .../user-post-messages, .../message-update, .../message-delete;
 * https://learn.microsoft.com/graph/query-parameters, /graph/paging, /graph/errors, /graph/throttling
 * and /graph/throttling-limits), answering as they document:
 *
 * - OAuth2 bearer tokens (refreshed at the token endpoint); an expired one answers 401
 *   `InvalidAuthenticationToken`.
 * - `GET /v1.0/me/contacts`, `/v1.0/me/events`, `/v1.0/me/messages`: `{"@odata.context", value,
 *   "@odata.nextLink"?}`. `$top` sets the page (default 10, at most 1000); `@odata.nextLink` is the
 *   whole next URL (it carries `$skip`: an offset over the same query), absent on the last page.
 * - `$filter=lastModifiedDateTime ge 2024-01-01T00:00:00Z` (also `gt`, `le`, `lt`, joined by `and`;
 *   messages also on `receivedDateTime` and `sentDateTime`), times unquoted ISO 8601;
 *   `$orderby=lastModifiedDateTime` (`asc` by default, or `desc`; several properties comma
 *   separated). Outlook refuses (400 `InefficientFilter`) a `$filter` with an `$orderby` unless the
 *   `$orderby` properties also appear in the `$filter`, in the same order, before any other. Without
 *   `$orderby` the order is unspecified; this fake lists contacts and events in creation order, and
 *   messages newest received first.
 * - `$select=givenName,surname` returns those properties, `id` and `@odata.etag` only (on one item
 *   too).
 * - Contacts' and events' `lastModifiedDateTime`/`createdDateTime` are UTC with seven fractional
 *   digits (`2026-03-09T20:44:33.6438977Z`): finer than a second (this fake keeps milliseconds).
 *   Messages' times are whole seconds (`2017-07-22T01:53:56Z`), and the fake keeps no finer time:
 *   a `$filter` bound inside a second compares with the second.
 * - Messages: the listing counts in `$skip` every mailbox item it walks, message or not, so the next
 *   link's `$skip` may exceed the messages already returned (the reference: never compute `$skip`,
 *   follow the next link). The mailbox's messages include the Deleted Items folder's.
 * - `POST` creates (201 with the item), `PATCH /{id}` changes only the properties sent (200 with the
 *   item), `DELETE /{id}` answers 204. A deleted item is gone from these listings (only the delta
 *   functions report removals; not modelled). An unknown property in a body is refused (400
 *   `RequestBodyRead`), read-only ones too (400 `ErrorInvalidProperty`). An event needs `start` and
 *   `end` (`{dateTime, timeZone}`).
 * - A message created by `POST` is a draft (`isDraft`, in Drafts); `isDraft` is read-only. A
 *   message's `subject`, `body`, `replyTo` and `internetMessageId` change only while it is a draft
 *   (400 `ErrorInvalidPropertySet` "Message is not draft." otherwise); `isRead`, `categories`,
 *   `flag`, `importance`, recipients... change on any message. Bodies are answered as HTML unless
 *   `Prefer: outlook.body-content-type="text"`; `bodyPreview` is the body's first 255 characters.
 * - Change notifications (`/v1.0/subscriptions`): see microsoft-webhooks.ts; an item is also
 *   answered at the path a notification names, `/v1.0/Users/{user id}/Contacts/{id}`.
 * - Errors `{error: {code, message, innerError: {date, request-id, client-request-id}}}`; throttling
 *   answers 429 with `Retry-After` (seconds); Outlook allows 10,000 requests in 10 minutes per app
 *   and mailbox.
 */

type Item = Record<string, unknown> & { id: string };
type Row = StoredRecord<Item>;

const objects = ['contacts', 'events', 'messages'] as const;
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
  // message-update's table: what a PATCH may send (a POST too).
  messages: [
    'bccRecipients',
    'body',
    'categories',
    'ccRecipients',
    'flag',
    'from',
    'importance',
    'inferenceClassification',
    'internetMessageId',
    'isDeliveryReceiptRequested',
    'isRead',
    'isReadReceiptRequested',
    'replyTo',
    'sender',
    'subject',
    'toRecipients',
  ],
};
/** Set when a message is created, never updated (user-post-messages, example 2). */
const createOnly: Partial<Record<GraphObject, string[]>> = { messages: ['internetMessageHeaders'] };
/** Message properties "Updatable only if isDraft = true" (message-update). */
const draftOnly = ['body', 'subject', 'replyTo', 'internetMessageId'];
const readOnly = [
  'id',
  'createdDateTime',
  'lastModifiedDateTime',
  'changeKey',
  'parentFolderId',
  'bodyPreview',
  'receivedDateTime',
  'sentDateTime',
  'conversationId',
  'conversationIndex',
  'hasAttachments',
  'isDraft',
  'webLink',
  'uniqueBody',
];
const typeName: Record<GraphObject, string> = { contacts: 'contact', events: 'event', messages: 'message' };
/** The time properties `$filter` and `$orderby` take, per object. */
const timeFields: Record<GraphObject, string[]> = {
  contacts: ['lastModifiedDateTime', 'createdDateTime'],
  events: ['lastModifiedDateTime', 'createdDateTime'],
  messages: ['lastModifiedDateTime', 'createdDateTime', 'receivedDateTime', 'sentDateTime'],
};
/** Messages' times are whole seconds; contacts' and events' finer (kept to the millisecond). */
const precisionMs: Record<GraphObject, number> = { contacts: 1, events: 1, messages: 1000 };
/** Enumerations a message's properties take: Graph answers them in lower case. */
const messageValues: Record<string, string[]> = {
  importance: ['low', 'normal', 'high'],
  inferenceClassification: ['focused', 'other'],
};

const MAILBOX = { name: 'Megan Bowen', address: 'MeganB@contoso.onmicrosoft.com' };
const FOLDERS = {
  inbox: 'AAMkAGY0YzAwY2ViLWQyODktInboxAAA=',
  drafts: 'AAMkAGY0YzAwY2ViLWQyODktDraftsAAA=',
  contacts: 'AAMkAGY0YzAwY2ViLWQyODktContacts',
};

/** Seven fractional digits, as Exchange writes contacts' and events' times (the fake keeps milliseconds). */
const graphTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$10000Z');
/** Whole seconds, as Exchange writes messages' times. */
const secondTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const truncate = (object: GraphObject, ms: number) =>
  Math.floor(ms / precisionMs[object]) * precisionMs[object];
const timeText = (object: GraphObject, ms: number) =>
  object === 'messages' ? secondTime(ms) : graphTime(ms);

function graphError(status: number, code: string, message: string, headers: Record<string, string> = {}) {
  return new FakeHttpError(status, message, code, headers);
}

type Clause = { field: string; op: 'ge' | 'gt' | 'le' | 'lt'; ms: number };

/** `lastModifiedDateTime ge 2024-01-01T00:00:00Z and ...` → clauses; anything else is refused. */
function parseFilter(text: string, fields: string[]): Clause[] {
  return text.split(/\s+and\s+/i).map((part) => {
    const match = /^\s*(\w+)\s+(ge|gt|le|lt)\s+(\S+)\s*$/i.exec(part);
    const field = match && fields.find((name) => name.toLowerCase() === match[1].toLowerCase());
    if (!match || !field) throw graphError(400, 'BadRequest', `Invalid filter clause: '${part.trim()}'.`);
    const ms = Date.parse(match[3]);
    if (!/^\d{4}-\d{2}-\d{2}T[\d:.]+(Z|[+-]\d{2}:\d{2})$/i.test(match[3]) || Number.isNaN(ms))
      throw graphError(
        400,
        'BadRequest',
        `The DateTimeOffset text '${match[3]}' should be in ISO 8601 format.`,
      );
    return { field, op: match[2].toLowerCase() as Clause['op'], ms };
  });
}

type Order = { field: string; desc: boolean }[];

/**
 * `receivedDateTime desc, lastModifiedDateTime` → sort keys. With a `$filter`, the ordered
 * properties must be the filter's first ones, in the same order (user-list-messages, "Using filter
 * and orderby in the same query").
 */
function parseOrder(text: string, fields: string[], clauses: Clause[]): Order {
  const order = text.split(',').map((part) => {
    const match = /^\s*(\w+)(?:\s+(asc|desc))?\s*$/i.exec(part);
    const field = match && fields.find((name) => name.toLowerCase() === match[1].toLowerCase());
    if (!match || !field) throw graphError(400, 'BadRequest', `Invalid $orderby: '${text}'.`);
    return { field, desc: match[2]?.toLowerCase() === 'desc' };
  });
  if (clauses.length) {
    const filtered = [...new Set(clauses.map((clause) => clause.field))];
    if (order.some(({ field }, index) => filtered[index] !== field))
      throw graphError(
        400,
        'InefficientFilter',
        'The restriction or sort order is too complex for this operation.',
      );
  }
  return order;
}

/** An `itemBody` as sent: `{contentType: text | html, content}`, stored in lower case. */
function itemBody(value: unknown): { contentType: string; content: string } {
  const body = value as { contentType?: unknown; content?: unknown } | null;
  const contentType = String(body?.contentType ?? 'text').toLowerCase();
  if (!body || typeof body !== 'object' || !['text', 'html'].includes(contentType))
    throw graphError(
      400,
      'RequestBodyRead',
      `Cannot convert the literal '${String(body?.contentType)}' to the expected type 'microsoft.graph.bodyType'.`,
    );
  return { contentType, content: String(body.content ?? '') };
}

const htmlOf = (text: string) =>
  `<html><head>\r\n<meta http-equiv="Content-Type" content="text/html; charset=utf-8">\r\n</head><body>\r\n${text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')}\r\n</body></html>\r\n`;
const textOf = (html: string) =>
  html
    .replace(/<head>[\s\S]*<\/head>/i, '')
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .trim();

/** `[{emailAddress: {address, name?}}]`: Graph fills a missing name (here with the address). */
function recipients(name: string, value: unknown): unknown {
  const list = name === 'from' || name === 'sender' ? [value] : value;
  if (!Array.isArray(list))
    throw graphError(400, 'RequestBodyRead', `The property '${name}' expects a collection of recipients.`);
  const filled = list.map((recipient) => {
    const address = (recipient as { emailAddress?: { address?: unknown; name?: unknown } } | null)
      ?.emailAddress;
    if (!address || typeof address.address !== 'string' || !address.address.includes('@'))
      throw graphError(400, 'ErrorInvalidRecipients', 'At least one recipient is not valid.');
    return { emailAddress: { name: address.name ?? address.address, address: address.address } };
  });
  return name === 'from' || name === 'sender' ? filled[0] : filled;
}

export async function startFakeMicrosoft(): Promise<ConformanceFake> {
  const stores: Record<GraphObject, RecordStore<Item>> = {
    contacts: new RecordStore(),
    events: new RecordStore(),
    messages: new RecordStore(),
  };
  /** Messages the mailbox's walk reaches after an item of another type (counted in `$skip`). */
  const afterOtherItem = new Set<string>();
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
  router.use(
    budget.refusing((headers) => graphError(429, 'ApplicationThrottled', 'Too many requests.', headers)),
  );

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
  const selectOf = (ctx: Context) =>
    ctx.query.$select === undefined ? undefined : String(ctx.query.$select).split(',').filter(Boolean);
  /** The body as asked: HTML unless `Prefer: outlook.body-content-type="text"`. */
  const bodyAsAsked = (ctx: Context, item: Item) => {
    const body = item.body as { contentType: string; content: string } | undefined;
    if (!body) return body;
    const wanted = /outlook\.body-content-type\s*=\s*"?text"?/i.test(ctx.get('prefer')) ? 'text' : 'html';
    if (body.contentType === wanted) return body;
    return { contentType: wanted, content: wanted === 'html' ? htmlOf(body.content) : textOf(body.content) };
  };
  const present = (ctx: Context, object: GraphObject, item: Item, select = selectOf(ctx)) => {
    const shown = object === 'messages' && item.body ? { ...item, body: bodyAsAsked(ctx, item) } : item;
    return select
      ? {
          '@odata.etag': etag(item),
          id: item.id,
          ...Object.fromEntries(select.filter((name) => name in shown).map((name) => [name, shown[name]])),
        }
      : { '@odata.etag': etag(item), ...shown };
  };

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

    const fields = timeFields[object];
    const clauses = ctx.query.$filter === undefined ? [] : parseFilter(String(ctx.query.$filter), fields);
    const orderText = ctx.query.$orderby === undefined ? '' : String(ctx.query.$orderby).trim();
    const order: Order = orderText
      ? parseOrder(orderText, fields, clauses)
      : object === 'messages'
        ? [{ field: 'receivedDateTime', desc: true }]
        : [];
    const select = selectOf(ctx);
    const timeOf = (row: Row, field: string) =>
      field === 'lastModifiedDateTime' ? row.modifiedMs : Date.parse(String(row.record[field]));
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
    found.sort((a, b) => {
      for (const { field, desc } of order) {
        const difference = (timeOf(a, field) - timeOf(b, field)) * (desc ? -1 : 1);
        if (difference) return difference;
      }
      return 0;
    });
    // What the walk passes over: `undefined` for an item of another type, counted in `$skip`.
    const walk: (Row | undefined)[] = found.flatMap((row) =>
      afterOtherItem.has(row.record.id) ? [undefined, row] : [row],
    );
    const page: Row[] = [];
    let position = skip;
    while (position < walk.length && page.length < top) {
      const entry = walk[position++];
      if (entry) page.push(entry);
    }
    const body: Record<string, unknown> = {
      '@odata.context': `${origin(ctx)}/v1.0/$metadata#users('me')/${object}`,
      value: page.map((row) => present(ctx, object, row.record, select)),
    };
    if (walk.slice(position).some(Boolean)) {
      const query = new URLSearchParams();
      for (const [name, value] of Object.entries(ctx.query))
        if (name !== '$skip') query.set(name, String(value));
      query.set('$skip', String(position));
      body['@odata.nextLink'] = `${origin(ctx)}/v1.0/me/${object}?${query.toString()}`;
    }
    ctx.body = body;
  });

  router.get('/v1.0/me/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    ctx.body = present(ctx, object, rowOf(object, ctx.params.id).record);
  });

  // The path a change notification names (`Users/{user id}/Contacts/{id}`): the same item.
  router.get('/v1.0/users/:user/:object/:id', (ctx) => {
    if (ctx.params.user !== GRAPH_USER_ID && ctx.params.user !== 'me')
      throw graphError(404, 'ErrorInvalidUser', `The requested user '${ctx.params.user}' is invalid.`);
    ctx.params.object = ctx.params.object.toLowerCase();
    const object = objectOf(ctx);
    ctx.body = present(ctx, object, rowOf(object, ctx.params.id).record);
  });

  addGraphSubscriptionRoutes(router, now);

  /** The properties a create (or an update of `existing`) may set, as the object stores them. */
  const bodyOf = (ctx: Context, object: GraphObject, existing?: Item): Record<string, unknown> => {
    const body = ctx.request.body;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw graphError(400, 'RequestBodyRead', 'The request body must be a JSON object.');
    const settable = [...writable[object], ...(existing ? [] : (createOnly[object] ?? []))];
    for (const name of Object.keys(body)) {
      if (name.startsWith('@odata.')) continue;
      if (readOnly.includes(name) || (existing && createOnly[object]?.includes(name)))
        throw graphError(
          400,
          'ErrorInvalidProperty',
          `The property '${name}' is read-only and cannot be set.`,
        );
      if (!settable.includes(name))
        throw graphError(
          400,
          'RequestBodyRead',
          `The property '${name}' does not exist on type 'microsoft.graph.${typeName[object]}'. Make sure to only use property names that are defined by the type or mark the type as open type.`,
        );
      if (object === 'messages' && existing && !existing.isDraft && draftOnly.includes(name))
        throw graphError(400, 'ErrorInvalidPropertySet', 'Message is not draft.');
    }
    const values = Object.fromEntries(Object.entries(body).filter(([name]) => !name.startsWith('@odata.')));
    if (object === 'messages') {
      for (const [name, value] of Object.entries(values)) {
        if (name === 'body') values.body = itemBody(value);
        else if (/Recipients$|^replyTo$|^from$|^sender$/.test(name)) values[name] = recipients(name, value);
        else if (messageValues[name]) {
          const text = String(value).toLowerCase();
          if (!messageValues[name].includes(text))
            throw graphError(400, 'RequestBodyRead', `Requested value '${String(value)}' was not found.`);
          values[name] = text;
        }
      }
      if (values.body) {
        const { contentType, content } = values.body as { contentType: string; content: string };
        values.bodyPreview = (contentType === 'html' ? textOf(content) : content).slice(0, 255);
      }
    }
    return values;
  };

  const stamp = (object: GraphObject, item: Item, ms: number) => {
    item.lastModifiedDateTime = timeText(object, ms);
    item.changeKey = randomBytes(12).toString('base64');
  };
  const baseOf = (object: GraphObject, id: string, ms: number): Record<string, unknown> => {
    if (object === 'contacts')
      return {
        parentFolderId: FOLDERS.contacts,
        givenName: null,
        surname: null,
        displayName: '',
        jobTitle: null,
        companyName: null,
        emailAddresses: [],
      };
    if (object === 'events')
      return { subject: null, bodyPreview: '', isAllDay: false, categories: [], isReminderOn: true };
    // A draft saved now (user-post-messages' answer): sent and received at its creation.
    return {
      receivedDateTime: secondTime(ms),
      sentDateTime: secondTime(ms),
      hasAttachments: false,
      internetMessageId: `<${randomBytes(8).toString('hex')}@contoso.prod.outlook.com>`,
      subject: '',
      bodyPreview: '',
      importance: 'normal',
      parentFolderId: FOLDERS.drafts,
      conversationId: `AAQkAGY0YzAwY2ViLWQy${randomBytes(9).toString('base64url')}=`,
      conversationIndex: randomBytes(22).toString('base64'),
      isDeliveryReceiptRequested: false,
      isReadReceiptRequested: false,
      isRead: true,
      isDraft: true,
      webLink: `https://outlook.office365.com/owa/?ItemID=${encodeURIComponent(id)}&exvsurl=1&viewmodel=ReadMessageItem`,
      inferenceClassification: 'focused',
      body: { contentType: 'text', content: '' },
      toRecipients: [],
      ccRecipients: [],
      bccRecipients: [],
      replyTo: [],
      flag: { flagStatus: 'notFlagged' },
    };
  };
  const idLetter: Record<GraphObject, string> = { contacts: 'Q', events: 'R', messages: 'S' };
  const create = (object: GraphObject, values: Record<string, unknown>, at: number): Item => {
    const ms = truncate(object, at);
    const n = stores[object].nextId();
    const id = `AAMkAGY0YzAwY2ViLWQy${idLetter[object]}BGAAAAAABeMJSl${String(n).padStart(8, '0')}AAA=`;
    const item: Item = {
      id,
      createdDateTime: timeText(object, ms),
      lastModifiedDateTime: timeText(object, ms),
      changeKey: '',
      categories: [],
      ...baseOf(object, id, ms),
      ...values,
    };
    if (object === 'contacts' && !values.displayName)
      item.displayName = [item.givenName, item.surname].filter(Boolean).join(' ');
    // Every third message sits after an item of another type in the mailbox's walk.
    if (object === 'messages' && n % 3 === 1) afterOtherItem.add(id);
    stamp(object, item, ms);
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
    ctx.body = present(ctx, object, create(object, values, now()));
  });

  router.patch('/v1.0/me/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    const row = rowOf(object, ctx.params.id);
    Object.assign(row.record, bodyOf(ctx, object, row.record));
    const ms = truncate(object, now());
    stamp(object, row.record, ms);
    row.modifiedMs = ms;
    row.visibleFromMs = undefined;
    ctx.body = present(ctx, object, row.record);
  });

  router.delete('/v1.0/me/:object/:id', (ctx) => {
    const object = objectOf(ctx);
    rowOf(object, ctx.params.id);
    stores[object].rows.delete(ctx.params.id);
    ctx.status = 204;
  });

  await fake.start();

  /** A message received from outside at `ms`: in the Inbox, unread, sent two seconds before. */
  const receivedMessage = (n: number, ms: number): Record<string, unknown> => {
    const sender = { emailAddress: { name: `Sender ${n}`, address: `s${n}@example.com` } };
    const content = `Hello, this is message ${n}.`;
    return {
      subject: `Message ${n}`,
      body: { contentType: 'text', content },
      bodyPreview: content,
      from: sender,
      sender,
      toRecipients: [{ emailAddress: MAILBOX }],
      sentDateTime: secondTime(ms - 2000),
      isDraft: false,
      isRead: false,
      parentFolderId: FOLDERS.inbox,
    };
  };
  const seedValues = (object: GraphObject, n: number, ms: number): Record<string, unknown> =>
    object === 'contacts'
      ? {
          givenName: `First${n}`,
          surname: `Last${n}`,
          jobTitle: 'Buyer',
          companyName: `Org ${n}`,
          emailAddresses: [{ name: `First${n} Last${n}`, address: `c${n}@example.com` }],
        }
      : object === 'events'
        ? {
            subject: `Meeting ${n}`,
            start: { dateTime: '2026-09-01T09:00:00.0000000', timeZone: 'UTC' },
            end: { dateTime: '2026-09-01T10:00:00.0000000', timeZone: 'UTC' },
            location: { displayName: `Room ${n}` },
          }
        : receivedMessage(n, truncate(object, ms));

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
        (ms, index) => create(object as GraphObject, seedValues(object as GraphObject, index + 1, ms), ms).id,
      ),
    touch(object, id, modifiedMs, options) {
      const row = rowOf(object as GraphObject, id);
      const ms = truncate(object as GraphObject, modifiedMs);
      stamp(object as GraphObject, row.record, ms);
      row.modifiedMs = ms;
      row.visibleFromMs = options?.visibleFromMs;
    },
    remove(object, id) {
      // Deleted through the API (or emptied from Deleted Items): gone from the listings.
      stores[object as GraphObject].rows.delete(id);
    },
    stored: (object, id) => stores[object as GraphObject].get(id)?.record,
    failNext: (count, status, headers) => fake.failNext(count, status, headers),
    stop: () => fake.stop(),
  };
}

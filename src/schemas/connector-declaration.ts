import Type, { type Static } from 'typebox';
import { ValueTypeSchema } from './object-metadata.js';
import {
  DeclaredRequestSchema,
  JsonPointerSchema,
  PaginationSchema,
  PredicateSchema,
  strict,
  TimeFormatSchema,
} from './connector-basics.js';
import { WebhooksDeclarationSchema } from './connector-webhooks.js';

export * from './connector-basics.js';
export * from './connector-webhooks.js';

/**
 * A provider's deep support as data (`src/providers/catalog/connectors/<provider>.json`): per object,
 * how to list records (window, pagination, where records, ids and modification times are), how to
 * write them, and how to describe their fields. The declarative connector
 * (`src/providers/declarative/`) runs it; code hooks exist only for real quirks.
 *
 * Strings in requests are templates: `{{name}}` or `{{name|format}}`. A query parameter or body
 * member whose value is one placeholder with no value (no `since` on a full read, no `cursor` on the
 * first page) is left out. Placeholders: `object` (the object's provider name), `vars.<name>` (the
 * object's `vars`), `connection.<name>` (the connection's metadata, as in URL templates), `since`, `until`, `window` (the joined window clauses), `pageSize`, `cursor`,
 * `offset`, `page`, `lastId`, `fields`, `includeDeleted`, `parent` (read; a record a hook reads within); `id`, `record`, `associations`, `idempotencyKey` (write); formats `iso` (default for
 * times), `isoSeconds`, `isoSecondsBelow` (the last whole second before, as `isoSeconds`), `unixSeconds`, `unixSecondsUp` (rounded up), `unixSecondsBelow` (the last whole second before), `unixMs`, `date`, `json`, `join:<separator>` (lists, default `,`), `shift:<seconds>` (a time moved by
 * that many seconds, before the format that writes it: `{{since|shift:-172800|unixSeconds}}`, for
 * providers that filter by whole days).
 * A body member named `...` spreads its object value into the object holding it (`{"id": "{{id}}", "...": "{{record}}"}`).
 */

/** The clauses of a read window, joined into `{{window}}`: a string with `join`, else a list. */
export const WindowSchema = Type.Object(
  {
    since: Type.Optional(Type.Unknown({ description: 'A template using `{{since}}`.' })),
    until: Type.Optional(Type.Unknown({ description: 'A template using `{{until}}`.' })),
    join: Type.Optional(Type.String()),
    /**
     * Written before the joined clauses when there are any: the window is then text, empty without
     * clauses, for clauses inside a statement (SOQL's ` WHERE `). Needs `join`.
     */
    prefix: Type.Optional(Type.String({ minLength: 1 })),
  },
  strict,
);

/**
 * How a listing's time window behaves at the provider: what Ferry needs to lose no change at a
 * window's edges. Every listing that filters by modification time states it (the loader refuses
 * one that does not), from the provider's reference.
 */
export const ChangesSchema = Type.Object(
  {
    /** The unit of the modification times the listing filters on and returns (Notion's: the minute). */
    precision: Type.Enum(['millisecond', 'second', 'minute']),
    /** Whether a record stamped exactly at the window's start is listed. */
    since: Type.Enum(['inclusive', 'exclusive']),
    /** Whether a record stamped exactly at the window's end is listed; `unbounded` when the listing takes no end. */
    until: Type.Enum(['inclusive', 'exclusive', 'unbounded']),
    /**
     * The longest a change may take, after its modification time, to appear in this listing: a
     * search index that lags, an export that holds back its last minute, a transaction committed
     * after the time it stamped. 0 when a change shows at once. The next read starts this much
     * before the newest change seen, and what it sees again is recognised and not delivered twice.
     */
    lagSeconds: Type.Integer({ minimum: 0 }),
    /**
     * How far back the listing reaches, when the provider refuses an older start (QuickBooks' change
     * feed: 30 days). A read from further back asks from the oldest start allowed (an hour inside
     * it, for clock skew) rather than failing; what changed before then is beyond the provider.
     */
    historySeconds: Type.Optional(Type.Integer({ minimum: 3600 })),
  },
  strict,
);
export type Changes = Static<typeof ChangesSchema>;

/**
 * Listed items that are stubs (Gmail's `messages.list` gives `{id, threadId}` only): each is read in
 * full by id through the object's `read.get`, at most `concurrency` at a time, in the order listed.
 * A get answering 404 means the record went away since it was listed: a deletion, delivered where
 * the read asks for deletions, else left out.
 */
export const ExpandSchema = Type.Object({ concurrency: Type.Integer({ minimum: 1, maximum: 50 }) }, strict);
export type Expand = Static<typeof ExpandSchema>;

/** Statuses a provider answers for a resume token it no longer takes (Google Calendar's 410, Gmail history's 404). */
const RefusedStatusesSchema = Type.Array(Type.Integer({ minimum: 400, maximum: 499 }), {
  minItems: 1,
  uniqueItems: true,
});

/** One way of listing records. */
export const ListingSchema = Type.Object(
  {
    request: DeclaredRequestSchema,
    /** The array of records in the response. */
    records: JsonPointerSchema,
    /** The record inside each listed item, when items wrap it (an event's `/data/object`). */
    record: Type.Optional(JsonPointerSchema),
    /** When an item's record changed, read from the item rather than the record (an event's `/created`). */
    updated: Type.Optional(Type.Object({ field: JsonPointerSchema, format: TimeFormatSchema }, strict)),
    /**
     * Items that are deletions, tested on the item (an event's `/type`): marked deleted, and listed
     * only when the read asks for deletions (`includeDeleted`). On a listing of deletions, the only
     * items it keeps, where it lists live records too (Linear's `includeArchived: true`).
     */
    deleted: Type.Optional(PredicateSchema),
    pagination: PaginationSchema,
    window: Type.Optional(WindowSchema),
    pageSize: Type.Object(
      { max: Type.Integer({ minimum: 1 }), min: Type.Optional(Type.Integer({ minimum: 1 })) },
      strict,
    ),
    /**
     * The pages after the first, where the provider asks for them another way (monday's
     * `next_items_page(cursor:)` after `boards { items_page }`): their own request, records and
     * pagination. The first page's pagination gives the cursor for the second.
     */
    following: Type.Optional(
      Type.Object(
        { request: DeclaredRequestSchema, records: JsonPointerSchema, pagination: PaginationSchema },
        strict,
      ),
    ),
    /**
     * The provider lists newest first and cannot filter by modification time: paging stops at the
     * first record modified before `since` (Gorgias, Front).
     */
    newestFirst: Type.Optional(Type.Boolean()),
    /**
     * The provider lists oldest modification first and cannot bound the window's end: paging stops
     * at the first record modified at or after `until` (Zoho CRM's `If-Modified-Since`).
     */
    oldestFirst: Type.Optional(Type.Boolean()),
    /**
     * The provider sorts the listing by modification time ascending, filtered from `{{since}}`, and
     * pages by number or offset (`page`, `offset`): positions that shift when a record of an earlier
     * page is modified or deleted during the walk, so that the record at the next page's edge is
     * never listed. After each full page the walk starts again at the first page, from the newest
     * modification time on the page (at the provider's precision), and leaves out the records of that
     * time it returned already; a page all of one time (ties longer than a page) goes on to the next
     * page from the same time (Copper's searches).
     */
    restartFromNewest: Type.Optional(Type.Boolean()),
    /** How the window behaves; required when the listing filters by time (`{{since}}`, `{{until}}`). */
    changes: Type.Optional(ChangesSchema),
    /**
     * Statuses other than 2xx the provider answers instead of an empty last page (Zoho CRM's 304
     * Not Modified when nothing changed after `If-Modified-Since`): the listing ends there, and
     * what follows it (the listing of deletions) is still read.
     */
    emptyStatuses: Type.Optional(
      Type.Array(Type.Integer({ minimum: 300, maximum: 499 }), { minItems: 1, uniqueItems: true }),
    ),
    /**
     * The pagination's position at the end of the listing (its last cursor or next URL, Zendesk's
     * `after_url`) continues it later with what changed since: kept per object, it starts the next
     * scheduled read instead of `{{since}}`. On a listing of deletions (Asana's event streams, whose
     * sync tokens are their only position), the provider's hooks walk it and keep that position in
     * the read's resume cursor: the declarative read keeps only the position of the listing of changes.
     */
    resume: Type.Optional(Type.Boolean()),
    /**
     * Statuses by which the provider refuses the resume token (`resume`) as too old or unknown
     * (Google Calendar's 410 GONE for a sync token): the read starts over as a full listing, without
     * `{{since}}`, as the provider's sync guide says, and ends with a new token. A full listing
     * delivers everything again (what was delivered before is recognised where its time and content
     * say so); nothing changed in between is lost.
     */
    resumeRefused: Type.Optional(RefusedStatusesSchema),
    /** The listed items are stubs read in full through `read.get` (see `ExpandSchema`). */
    expand: Type.Optional(ExpandSchema),
  },
  strict,
);
export type Listing = Static<typeof ListingSchema>;

/**
 * Changes listed by a request of their own rather than by the listing (Gmail's `users.history.list`
 * beside `users.messages.list`), from a token: the feed's first token is taken by `start` before a
 * full listing's first page (Gmail's profile `historyId`), so that what changes during the listing
 * is in the feed next time; each later read walks the feed from the token the last one ended with
 * (`{{resume}}`, kept on every page of the walk, which pages by `{{cursor}}`), and ends with the
 * token its last page gives (the pagination's `resume` pointer). The token moves on only with the
 * read's last page, so a read that fails part-way starts again from the same token.
 *
 * Each entry of `entries` holds arrays of changed items (`changed`, Gmail's `messagesAdded`,
 * `labelsAdded`, `labelsRemoved`) and of deleted items (`deleted`, `messagesDeleted`), the record
 * (or its stub) at `record` inside each item. A record named several times in a page is delivered
 * once, as its last mention in the page says (changed, or deleted); changed stubs are read in full
 * through `read.get` with `expand`. A token refused (`refused`: Gmail's 404 for a `startHistoryId`
 * too old) starts the read over as a full listing, which takes a new token first.
 */
export const ChangeFeedSchema = Type.Object(
  {
    start: Type.Object({ request: DeclaredRequestSchema, token: JsonPointerSchema }, strict),
    request: DeclaredRequestSchema,
    entries: JsonPointerSchema,
    changed: Type.Array(JsonPointerSchema, { minItems: 1 }),
    deleted: Type.Optional(Type.Array(JsonPointerSchema, { minItems: 1 })),
    record: Type.Optional(JsonPointerSchema),
    pagination: PaginationSchema,
    pageSize: Type.Object({ max: Type.Integer({ minimum: 1 }) }, strict),
    expand: Type.Optional(ExpandSchema),
    refused: Type.Optional(RefusedStatusesSchema),
  },
  strict,
);
export type ChangeFeed = Static<typeof ChangeFeedSchema>;

/**
 * How the provider reveals records deleted (or archived, trashed) since a time, so reads can
 * deliver them: the listing marks them itself (`marked`: its `deleted` predicate or the object's
 * `deleted` pointer, asked for with `{{includeDeleted}}`: Zendesk's ticket export), another listing
 * lists them (`listing`: HubSpot's `archived=true`, read after the changes, its `updated` being the
 * deletion time), or not at all (`none`, with the reason).
 */
export const DeletionsSchema = Type.Union([
  Type.Object(
    {
      style: Type.Literal('marked'),
      /**
       * The listing a read that asks for deletions walks instead of the object's own, where the
       * provider lists deleted records beside live ones only through another resource (Salesforce's
       * `queryAll` beside `query`): it marks them as above, and filters by time as its `changes` say.
       */
      list: Type.Optional(ListingSchema),
    },
    strict,
  ),
  Type.Object({ style: Type.Literal('listing'), listing: ListingSchema }, strict),
  Type.Object({ style: Type.Literal('none'), reason: Type.String({ minLength: 1 }) }, strict),
]);
export type Deletions = Static<typeof DeletionsSchema>;

export const ReadDeclarationSchema = Type.Object(
  {
    /** Full reads, and windowed reads when there is no `incremental` listing. */
    list: ListingSchema,
    /** Windowed reads (`since` set), when the provider lists changes another way (a search, an events feed). */
    incremental: Type.Optional(ListingSchema),
    /**
     * Scheduled reads after the first, from a token, where changes come from another request than
     * the listing (see `ChangeFeedSchema`). Deletions it lists are `marked`.
     */
    feed: Type.Optional(ChangeFeedSchema),
    /** How deleted records are revealed; every readable object says (the loader refuses one that does not). */
    deletions: Type.Optional(DeletionsSchema),
    /**
     * The provider cannot list what changed since a time: every read walks the whole `list`, Ferry
     * keeps a fingerprint of each record, and scheduled reads deliver what is new or changed, then
     * records no longer listed as deletions marked `inferred` (no `deletions`, no `incremental`).
     */
    fullRead: Type.Optional(Type.Object({ reason: Type.String({ minLength: 1 }) }, strict)),
    /** One record by id (`{{id}}`): a change event that names only its record is read through this. */
    get: Type.Optional(Type.Object({ request: DeclaredRequestSchema, record: JsonPointerSchema }, strict)),
    /** How many records a window holds (`{{since}}`, `{{until}}`), where the provider can say. */
    count: Type.Optional(
      Type.Object(
        { request: DeclaredRequestSchema, total: JsonPointerSchema, window: Type.Optional(WindowSchema) },
        strict,
      ),
    ),
  },
  strict,
);

/**
 * Records matching equality filters, as one query (HubSpot's CRM search). `equals` is one filter, a
 * template using `{{field}}` (the provider's field name) and `{{value}}`; the request carries them
 * all as `{{filters}}` (a list, or a string when `join` is set), with `{{pageSize}}`, `{{fields}}`
 * and the pagination's placeholder. Declaring it is what `support.search.operators.equals` says.
 *
 * Providers whose request names the field in a key (Copper's `{"emails": [...]}`, ActiveCampaign's
 * `?email=`) declare `members` instead of `equals`: per searchable field, an object template using
 * `{{value}}`; the filters' rendered objects are merged into one, `{{filters}}`, which the request
 * spreads into its body or query (`"...": "{{filters}}"`). A field not listed cannot be searched,
 * and two filters writing the same member are refused (both before any call).
 */
export const SearchDeclarationSchema = Type.Object(
  {
    request: DeclaredRequestSchema,
    equals: Type.Optional(
      Type.Unknown({
        description: 'One equality filter: a template using `{{field}}` and `{{value}}`.',
      }),
    ),
    members: Type.Optional(
      Type.Record(
        Type.String({ minLength: 1 }),
        Type.Record(Type.String({ minLength: 1 }), Type.Unknown(), { minProperties: 1 }),
        { minProperties: 1 },
      ),
    ),
    join: Type.Optional(Type.String()),
    records: JsonPointerSchema,
    record: Type.Optional(JsonPointerSchema),
    pagination: PaginationSchema,
    pageSize: Type.Object({ max: Type.Integer({ minimum: 1 }) }, strict),
  },
  strict,
);
export type SearchDeclaration = Static<typeof SearchDeclarationSchema>;

export const WriteOperationSchema = Type.Object(
  {
    request: DeclaredRequestSchema,
    /** The written record's id in the response (create); an update or delete keeps the id it was given. */
    id: Type.Optional(JsonPointerSchema),
    /** The record as the provider returns it after the write. */
    record: Type.Optional(JsonPointerSchema),
    /** Where the new record's id comes when the response has no body (Dynamics' `OData-EntityId`). */
    idHeader: Type.Optional(
      Type.Object({ name: Type.String({ minLength: 1 }), pattern: Type.String({ minLength: 1 }) }, strict),
    ),
  },
  strict,
);
export type WriteOperation = Static<typeof WriteOperationSchema>;

export const WriteDeclarationSchema = Type.Object(
  {
    create: Type.Optional(WriteOperationSchema),
    update: Type.Optional(WriteOperationSchema),
    delete: Type.Optional(WriteOperationSchema),
  },
  strict,
);

export const StaticFieldSchema = Type.Object(
  {
    displayName: Type.String({ minLength: 1 }),
    valueType: ValueTypeSchema,
    providerType: Type.String({ minLength: 1 }),
    readOnly: Type.Optional(Type.Boolean()),
    /** Set by a create only; an update cannot change it (Brevo's contact `email`). */
    createOnly: Type.Optional(Type.Boolean()),
    isRequired: Type.Optional(Type.Boolean()),
    values: Type.Optional(
      Type.Array(Type.Object({ value: Type.String(), displayValue: Type.String() }, strict)),
    ),
  },
  strict,
);
export type StaticField = Static<typeof StaticFieldSchema>;

/** How the provider describes an object's fields. */
export const MetadataDeclarationSchema = Type.Object(
  {
    request: DeclaredRequestSchema,
    /** The field descriptors: an array, or an object keyed by field name. */
    fields: JsonPointerSchema,
    pagination: Type.Optional(PaginationSchema),
    /** Only descriptors for which this holds describe the object (Copper lists every object's fields). */
    where: Type.Optional(PredicateSchema),
    /** The field's name; several pointers are joined with `.` (Shopify's `namespace.key`). */
    name: Type.Union([JsonPointerSchema, Type.Array(JsonPointerSchema, { minItems: 1 })]),
    /**
     * Written before each described name: where the values sit in a record (Front's
     * `custom_fields.`); with `when`, only before the names of fields for which it holds
     * (Pipedrive's custom fields).
     */
    prefix: Type.Optional(
      Type.Union([
        Type.String({ minLength: 1 }),
        Type.Object({ text: Type.String({ minLength: 1 }), when: PredicateSchema }, strict),
      ]),
    ),
    /**
     * Written after each described name, as `prefix` is before it: Dataverse reads a lookup column
     * `parentcustomerid` as the property `_parentcustomerid_value`.
     */
    suffix: Type.Optional(
      Type.Union([
        Type.String({ minLength: 1 }),
        Type.Object({ text: Type.String({ minLength: 1 }), when: PredicateSchema }, strict),
      ]),
    ),
    label: Type.Optional(JsonPointerSchema),
    type: JsonPointerSchema,
    /** A second type property (HubSpot's `fieldType`): `types` is asked for `<type>/<subtype>` first. */
    subtype: Type.Optional(JsonPointerSchema),
    readOnly: Type.Optional(PredicateSchema),
    required: Type.Optional(PredicateSchema),
    custom: Type.Optional(PredicateSchema),
    /** The field is in use; an inactive one is left out of the metadata (Zendesk's `active: false`). */
    active: Type.Optional(PredicateSchema),
    /**
     * Whether a create may set the field, and whether an update may (Salesforce's `createable`,
     * `updateable`): with both, the field is read-only when neither holds, and marked `createOnly`
     * or `updateOnly` when one does. They replace `readOnly`.
     */
    creatable: Type.Optional(PredicateSchema),
    updatable: Type.Optional(PredicateSchema),
    /** Allowed values: `list` is one pointer, or several tried in order (Notion's `/select/options`, `/status/options`). */
    options: Type.Optional(
      Type.Object(
        {
          list: Type.Union([JsonPointerSchema, Type.Array(JsonPointerSchema, { minItems: 1 })]),
          value: JsonPointerSchema,
          label: JsonPointerSchema,
          /** The value may be chosen; inactive values are left out (Salesforce's picklist `active`). */
          active: Type.Optional(PredicateSchema),
        },
        strict,
      ),
    ),
    /** Provider type → Ferry's value type; unlisted types are `other`. */
    types: Type.Record(Type.String(), ValueTypeSchema),
  },
  strict,
);
export type MetadataDeclaration = Static<typeof MetadataDeclarationSchema>;

/**
 * Where a record keeps field values under names other than its top-level keys, so that the names
 * the metadata lists are the names that select, map and write: HubSpot's `properties` (no prefix:
 * `email` is `/properties/email`), Pipedrive's `custom_fields` object (`custom_fields.<key>`),
 * Zendesk's `custom_fields` list of `{id, value}` (`custom_fields.<id>`). A write naming
 * `<prefix><name>` sends the value back into its container (containers with a prefix; one without
 * is the write request's own business, HubSpot's `{"properties": "{{record}}"}`).
 */
export const ValuesContainerSchema = Type.Object(
  {
    at: JsonPointerSchema,
    prefix: Type.Optional(Type.String({ minLength: 1 })),
    /** The container is a list of entries: where each entry's name and value are. */
    entries: Type.Optional(
      Type.Object(
        {
          name: JsonPointerSchema,
          value: JsonPointerSchema,
          /**
           * Names are numbers in the provider's JSON (Zendesk's field ids). Without a prefix, a
           * write's values named by a number go into this list (Copper's `custom_fields`).
           */
          numericNames: Type.Optional(Type.Boolean()),
        },
        strict,
      ),
    ),
  },
  strict,
);
export type ValuesContainer = Static<typeof ValuesContainerSchema>;

export const ObjectDeclarationSchema = Type.Object(
  {
    displayName: Type.Optional(Type.String({ minLength: 1 })),
    /**
     * The catalog module (`../providers/<provider>.json` `modules`) whose base URL this object's
     * requests go to, where the provider serves its APIs on several hosts: Google's People API at
     * people.googleapis.com beside Calendar at www.googleapis.com. Absent, the provider's base URL.
     */
    module: Type.Optional(Type.String({ minLength: 1 })),
    /** Values for `{{vars.<name>}}` in this object's templates. */
    vars: Type.Optional(Type.Record(Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_]*$' }), Type.String())),
    /**
     * The record's id; several pointers are tried in order, the first holding a value wins (OData's
     * removed entities, `{"@odata.context": "…/$deletedEntity", "id": …}`, carry the id as `/id`).
     */
    id: Type.Optional(Type.Union([JsonPointerSchema, Type.Array(JsonPointerSchema, { minItems: 1 })])),
    /** When the record was last modified, and how that time is written. */
    updated: Type.Optional(Type.Object({ field: JsonPointerSchema, format: TimeFormatSchema }, strict)),
    /** A flag set on deletions, which a read lists when asked with `{{includeDeleted}}`. */
    deleted: Type.Optional(JsonPointerSchema),
    read: Type.Optional(ReadDeclarationSchema),
    write: Type.Optional(WriteDeclarationSchema),
    /** Records matching equality filters (optional: absent, the provider cannot search this object). */
    search: Type.Optional(SearchDeclarationSchema),
    metadata: Type.Optional(MetadataDeclarationSchema),
    /** Containers of field values inside a record (see `ValuesContainerSchema`). */
    values: Type.Optional(Type.Array(ValuesContainerSchema, { minItems: 1 })),
    /** Fields no endpoint describes (standard fields of providers that describe only custom ones). */
    fields: Type.Optional(Type.Record(Type.String({ minLength: 1 }), StaticFieldSchema)),
    /**
     * Fields every read that chooses fields asks for too: a provider that returns only the fields
     * named (ServiceNow's `sysparm_fields`) would otherwise leave records without their id.
     */
    alwaysSelect: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
  },
  strict,
);
export type ObjectDeclaration = Static<typeof ObjectDeclarationSchema>;

export const ConnectorDeclarationSchema = Type.Object(
  {
    /** The catalog provider this declares; the file is named after it. */
    provider: Type.String({ minLength: 1 }),
    /** The public API reference the declaration was written from. */
    reference: Type.String({ minLength: 1 }),
    /** Shared by every object; an object's own declaration wins member by member. */
    defaults: Type.Optional(ObjectDeclarationSchema),
    /** Objects by provider name; `*` stands for any other object (custom objects). */
    objects: Type.Record(Type.String({ minLength: 1 }), ObjectDeclarationSchema),
    /**
     * Code for this provider's quirks (`src/providers/connectors/<module>.ts`), and the capabilities
     * only that code gives (custom fields, subscriptions): declared here so the catalog knows them.
     */
    hooks: Type.Optional(
      Type.Object(
        {
          module: Type.String({ pattern: '^[a-zA-Z][a-zA-Z0-9-]*$' }),
          capabilities: Type.Optional(Type.Array(Type.Enum(['customFields', 'subscribe', 'count']))),
        },
        strict,
      ),
    ),
    /** Change events the provider posts (subscribe), when it can send them. */
    webhooks: Type.Optional(WebhooksDeclarationSchema),
    /** Where the provider's error message sits in an error body, tried in order. */
    errorMessage: Type.Optional(Type.Array(JsonPointerSchema, { minItems: 1 })),
    /**
     * Where an error body details what was wrong (Zendesk's per-field `details`, Salesforce's
     * `[{errorCode, fields}]`), tried in order: the caller sees it with the write's error and in
     * the operation's logs.
     */
    errorDetails: Type.Optional(Type.Array(JsonPointerSchema, { minItems: 1 })),
    /**
     * Limits the provider documents per endpoint, which Ferry keeps to rather than running into
     * 429s: at most `requests` matching requests in any `perSeconds` (per connection, per process).
     */
    pacing: Type.Optional(
      Type.Array(
        Type.Object(
          {
            method: Type.Optional(Type.Enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])),
            /** A regular expression over the request's path (the part after the base URL). */
            path: Type.String({ minLength: 1 }),
            requests: Type.Integer({ minimum: 1 }),
            perSeconds: Type.Number({ exclusiveMinimum: 0 }),
          },
          strict,
        ),
        { minItems: 1 },
      ),
    ),
    /**
     * Failures a provider reports inside a 2xx answer (GraphQL's top-level `errors`, Shopify's
     * mutation `userErrors`), tried in order: when the value at `at` is present, the answer is
     * treated as `status` (or the status `codes` gives the code at `code` under `at`), so a
     * throttled query is retried like a 429 and the rest fail as provider errors.
     */
    errorsInBody: Type.Optional(
      Type.Array(
        Type.Object(
          {
            at: JsonPointerSchema,
            status: Type.Integer({ minimum: 400, maximum: 599 }),
            code: Type.Optional(JsonPointerSchema),
            codes: Type.Optional(Type.Record(Type.String(), Type.Integer({ minimum: 400, maximum: 599 }))),
          },
          strict,
        ),
        { minItems: 1 },
      ),
    ),
    /** Headers saying when a rate limit resets, used when a 429 has no Retry-After. */
    rateLimit: Type.Optional(
      Type.Object(
        {
          remaining: Type.Optional(Type.String({ minLength: 1 })),
          reset: Type.String({ minLength: 1 }),
          resetFormat: Type.Enum(['seconds', 'milliseconds', 'unixSeconds', 'unixMs', 'httpDate']),
        },
        strict,
      ),
    ),
  },
  strict,
);
export type ConnectorDeclaration = Static<typeof ConnectorDeclarationSchema>;

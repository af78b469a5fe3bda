import Type, { type Static } from 'typebox';
import { ValueTypeSchema } from './object-metadata.js';

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

const strict = { additionalProperties: false } as const;

/** RFC 6901 JSON Pointer into a response body or a record; `""` is the whole document. */
export const JsonPointerSchema = Type.String({
  pattern: '^(/([^~/]|~[01])*)*$',
  description: 'A JSON Pointer (RFC 6901), e.g. `/paging/next/after`; `""` is the whole document.',
});
export type JsonPointer = Static<typeof JsonPointerSchema>;

export const TimeFormatSchema = Type.Enum(['iso', 'isoSeconds', 'unixSeconds', 'unixMs', 'date']);
export type TimeFormat = Static<typeof TimeFormatSchema>;

export const DeclaredRequestSchema = Type.Object(
  {
    method: Type.Enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
    /**
     * Relative to the provider's base URL, e.g. `/crm/v3/objects/{{object}}`; `""` is the base URL
     * itself (a GraphQL endpoint that is the catalog's base URL, Linear's `/graphql`).
     */
    path: Type.String(),
    query: Type.Optional(Type.Record(Type.String({ minLength: 1 }), Type.String())),
    headers: Type.Optional(Type.Record(Type.String({ minLength: 1 }), Type.String())),
    /** A JSON template; a string that is exactly one placeholder takes the value's own type. */
    body: Type.Optional(Type.Unknown()),
    /** How the body is sent: JSON (default) or `application/x-www-form-urlencoded` (Stripe). */
    encoding: Type.Optional(Type.Enum(['json', 'form'])),
  },
  strict,
);
export type DeclaredRequest = Static<typeof DeclaredRequestSchema>;

/** Where the next page comes from. */
export const PaginationSchema = Type.Union([
  Type.Object(
    {
      style: Type.Literal('cursor'),
      /** The next cursor in the response; the request carries it as `{{cursor}}`. */
      next: JsonPointerSchema,
      /** A boolean saying more follow, where the provider gives one besides the cursor. */
      hasMore: Type.Optional(JsonPointerSchema),
      /** A boolean saying this page is the last, though a cursor is still given (Zendesk's `end_of_stream`). */
      last: Type.Optional(JsonPointerSchema),
    },
    strict,
  ),
  Type.Object(
    {
      style: Type.Literal('nextUrl'),
      /** A URL (absolute, or a path) in the response that fetches the next page as it is. */
      next: JsonPointerSchema,
      /** A boolean saying this page is the last, though a next URL is still given (Zendesk's `end_of_stream`). */
      last: Type.Optional(JsonPointerSchema),
      /**
       * The URL names another host for the same API (Front's `<company>.api.frontapp.com`): its path
       * and query are fetched from the provider's base URL, where the credentials belong.
       */
      rebase: Type.Optional(Type.Boolean()),
    },
    strict,
  ),
  Type.Object({ style: Type.Literal('linkHeader') }, strict),
  Type.Object(
    {
      style: Type.Literal('offset'),
      hasMore: Type.Optional(JsonPointerSchema),
      total: Type.Optional(JsonPointerSchema),
    },
    strict,
  ),
  Type.Object(
    {
      style: Type.Literal('page'),
      /** The number of the first page (1 unless said). */
      first: Type.Optional(Type.Integer({ minimum: 0, maximum: 1 })),
      hasMore: Type.Optional(JsonPointerSchema),
      totalPages: Type.Optional(JsonPointerSchema),
    },
    strict,
  ),
  Type.Object(
    {
      style: Type.Literal('lastId'),
      /** The request carries the last record's id as `{{lastId}}` (Stripe's `starting_after`). */
      hasMore: JsonPointerSchema,
    },
    strict,
  ),
  Type.Object({ style: Type.Literal('none') }, strict),
]);
export type Pagination = Static<typeof PaginationSchema>;
export type PaginationStyle = Pagination['style'];

/** Whether a field descriptor has a property: a pointer to a truthy value, its negation, or a combination. */
export type Predicate =
  | boolean
  | string
  | { not: Predicate }
  | { anyOf: Predicate[] }
  | { allOf: Predicate[] }
  | { includes: { at: string; value: string | number | boolean } }
  | { matches: { at: string; pattern: string } };
export const PredicateSchema = Type.Cyclic(
  {
    Predicate: Type.Union([
      Type.Boolean(),
      JsonPointerSchema,
      Type.Object({ not: Type.Ref('Predicate') }, strict),
      Type.Object({ anyOf: Type.Array(Type.Ref('Predicate'), { minItems: 1 }) }, strict),
      Type.Object({ allOf: Type.Array(Type.Ref('Predicate'), { minItems: 1 }) }, strict),
      /** The value at `at` is `value`, or a list holding it (Copper's `available_on: ["person", …]`). */
      Type.Object(
        {
          includes: Type.Object(
            { at: JsonPointerSchema, value: Type.Union([Type.String(), Type.Number(), Type.Boolean()]) },
            strict,
          ),
        },
        strict,
      ),
      /** The text at `at` matches a regular expression (Stripe's event `type` ending in `.deleted`). */
      Type.Object(
        { matches: Type.Object({ at: JsonPointerSchema, pattern: Type.String({ minLength: 1 }) }, strict) },
        strict,
      ),
    ]),
  },
  'Predicate',
);

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
     * only when the read asks for deletions (`includeDeleted`).
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
  },
  strict,
);
export type Listing = Static<typeof ListingSchema>;

export const ReadDeclarationSchema = Type.Object(
  {
    /** Full reads, and windowed reads when there is no `incremental` listing. */
    list: ListingSchema,
    /** Windowed reads (`since` set), when the provider lists changes another way (a search, an events feed). */
    incremental: Type.Optional(ListingSchema),
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
    /** Written before each described name: where the values sit in a record (Front's `custom_fields.`). */
    prefix: Type.Optional(Type.String({ minLength: 1 })),
    label: Type.Optional(JsonPointerSchema),
    type: JsonPointerSchema,
    /** A second type property (HubSpot's `fieldType`): `types` is asked for `<type>/<subtype>` first. */
    subtype: Type.Optional(JsonPointerSchema),
    readOnly: Type.Optional(PredicateSchema),
    required: Type.Optional(PredicateSchema),
    custom: Type.Optional(PredicateSchema),
    /** Allowed values: `list` is one pointer, or several tried in order (Notion's `/select/options`, `/status/options`). */
    options: Type.Optional(
      Type.Object(
        {
          list: Type.Union([JsonPointerSchema, Type.Array(JsonPointerSchema, { minItems: 1 })]),
          value: JsonPointerSchema,
          label: JsonPointerSchema,
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

export const ObjectDeclarationSchema = Type.Object(
  {
    displayName: Type.Optional(Type.String({ minLength: 1 })),
    /** Values for `{{vars.<name>}}` in this object's templates. */
    vars: Type.Optional(Type.Record(Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_]*$' }), Type.String())),
    /** The record's id. */
    id: Type.Optional(JsonPointerSchema),
    /** When the record was last modified, and how that time is written. */
    updated: Type.Optional(Type.Object({ field: JsonPointerSchema, format: TimeFormatSchema }, strict)),
    /** A flag set on deletions, which a read lists when asked with `{{includeDeleted}}`. */
    deleted: Type.Optional(JsonPointerSchema),
    read: Type.Optional(ReadDeclarationSchema),
    write: Type.Optional(WriteDeclarationSchema),
    /** Records matching equality filters (optional: absent, the provider cannot search this object). */
    search: Type.Optional(SearchDeclarationSchema),
    metadata: Type.Optional(MetadataDeclarationSchema),
    /** Fields no endpoint describes (standard fields of providers that describe only custom ones). */
    fields: Type.Optional(Type.Record(Type.String({ minLength: 1 }), StaticFieldSchema)),
  },
  strict,
);
export type ObjectDeclaration = Static<typeof ObjectDeclarationSchema>;

/** A provider event for one record change: its name, and what registering for it sends (default: the name). */
export const WebhookEventSchema = Type.Union([
  Type.String({ minLength: 1 }),
  Type.Object({ name: Type.String({ minLength: 1 }), register: Type.Unknown() }, strict),
]);
export type WebhookEvent = Static<typeof WebhookEventSchema>;

/** How a provider signs what it posts: an HMAC-SHA256 of `signed`, keyed with the subscription's secret. */
export const HmacSignatureSchema = Type.Object(
  {
    scheme: Type.Optional(Type.Literal('hmac-sha256')),
    /** The header carrying the signature. */
    header: Type.String({ minLength: 1 }),
    /** A regular expression whose first group is one signature, matched repeatedly (several during a rotation); absent: the whole header. */
    pattern: Type.Optional(Type.String({ minLength: 1 })),
    encoding: Type.Enum(['hex', 'base64']),
    /**
     * What is signed, from `{{timestamp}}` and `{{body}}` (the raw body), e.g. `{{timestamp}}.{{body}}`;
     * also `{{method}}` and `{{uri}}` (the URL the provider posted to), for HubSpot's v3 signature.
     */
    signed: Type.String({ minLength: 1 }),
    /** Where the signing time is, for `{{timestamp}}` and the replay window: a header, optionally a pattern's first group. */
    timestamp: Type.Optional(
      Type.Object(
        {
          header: Type.String({ minLength: 1 }),
          pattern: Type.Optional(Type.String({ minLength: 1 })),
          unit: Type.Enum(['seconds', 'milliseconds']),
        },
        strict,
      ),
    ),
    /** How far the signing time may be from now (default 300). */
    toleranceSeconds: Type.Optional(Type.Integer({ minimum: 1 })),
    /** How the secret becomes the key: as text (default), or hex- or base64-decoded after `secretPrefix` is removed. */
    secretEncoding: Type.Optional(Type.Enum(['utf8', 'hex', 'base64'])),
    secretPrefix: Type.Optional(Type.String({ minLength: 1 })),
  },
  strict,
);
export type HmacSignature = Static<typeof HmacSignatureSchema>;

/** Providers that sign nothing but send the credentials Ferry gave them as HTTP Basic auth (Pipedrive). */
export const BasicSignatureSchema = Type.Object(
  {
    scheme: Type.Literal('basic'),
    /** The user name Ferry registers; the password is the subscription's secret (`ferrySecret`). */
    username: Type.String({ minLength: 1 }),
  },
  strict,
);

/**
 * Providers that sign nothing but echo in each notification the key/value secret Ferry registered
 * (Copper): the first value found at one of `at` must equal the subscription's secret.
 */
export const EchoedSecretSchema = Type.Object(
  {
    scheme: Type.Literal('echoed'),
    at: Type.Array(JsonPointerSchema, { minItems: 1 }),
  },
  strict,
);
export type EchoedSecret = Static<typeof EchoedSecretSchema>;

export const WebhookSignatureSchema = Type.Union([
  HmacSignatureSchema,
  BasicSignatureSchema,
  EchoedSecretSchema,
]);
export type WebhookSignature = Static<typeof WebhookSignatureSchema>;

/**
 * Change events the provider posts to Ferry: registering a subscription for one object
 * (`{{webhookUrl}}`, `{{events}}`: the objects' register values, `{{secret}}` when Ferry makes the
 * secret, `{{subscriptionId}}` once it exists), checking signatures, and reading events.
 */
export const WebhooksDeclarationSchema = Type.Object(
  {
    /**
     * The provider app's own settings hold the subscriptions (HubSpot): every account that installed
     * the app gets its events, posted to `/v1/webhooks/providers/{provider}/apps/{providerAppId}` and
     * signed with the app's client secret. Ferry registers nothing (no `create`, `delete`) and hands
     * each event to the installations whose connection's workspace is the event's `workspace`.
     */
    appLevel: Type.Optional(Type.Boolean()),
    create: Type.Optional(
      Type.Object(
        {
          request: DeclaredRequestSchema,
          /** The provider's id of the subscription in the answer. */
          id: JsonPointerSchema,
          /** The signing secret in the answer, for providers that issue one. */
          secret: Type.Optional(JsonPointerSchema),
          /**
           * One provider subscription per registered event (Copper: one per type and event), each
           * request sending that event's register value as `{{event}}`; Ferry keeps their ids joined
           * with commas, and deletes each.
           */
          perEvent: Type.Optional(Type.Boolean()),
        },
        strict,
      ),
    ),
    /** Providers that give the signing secret only through another call (`{{subscriptionId}}`). */
    secret: Type.Optional(Type.Object({ request: DeclaredRequestSchema, value: JsonPointerSchema }, strict)),
    /** Ferry makes the secret and sends it as `{{secret}}` (providers that take one). */
    ferrySecret: Type.Optional(Type.Boolean()),
    /** Changes the subscription in place; absent: it is deleted and created again. */
    update: Type.Optional(Type.Object({ request: DeclaredRequestSchema }, strict)),
    /** A 404 counts as done: the subscription is gone either way. */
    delete: Type.Optional(Type.Object({ request: DeclaredRequestSchema }, strict)),
    signature: WebhookSignatureSchema,
    event: Type.Object(
      {
        /** Where a body carrying several events lists them; absent: the body is one event. */
        list: Type.Optional(JsonPointerSchema),
        /** The event within the body (or each listed item), e.g. `/event`; default the whole. */
        root: Type.Optional(JsonPointerSchema),
        /** The provider's event id, for deduplication; several values are joined with `:`. */
        id: Type.Optional(Type.Union([JsonPointerSchema, Type.Array(JsonPointerSchema, { minItems: 1 })])),
        /** The provider account the event belongs to (HubSpot's `portalId`), for `appLevel` webhooks. */
        workspace: Type.Optional(JsonPointerSchema),
        /** The event's name, from these values joined with `.` (e.g. `/type` and `/action`). */
        type: Type.Array(JsonPointerSchema, { minItems: 1 }),
        /** The changed record's id; or `recordIds`. */
        recordId: Type.Optional(JsonPointerSchema),
        /** A list of changed records' ids (Copper's `ids`): one event per id, each read by id. */
        recordIds: Type.Optional(JsonPointerSchema),
        /** The record as it is after the change; absent: Ferry reads it by id. */
        record: Type.Optional(JsonPointerSchema),
        occurredAt: Type.Optional(
          Type.Object({ field: JsonPointerSchema, format: TimeFormatSchema }, strict),
        ),
        /** Which fields changed: a list of names, an object whose keys are the names (previous values), or one name. */
        fieldsUpdated: Type.Optional(
          Type.Object({ pointer: JsonPointerSchema, as: Type.Enum(['list', 'keys', 'name']) }, strict),
        ),
      },
      strict,
    ),
    /** Per object, the provider event of each record change. */
    objects: Type.Record(
      Type.String({ minLength: 1 }),
      Type.Object(
        {
          create: Type.Optional(WebhookEventSchema),
          update: Type.Optional(WebhookEventSchema),
          delete: Type.Optional(WebhookEventSchema),
        },
        strict,
      ),
    ),
  },
  strict,
);
export type WebhooksDeclaration = Static<typeof WebhooksDeclarationSchema>;

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

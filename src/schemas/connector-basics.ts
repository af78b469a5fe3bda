import Type, { type Static } from 'typebox';

/**
 * The building blocks of connector declarations (see `connector-declaration.ts`): JSON Pointers,
 * time formats, requests, pagination styles and predicates.
 */

export const strict = { additionalProperties: false } as const;

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
      /**
       * Where the last page gives a token of its own that continues the listing later with what
       * changed since (Google's `nextSyncToken`): a listing that `resume`s keeps it, and the request
       * carries it as `{{resume}}` on the first page of the next read (later pages go by `{{cursor}}`).
       */
      resume: Type.Optional(JsonPointerSchema),
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
      /**
       * Where the last page gives the URL that continues the listing later with what changed since
       * (OData's `@odata.deltaLink`): a listing that `resume`s keeps it, and keeps no position when
       * the last page gives none.
       */
      resume: Type.Optional(JsonPointerSchema),
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
      /**
       * How many records the whole listing holds, where the provider says that and not the number of
       * pages (Smartsheet's `totalRowCount`, whose page past the end answers the last page again).
       */
      totalItems: Type.Optional(JsonPointerSchema),
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

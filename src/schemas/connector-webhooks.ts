import Type, { type Static } from 'typebox';
import { DeclaredRequestSchema, JsonPointerSchema, strict, TimeFormatSchema } from './connector-basics.js';

/** How a connector declaration subscribes to a provider's change events (its `webhooks`). */

/** A provider event for one record change: its name, and what registering for it sends (default: the name). */
export const WebhookEventSchema = Type.Union([
  Type.String({ minLength: 1 }),
  Type.Object({ name: Type.String({ minLength: 1 }), register: Type.Unknown() }, strict),
]);
export type WebhookEvent = Static<typeof WebhookEventSchema>;

/** How a provider signs what it posts: an HMAC (SHA-256, or SHA-1) of `signed`, keyed with the subscription's secret. */
export const HmacSignatureSchema = Type.Object(
  {
    /** `hmac-sha256` (the default) or `hmac-sha1` (Intercom's `X-Hub-Signature`). */
    scheme: Type.Optional(Type.Enum(['hmac-sha256', 'hmac-sha1'])),
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
    /**
     * Where the signing time is, for `{{timestamp}}` and the replay window: a header (optionally a
     * pattern's first group) or a member of the JSON body (Linear's `webhookTimestamp`); in seconds,
     * milliseconds, or ISO 8601 (Zendesk's `X-Zendesk-Webhook-Signature-Timestamp`).
     */
    timestamp: Type.Optional(
      Type.Object(
        {
          header: Type.Optional(Type.String({ minLength: 1 })),
          body: Type.Optional(JsonPointerSchema),
          pattern: Type.Optional(Type.String({ minLength: 1 })),
          unit: Type.Enum(['seconds', 'milliseconds', 'iso']),
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
    /**
     * A body listing several notifications, each echoing the secret (Microsoft Graph's
     * `value[].clientState`): `at` is then within each item, and every item must carry it.
     */
    each: Type.Optional(JsonPointerSchema),
  },
  strict,
);
export type EchoedSecret = Static<typeof EchoedSecretSchema>;

/**
 * Providers that sign no body but send a token (Jira to OAuth 2.0 apps): `Authorization: Bearer
 * <JWT>`, HS256 with the secret, within its `exp` (and not issued in the future).
 */
export const JwtSignatureSchema = Type.Object(
  {
    scheme: Type.Literal('jwt'),
    /** How far `exp` and `iat` may be off (default 60). */
    toleranceSeconds: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  strict,
);

export const WebhookSignatureSchema = Type.Union([
  HmacSignatureSchema,
  BasicSignatureSchema,
  EchoedSecretSchema,
  JwtSignatureSchema,
]);
export type WebhookSignature = Static<typeof WebhookSignatureSchema>;

/** A value of a delivery: a member of the event (a JSON pointer) or a request header (GitHub's `X-GitHub-Event`). */
export const WebhookValueSchema = Type.Union([
  JsonPointerSchema,
  Type.Object({ header: Type.String({ minLength: 1 }) }, strict),
]);
export type WebhookValue = Static<typeof WebhookValueSchema>;

/** A pointer, or several of which the first present counts (events of several objects in one shape). */
const PointersSchema = Type.Union([JsonPointerSchema, Type.Array(JsonPointerSchema, { minItems: 1 })]);

/** One change's provider event, or several (GitHub's `issues.closed` and `issues.edited` are both updates). */
const ChangeEventsSchema = Type.Union([WebhookEventSchema, Type.Array(WebhookEventSchema, { minItems: 1 })]);

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
    /**
     * What keys the signature: the secret of the subscription (default), or the client secret of
     * the provider app the connection was made through, for subscriptions registered per connection
     * but signed by the app (Shopify, Jira to OAuth 2.0 apps).
     */
    signingKey: Type.Optional(Type.Enum(['subscription', 'appClientSecret'])),
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
    /**
     * Providers that check the URL before sending to it (Microsoft Graph, during the create): a
     * request carrying this query parameter is answered 200 `text/plain` with its value, before any
     * subscription is looked up (the create that names it has not returned yet).
     */
    handshake: Type.Optional(Type.Object({ query: Type.String({ minLength: 1 }) }, strict)),
    /** The status that acknowledges accepted events (Graph documents 202); default 200. */
    acceptedStatus: Type.Optional(Type.Union([Type.Literal(200), Type.Literal(202)])),
    /**
     * Subscriptions that expire unless renewed (Graph: at most 4230 minutes for Outlook resources;
     * Jira's dynamic webhooks: 30 days). Create and renew requests may send `{{expiresAt}}`, now plus
     * `lifetimeSeconds` in ISO 8601; the expiry kept is the answer's `expiresAt` when it has one,
     * else that time. Ferry renews before it comes, FERRY_SUBSCRIPTION_RENEWAL_LEAD_SECONDS ahead.
     */
    renewal: Type.Optional(
      Type.Object(
        {
          lifetimeSeconds: Type.Integer({ minimum: 60 }),
          /** Where the create's and the renewal's answers give the expiry. */
          expiresAt: Type.Optional(JsonPointerSchema),
          /** Extends one subscription (`{{subscriptionId}}`). */
          request: DeclaredRequestSchema,
        },
        strict,
      ),
    ),
    /** Changes the subscription in place; absent: it is deleted and created again. */
    update: Type.Optional(Type.Object({ request: DeclaredRequestSchema }, strict)),
    /** A 404 counts as done: the subscription is gone either way. */
    delete: Type.Optional(Type.Object({ request: DeclaredRequestSchema }, strict)),
    signature: WebhookSignatureSchema,
    event: Type.Object(
      {
        /** Where a body carrying several events lists them; absent: the body is one event. */
        list: Type.Optional(JsonPointerSchema),
        /**
         * Listed items that carry a value here tell of the subscription, not of a record (Graph's
         * lifecycle notifications, `/lifecycleEvent`): checked like the rest, acknowledged, not delivered.
         */
        notice: Type.Optional(JsonPointerSchema),
        /**
         * Notices that ask for the subscription to be renewed now (Graph's `reauthorizationRequired`,
         * and `subscriptionRemoved`: the renewal's 404 makes it again).
         */
        renewOn: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
        /** The event within the body (or each listed item), e.g. `/event`; default the whole. */
        root: Type.Optional(JsonPointerSchema),
        /** The provider's event id, for deduplication; several values are joined with `:`. */
        id: Type.Optional(Type.Union([WebhookValueSchema, Type.Array(WebhookValueSchema, { minItems: 1 })])),
        /** The provider account the event belongs to (HubSpot's `portalId`), for `appLevel` webhooks. */
        workspace: Type.Optional(JsonPointerSchema),
        /** The event's name, from these values joined with `.` (e.g. `/type` and `/action`). */
        type: Type.Array(WebhookValueSchema, { minItems: 1 }),
        /** The changed record's id (the first present of several: GitHub's `/issue/number`, `/label/name`); or `recordIds`. */
        recordId: Type.Optional(PointersSchema),
        /** A list of changed records' ids (Copper's `ids`): one event per id, each read by id. */
        recordIds: Type.Optional(JsonPointerSchema),
        /** The record as it is after the change; absent: Ferry reads it by id. */
        record: Type.Optional(PointersSchema),
        occurredAt: Type.Optional(
          Type.Object({ field: JsonPointerSchema, format: TimeFormatSchema }, strict),
        ),
        /**
         * Which fields changed: a list of names, an object whose keys are the names (previous values),
         * or one name; with `each`, a list of objects each naming one at that pointer (Jira's
         * `changelog.items[].fieldId`).
         */
        fieldsUpdated: Type.Optional(
          Type.Object(
            {
              pointer: JsonPointerSchema,
              as: Type.Enum(['list', 'keys', 'name']),
              each: Type.Optional(JsonPointerSchema),
            },
            strict,
          ),
        ),
      },
      strict,
    ),
    /** Per object, the provider event of each record change. */
    objects: Type.Record(
      Type.String({ minLength: 1 }),
      Type.Object(
        {
          create: Type.Optional(ChangeEventsSchema),
          update: Type.Optional(ChangeEventsSchema),
          delete: Type.Optional(ChangeEventsSchema),
          /** Put before a record id that lacks it: Shopify's deletions name `id` 123, its API `gid://shopify/Product/123`. */
          recordIdPrefix: Type.Optional(Type.String({ minLength: 1 })),
        },
        strict,
      ),
    ),
  },
  strict,
);
export type WebhooksDeclaration = Static<typeof WebhooksDeclarationSchema>;

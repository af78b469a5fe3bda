import Type, { type Static } from 'typebox';
import { DateTime, ProjectIdOrName, UpdateMask, Uuid } from './common.js';

const strict = { additionalProperties: false } as const;

const DestinationName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$',
  description: 'Unique in the project; read and subscribe objects name their destination by it.',
});

/**
 * The destination family's shapes. What each type's `metadata` and `secrets` hold is declared once,
 * in its module under src/delivery/types/; these generic shapes carry them through validation (the
 * domain checks them against the type's schema, naming the field) and the OpenAPI document lists
 * them per type (api/destinations.ts).
 */

/** The `type` a create takes: one of the registered types (the API passes the registry's names). */
const DestinationType = (names: readonly string[]) =>
  Type.Union(
    names.map((name) => Type.Literal(name)),
    {
      description:
        'The destination type. The public service’s snowflake, bigquery, redshift, pubsub, azureservicebus and clickhouse are not supported here (400).',
    },
  );

const MetadataObject = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      'The type’s settings; each type’s fields are listed under Destinations in the API description.',
  },
);

const SecretsObject = Type.Object(
  {},
  {
    additionalProperties: true,
    writeOnly: true,
    description:
      'The type’s credentials, stored encrypted and shown only with includeSecrets=true. A field of another type is refused.',
  },
);

export const DestinationSchema = Type.Object({
  id: Uuid,
  projectId: Uuid,
  name: Type.String(),
  type: Type.String({ description: 'The destination type: webhook, rabbitmq, postgres, nats, slack, …' }),
  metadata: Type.Object(
    {},
    {
      additionalProperties: true,
      description:
        'The type’s settings. A webhook’s header values are shown only with includeSecrets=true (`<redacted>` otherwise).',
    },
  ),
  secrets: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description:
        'Only with includeSecrets=true. A webhook’s is its current signing secret, as `signingSecret` and by the public API’s name `webhookSigningKey`.',
    }),
  ),
  disabled: Type.Boolean({
    description:
      'True once Ferry stopped delivering (a webhook answered 410, or the destination kept failing).',
  }),
  disableTime: Type.Optional(DateTime),
  createTime: DateTime,
  updateTime: DateTime,
});
export type DestinationView = Static<typeof DestinationSchema>;

/** The create body; `examples` (one per type) only document it. */
export const CreateDestinationBody = (typeNames: readonly string[], examples: unknown[] = []) =>
  Type.Object(
    {
      name: DestinationName,
      type: DestinationType(typeNames),
      metadata: Type.Optional(MetadataObject),
      secrets: Type.Optional(SecretsObject),
    },
    { ...strict, ...(examples.length && { examples }) },
  );

export const UpdateDestinationBody = Type.Object(
  {
    updateMask: UpdateMask,
    destination: Type.Object(
      {
        name: Type.Optional(DestinationName),
        metadata: Type.Optional(MetadataObject),
        secrets: Type.Optional(SecretsObject),
        disabled: Type.Optional(
          Type.Boolean({ description: 'false re-enables a disabled destination; true stops deliveries.' }),
        ),
      },
      strict,
    ),
  },
  strict,
);

export const DestinationParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  destinationNameOrId: Type.String({ minLength: 1, description: 'The destination’s name or ID.' }),
});

export const GetDestinationQuery = Type.Object({
  includeSecrets: Type.Optional(
    Type.Boolean({ default: false, description: 'Include the signing secret and header values.' }),
  ),
  rotate: Type.Optional(
    Type.Boolean({
      default: false,
      description:
        'Issue a new signing secret (returned); the previous one keeps signing for the grace period (FERRY_SECRET_ROTATION_GRACE_SECONDS).',
    }),
  ),
});

export const DestinationTestSchema = Type.Object(
  {
    messageId: Type.String({
      description: "The test message's id, as the destination received it (`messageId`, `Nats-Msg-Id`, …).",
    }),
    delivered: Type.Boolean({ description: 'The destination accepted the message.' }),
    durationMs: Type.Integer({ minimum: 0 }),
    status: Type.Optional(Type.Integer({ description: 'The HTTP status a webhook or Slack answered.' })),
    answer: Type.Optional(
      Type.String({
        description:
          "What the far side said: the start of a webhook's response body, or where the message went (queue, table, key).",
      }),
    ),
    error: Type.Optional(Type.String({ description: 'Why it was not delivered; never a secret.' })),
    retryable: Type.Optional(
      Type.Boolean({
        description:
          'A failure a later attempt could get past (a timeout, a 5xx), as deliveries would retry it.',
      }),
    ),
  },
  {
    description:
      "The answer to one test message, sent now and once: no retry, no attempt in the delivery ledger, no change to the destination's health.",
  },
);
export type DestinationTestView = Static<typeof DestinationTestSchema>;

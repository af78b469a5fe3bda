import Type, { type Static } from 'typebox';
import { DateTime, ProjectIdOrName, Secret, UpdateMask, Uuid } from './common.js';

const strict = { additionalProperties: false } as const;

const DestinationName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$',
  description: 'Unique in the project; read and subscribe objects name their destination by it.',
});

const WebhookUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    'An http(s) URL. Private, loopback and link-local addresses are refused unless FERRY_ALLOW_PRIVATE_DESTINATIONS is on.',
});

const Headers = Type.Record(Type.String(), Secret({ maxLength: 8192 }), {
  description:
    'Extra request headers (for example an Authorization header). Stored encrypted; values are shown only with includeSecrets=true.',
});

const SigningSecret = Secret({
  minLength: 1,
  description: 'A Standard Webhooks secret, `whsec_` and base64. Generated when absent.',
});

export const DestinationSchema = Type.Object({
  id: Uuid,
  projectId: Uuid,
  name: Type.String(),
  type: Type.String({ description: 'The destination type: webhook, rabbitmq, postgres, nats, slack, …' }),
  metadata: Type.Object({ url: Type.String(), headers: Type.Record(Type.String(), Type.String()) }),
  secrets: Type.Optional(
    Type.Object({
      signingSecret: Type.String({
        description: 'The current signing secret. Only with includeSecrets=true.',
      }),
      webhookSigningKey: Type.String({ description: 'The same secret, by the public API’s name for it.' }),
    }),
  ),
  disabled: Type.Boolean({
    description: 'True once Ferry stopped delivering (the receiver answered 410, or kept failing).',
  }),
  disableTime: Type.Optional(DateTime),
  createTime: DateTime,
  updateTime: DateTime,
});
export type DestinationView = Static<typeof DestinationSchema>;

export const CreateDestinationBody = Type.Object(
  {
    name: DestinationName,
    type: Type.Literal('webhook'),
    metadata: Type.Object({ url: WebhookUrl, headers: Type.Optional(Headers) }, strict),
    secrets: Type.Optional(
      Type.Object(
        { signingSecret: Type.Optional(SigningSecret), webhookSigningKey: Type.Optional(SigningSecret) },
        strict,
      ),
    ),
  },
  strict,
);

export const UpdateDestinationBody = Type.Object(
  {
    updateMask: UpdateMask,
    destination: Type.Object(
      {
        name: Type.Optional(DestinationName),
        metadata: Type.Optional(
          Type.Object({ url: Type.Optional(WebhookUrl), headers: Type.Optional(Headers) }, strict),
        ),
        secrets: Type.Optional(
          Type.Object(
            { signingSecret: Type.Optional(SigningSecret), webhookSigningKey: Type.Optional(SigningSecret) },
            strict,
          ),
        ),
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

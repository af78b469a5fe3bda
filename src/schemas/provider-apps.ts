import Type, { type Static } from 'typebox';
import { DateTime, ProjectPathParams, Secret, UpdateMask, Uuid } from './common.js';

const Scope = Type.String({ minLength: 1, maxLength: 512 });

/**
 * The spec's "array of arrays" comes from the example attached to each item in the public document;
 * its ProviderApp has a flat list. Both are accepted; answers are flat.
 */
export const ProviderAppScopesInput = Type.Union(
  [Type.Array(Scope, { maxItems: 500 }), Type.Array(Type.Array(Scope, { maxItems: 500 }), { maxItems: 50 })],
  { description: 'Scopes requested at authorization: a list, or lists of scopes (all are requested).' },
);

export const ProviderAppMetadataSchema = Type.Object(
  {
    authQueryParams: Type.Optional(
      Type.Record(
        Type.String({ minLength: 1, maxLength: 100 }),
        Type.Array(Type.String({ maxLength: 1000 })),
        {
          description:
            'Extra query parameters of the authorization URL, e.g. `optional_scope`; several values are joined with spaces.',
        },
      ),
    ),
    providerParams: Type.Optional(
      Type.Object(
        {
          packageInstallURL: Type.Optional(Type.String()),
          gcpProjectId: Type.Optional(Type.String()),
          gcpPubSubTopicName: Type.Optional(Type.String()),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const ProviderAppSchema = Type.Object({
  id: Uuid,
  projectId: Uuid,
  provider: Type.String(),
  externalRef: Type.Optional(Type.String({ description: 'The builder’s own identifier of the app.' })),
  clientId: Type.String(),
  scopes: Type.Array(Type.String(), { description: 'Every scope requested at authorization.' }),
  metadata: ProviderAppMetadataSchema,
  createTime: DateTime,
  updateTime: DateTime,
});
export type ProviderAppView = Static<typeof ProviderAppSchema>;

const ClientId = Type.String({ minLength: 1, maxLength: 1000 });
const ClientSecret = Secret({
  minLength: 1,
  maxLength: 4000,
  description: 'Write-only: stored encrypted, never returned.',
});
const ExternalRef = Type.String({ minLength: 1, maxLength: 255 });

export const CreateProviderAppBody = Type.Object(
  {
    provider: Type.String({ minLength: 1, description: 'An OAuth 2.0 provider of the catalog.' }),
    clientId: ClientId,
    clientSecret: ClientSecret,
    externalRef: Type.Optional(ExternalRef),
    scopes: Type.Optional(ProviderAppScopesInput),
    metadata: Type.Optional(ProviderAppMetadataSchema),
  },
  { additionalProperties: false },
);
export type CreateProviderAppInput = Static<typeof CreateProviderAppBody>;

export const UpdateProviderAppBody = Type.Object(
  {
    updateMask: UpdateMask,
    providerApp: Type.Object(
      {
        provider: Type.Optional(
          Type.String({ readOnly: true, description: 'Not updatable; create another app instead.' }),
        ),
        clientId: Type.Optional(ClientId),
        clientSecret: Type.Optional(ClientSecret),
        externalRef: Type.Optional(ExternalRef),
        scopes: Type.Optional(ProviderAppScopesInput),
        metadata: Type.Optional(ProviderAppMetadataSchema),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type UpdateProviderAppInput = Static<typeof UpdateProviderAppBody>;

export const ProviderAppParams = Type.Object({
  ...ProjectPathParams.properties,
  providerAppId: Type.String({ minLength: 1, description: 'The provider app ID.' }),
});

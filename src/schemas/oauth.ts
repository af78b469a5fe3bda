import Type, { type Static } from 'typebox';
import { ProjectIdOrName } from './common.js';
import { ConsumerRef, GroupRef, ProviderMetadataInput, ProviderWorkspaceRef } from './connections.js';

const DisplayName = Type.String({ minLength: 1, maxLength: 255 });

export const OAuthConnectBody = Type.Object(
  {
    projectIdOrName: ProjectIdOrName,
    provider: Type.String({ minLength: 1 }),
    groupRef: GroupRef,
    consumerRef: ConsumerRef,
    groupName: Type.Optional(DisplayName),
    consumerName: Type.Optional(DisplayName),
    providerWorkspaceRef: Type.Optional(ProviderWorkspaceRef),
    providerMetadata: Type.Optional(ProviderMetadataInput),
    providerAppId: Type.Optional(
      Type.String({ minLength: 1, description: 'When omitted, the project’s first app for the provider.' }),
    ),
    enableCSRFProtection: Type.Optional(
      Type.Boolean({
        description: 'Accepted for compatibility with the UI library; the state is always single-use.',
      }),
    ),
    redirectUrl: Type.Optional(
      Type.String({
        format: 'uri',
        pattern: '^https?://',
        maxLength: 2000,
        description:
          'Ferry extension: after the callback, redirect here with `status`, `connectionId` or `error` instead of showing the result page.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type OAuthConnectInput = Static<typeof OAuthConnectBody>;

export const AuthorizationUrlSchema = Type.String({
  format: 'uri',
  description: 'The provider’s authorization URL; open it in a browser (a popup or a redirect).',
});

/** Everything is optional: the callback answers every malformed request with its HTML page. */
export const OAuthCallbackQuery = Type.Object({
  code: Type.Optional(Type.String()),
  state: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
  error_description: Type.Optional(Type.String()),
});

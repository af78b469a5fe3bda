import Type, { type Static } from 'typebox';
import { DateTime, NfcName, ProjectPathParams, Secret, UpdateMask, Uuid } from './common.js';
import { ProviderAppSchema } from './provider-apps.js';

export const GroupSchema = Type.Object({
  groupRef: Type.String({ description: 'The builder’s id of the customer organisation or workspace.' }),
  groupName: Type.String(),
  projectId: Uuid,
  createTime: DateTime,
  updateTime: DateTime,
});
export type GroupView = Static<typeof GroupSchema>;

export const ConsumerSchema = Type.Object({
  consumerRef: Type.String({ description: 'The builder’s id of the user whose credentials are used.' }),
  consumerName: Type.String(),
  projectId: Uuid,
  createTime: DateTime,
  updateTime: DateTime,
});
export type ConsumerView = Static<typeof ConsumerSchema>;

export const GroupRef = NfcName({ minLength: 1, maxLength: 255 });
export const ConsumerRef = NfcName({ minLength: 1, maxLength: 255 });
const DisplayName = Type.String({ minLength: 1, maxLength: 255 });

/** Workspace values end up in provider host names (`{{.workspace}}.my.salesforce.com`): no `/`, `@`, `:`. */
export const ProviderWorkspaceRef = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern: '^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$',
  description: 'The provider workspace (tenant, subdomain) identifier.',
});

export const ProviderMetadataEntry = Type.Object(
  {
    value: Type.String({ maxLength: 2000 }),
    source: Type.Optional(
      Type.String({ maxLength: 100, description: 'Where the value came from: input, token...' }),
    ),
  },
  { additionalProperties: false },
);

export const ProviderMetadataInput = Type.Record(
  Type.String({ minLength: 1, maxLength: 100 }),
  Type.Union([Type.String({ maxLength: 2000 }), ProviderMetadataEntry]),
  {
    description: 'Provider-specific values, name to `{value, source}` (a bare string is taken as the value).',
  },
);
export type ProviderMetadataInputValue = Static<typeof ProviderMetadataInput>;

const StoredMetadataEntry = Type.Object({ value: Type.String(), source: Type.String() });
export type ProviderMetadata = Record<string, Static<typeof StoredMetadataEntry>>;

const TokenSchema = Type.Object({
  token: Type.String(),
  issuedAt: Type.Optional(DateTime),
  expiresAt: Type.Optional(DateTime),
});

export const ConnectionSchema = Type.Object({
  id: Uuid,
  projectId: Uuid,
  provider: Type.String(),
  group: GroupSchema,
  consumer: ConsumerSchema,
  providerApp: Type.Optional(ProviderAppSchema),
  providerWorkspaceRef: Type.Optional(Type.String()),
  providerConsumerRef: Type.Optional(Type.String()),
  authScheme: Type.String({
    description:
      '`oauth2/authorizationCode`, `oauth2/clientCredentials`, `oauth2/password`, `apiKey`, `basic`, `jwt`, `custom` or `none`.',
  }),
  status: Type.String({
    description:
      '`working`; `bad_credentials` once the provider refused the credentials (re-authorize with `:oauth-update`).',
  }),
  oauth2AuthorizationCode: Type.Optional(
    Type.Object(
      {
        accessToken: Type.Optional(TokenSchema),
        refreshToken: Type.Optional(TokenSchema),
        scopes: Type.Array(Type.String()),
      },
      {
        description:
          'Only `scopes` unless `includeCreds=true`; the refresh token needs `includeRefreshToken=true`.',
      },
    ),
  ),
  oauth2ClientCredentials: Type.Optional(
    Type.Object({
      clientId: Type.Optional(Type.String()),
      clientSecret: Type.Optional(Type.String()),
      accessToken: Type.Optional(TokenSchema),
      scopes: Type.Array(Type.String()),
    }),
  ),
  oauth2Password: Type.Optional(
    Type.Object(
      {
        username: Type.Optional(Type.String()),
        password: Type.Optional(Type.String()),
        clientId: Type.Optional(Type.String()),
        accessToken: Type.Optional(TokenSchema),
        scopes: Type.Array(Type.String()),
      },
      { description: 'Only `scopes` unless `includeCreds=true`; the client secret is never returned.' },
    ),
  ),
  apiKey: Type.Optional(Type.String({ description: 'Only with `includeCreds=true`.' })),
  basicAuth: Type.Optional(
    Type.Object(
      { username: Type.String(), password: Type.String() },
      { description: 'Only with `includeCreds=true`.' },
    ),
  ),
  jwt: Type.Optional(
    Type.Object(
      {
        issuer: Type.Optional(Type.String()),
        subject: Type.Optional(Type.String()),
        keyId: Type.Optional(Type.String()),
        accessToken: Type.Optional(TokenSchema),
        scopes: Type.Array(Type.String()),
      },
      {
        description:
          'A JWT bearer connection: only `scopes` unless `includeCreds=true` (issuer, subject, key id, access token). The private key is never returned.',
      },
    ),
  ),
  customAuth: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description: 'The values of the provider’s `customOpts.inputs`; only with `includeCreds=true`.',
    }),
  ),
  providerMetadata: Type.Record(Type.String(), StoredMetadataEntry),
  createTime: DateTime,
  updateTime: DateTime,
});
export type ConnectionView = Static<typeof ConnectionSchema>;

export const ConnectionParams = Type.Object({
  ...ProjectPathParams.properties,
  connectionId: Type.String({ minLength: 1, description: 'The connection ID.' }),
});

export const ListConnectionsQuery = Type.Object({
  provider: Type.Optional(Type.String({ minLength: 1 })),
  groupRef: Type.Optional(GroupRef),
  consumerRef: Type.Optional(ConsumerRef),
});

export const GetConnectionQuery = Type.Object({
  includeCreds: Type.Optional(
    Type.Boolean({ default: false, description: 'Add the decrypted credentials.' }),
  ),
  includeRefreshToken: Type.Optional(
    Type.Boolean({ default: false, description: 'With includeCreds, also the OAuth refresh token.' }),
  ),
  refresh: Type.Optional(
    Type.Union([Type.Literal('ifExpired'), Type.Literal('force')], {
      description: 'Refresh the OAuth access token first: when it is (nearly) expired, or always.',
    }),
  ),
});

/**
 * A credential that travels in a request header (an API key, a bearer token): printable ASCII, so
 * that it is refused here rather than break every call made with it (CR/LF, non-Latin-1 text).
 */
const HeaderCredential = Type.String({
  minLength: 1,
  maxLength: 8000,
  pattern: '^[\\x20-\\x7E]+$',
  writeOnly: true,
  description: 'Printable ASCII: it is sent in a header.',
});

const TokenInput = Type.Union(
  [
    HeaderCredential,
    Type.Object(
      {
        token: HeaderCredential,
        issuedAt: Type.Optional(DateTime),
        expiresAt: Type.Optional(DateTime),
      },
      { additionalProperties: false },
    ),
  ],
  { writeOnly: true },
);
export type TokenInputValue = Static<typeof TokenInput>;

const Scopes = Type.Array(Type.String({ minLength: 1, maxLength: 512 }), { maxItems: 500 });

export const GenerateConnectionBody = Type.Object(
  {
    provider: Type.String({ minLength: 1 }),
    groupRef: GroupRef,
    groupName: Type.Optional(DisplayName),
    consumerRef: ConsumerRef,
    consumerName: Type.Optional(DisplayName),
    providerWorkspaceRef: Type.Optional(ProviderWorkspaceRef),
    providerMetadata: Type.Optional(ProviderMetadataInput),
    apiKey: Type.Optional(HeaderCredential),
    basicAuth: Type.Optional(
      Type.Object(
        { username: Type.String({ maxLength: 1000 }), password: Secret({ maxLength: 8000 }) },
        { additionalProperties: false },
      ),
    ),
    oauth2ClientCredentials: Type.Optional(
      Type.Object(
        {
          clientId: Type.String({ minLength: 1, maxLength: 1000 }),
          clientSecret: Secret({ minLength: 1, maxLength: 4000 }),
          scopes: Type.Optional(Scopes),
        },
        { additionalProperties: false },
      ),
    ),
    oauth2AuthorizationCode: Type.Optional(
      Type.Object(
        { accessToken: TokenInput, refreshToken: Type.Optional(TokenInput), scopes: Type.Optional(Scopes) },
        { additionalProperties: false },
      ),
    ),
    oauth2Password: Type.Optional(
      Type.Object(
        {
          username: Type.String({ minLength: 1, maxLength: 1000 }),
          password: Secret({ minLength: 1, maxLength: 8000 }),
          clientId: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
          clientSecret: Type.Optional(Secret({ maxLength: 4000 })),
          scopes: Type.Optional(Scopes),
        },
        {
          additionalProperties: false,
          description:
            'For providers on the OAuth 2.0 password grant (SugarCRM): the user’s own login; a token is fetched now. Without clientId, the provider’s public client is used.',
        },
      ),
    ),
    jwt: Type.Optional(
      Type.Object(
        {
          privateKey: Secret({
            minLength: 1,
            description:
              'PEM RSA private key (PKCS#8 or PKCS#1, unencrypted), e.g. `private_key` of a Google service-account key file. Stored encrypted, never returned.',
          }),
          issuer: Type.String({
            minLength: 1,
            maxLength: 1000,
            description:
              'The `iss` claim: service-account e-mail (Google), consumer key (Salesforce), integration key (DocuSign).',
          }),
          subject: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 1000,
              description: 'The `sub` claim: the user the service acts as, where the provider needs one.',
            }),
          ),
          keyId: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 200,
              description: 'The `kid` header (Google `private_key_id`).',
            }),
          ),
          scopes: Type.Optional(Scopes),
        },
        { additionalProperties: false },
      ),
    ),
    customAuth: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Secret({ maxLength: 8000 }), {
        description:
          'For `custom` providers: a value for each of the provider’s `customOpts.inputs`, by name.',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Exactly one of apiKey, basicAuth, oauth2ClientCredentials, oauth2AuthorizationCode, oauth2Password, jwt, customAuth; none for a provider whose authType is `none`.',
  },
);
export type GenerateConnectionInput = Static<typeof GenerateConnectionBody>;

/** Credentials a PATCH may rotate (the public React components' "Update connection"). */
export const rotatableCredentials = ['apiKey', 'basicAuth', 'oauth2ClientCredentials'] as const;

export const UpdateConnectionBody = Type.Object(
  {
    updateMask: UpdateMask,
    connection: Type.Object(
      {
        providerWorkspaceRef: Type.Optional(ProviderWorkspaceRef),
        providerMetadata: Type.Optional(ProviderMetadataInput),
        apiKey: GenerateConnectionBody.properties.apiKey,
        basicAuth: GenerateConnectionBody.properties.basicAuth,
        oauth2ClientCredentials: GenerateConnectionBody.properties.oauth2ClientCredentials,
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type UpdateConnectionInput = Static<typeof UpdateConnectionBody>;

/**
 * `POST /custom-auth/connect`, as the public React components send it for a `custom` provider: the
 * first step names the group and gives `customAuth`; `sessionId` and `callbackParams` resume a
 * multi-step flow, which no provider of Ferry's catalog has.
 */
export const CustomAuthConnectBody = Type.Object(
  {
    projectIdOrName: Type.String({ minLength: 1, description: 'The project ID or name.' }),
    provider: Type.Optional(
      Type.String({ minLength: 1, description: 'A provider whose authType is `custom`.' }),
    ),
    groupRef: Type.Optional(GroupRef),
    groupName: Type.Optional(DisplayName),
    consumerRef: Type.Optional(ConsumerRef),
    consumerName: Type.Optional(DisplayName),
    providerMetadata: Type.Optional(ProviderMetadataInput),
    providerAppId: Type.Optional(
      Type.String({ description: 'Accepted for compatibility; custom auth uses no app.' }),
    ),
    customAuth: GenerateConnectionBody.properties.customAuth,
    sessionId: Type.Optional(Type.String({ description: 'A multi-step flow to resume; Ferry has none.' })),
    callbackParams: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  { additionalProperties: false },
);
export type CustomAuthConnectInput = Static<typeof CustomAuthConnectBody>;

export const CustomAuthConnectResponse = Type.Object({
  connection: ConnectionSchema,
});

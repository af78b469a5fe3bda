import Type, { type Static } from 'typebox';

/**
 * How a catalog provider authenticates: its auth type and the options each type needs (OAuth 2,
 * API key, basic, JWT bearer, custom headers and query), the health check that proves credentials,
 * and the alternative methods a provider also accepts. Part of the spec's Provider shape
 * (provider.ts), kept apart because auth is most of it.
 */

export const TemplatedURL = (description: string) => Type.String({ minLength: 1, description });

export const AuthTypeSchema = Type.Union(
  [
    Type.Literal('oauth2'),
    Type.Literal('apiKey'),
    Type.Literal('basic'),
    Type.Literal('jwt'),
    Type.Literal('custom'),
    Type.Literal('none'),
  ],
  { description: 'How a connection to the provider authenticates.' },
);
export type AuthType = Static<typeof AuthTypeSchema>;

export const OAuth2GrantTypeSchema = Type.Union(
  [
    Type.Literal('authorizationCode'),
    Type.Literal('authorizationCodePKCE'),
    Type.Literal('clientCredentials'),
    Type.Literal('password'),
  ],
  {
    description:
      'The OAuth 2.0 grant. `authorizationCodePKCE`: the provider requires PKCE; `authorizationCode` with `pkce: true`: the provider supports it and Ferry uses it.',
  },
);
export type OAuth2GrantType = Static<typeof OAuth2GrantTypeSchema>;

export const TokenMetadataFieldsSchema = Type.Object(
  {
    consumerRefField: Type.Optional(
      Type.String({ description: 'Dotted path, in the token response, of the authorizing user’s id.' }),
    ),
    workspaceRefField: Type.Optional(
      Type.String({ description: 'Dotted path, in the token response, of the workspace (tenant) id.' }),
    ),
    scopesField: Type.Optional(
      Type.String({ description: 'Dotted path, in the token response, of the granted scopes.' }),
    ),
    otherFields: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({
              minLength: 1,
              description: 'Connection metadata key the value is stored under.',
            }),
            path: Type.String({
              minLength: 1,
              description: 'Dotted path of the value in the token response.',
            }),
            displayName: Type.String({ description: 'Human-readable name.' }),
          },
          { additionalProperties: false },
        ),
        { description: 'Further token-response values kept as connection metadata.' },
      ),
    ),
  },
  { additionalProperties: false, description: 'Where facts about the connection sit in the token response.' },
);

export const OAuth2OptsSchema = Type.Object(
  {
    grantType: OAuth2GrantTypeSchema,
    authURL: Type.Optional(
      TemplatedURL('Authorization endpoint; required for the authorization-code grants.'),
    ),
    tokenURL: TemplatedURL('Token endpoint.'),
    explicitScopesRequired: Type.Boolean({
      description: 'True: the provider app must name its scopes; the provider has no usable default.',
    }),
    explicitWorkspaceRequired: Type.Boolean({
      description: 'True: the user must name a workspace (tenant) before authorization starts.',
    }),
    tokenMetadataFields: TokenMetadataFieldsSchema,
    defaultScopes: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description: 'Scopes requested when the provider app names none.',
      }),
    ),
    pkce: Type.Optional(Type.Boolean({ description: 'True: Ferry sends a PKCE (S256) code challenge.' })),
    scopeSeparator: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'Separator of scopes in the authorization URL; a space if absent.',
      }),
    ),
    clientAuthMethod: Type.Optional(
      Type.Union([Type.Literal('clientSecretPost'), Type.Literal('clientSecretBasic')], {
        description:
          'How the client authenticates to the token endpoint: credentials in the form body or HTTP Basic.',
      }),
    ),
    tokenParams: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description:
          'Extra form parameters of password-grant token requests and their refreshes (SugarCRM: its public client `sugar`, an empty secret, `platform`); a connection’s own client replaces client_id and client_secret.',
      }),
    ),
    authURLParams: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description:
          'Extra query parameters of the authorization URL (e.g. `access_type=offline`, `audience`).',
      }),
    ),
  },
  {
    additionalProperties: false,
    description: 'OAuth 2.0 options; present when authType is oauth2.',
    allOf: [
      {
        if: { properties: { grantType: { enum: ['authorizationCode', 'authorizationCodePKCE'] } } },
        then: { required: ['authURL'] },
      },
    ],
  },
);
export type ProviderOAuth2Opts = Static<typeof OAuth2OptsSchema>;

export const ApiKeyOptsSchema = Type.Object(
  {
    attachmentType: Type.Union([Type.Literal('header'), Type.Literal('query')], {
      description: 'Where the key goes on each request.',
    }),
    header: Type.Optional(
      Type.Object(
        {
          name: Type.String({ minLength: 1, description: 'Header name.' }),
          valuePrefix: Type.Optional(Type.String({ description: 'Prefix before the key, e.g. `Bearer `.' })),
        },
        { additionalProperties: false, description: 'Required when attachmentType is header.' },
      ),
    ),
    query: Type.Optional(
      Type.Object(
        { name: Type.String({ minLength: 1, description: 'Query parameter name.' }) },
        { additionalProperties: false, description: 'Required when attachmentType is query.' },
      ),
    ),
    docsURL: Type.Optional(
      Type.String({ minLength: 1, description: 'Where the provider documents how to get a key.' }),
    ),
  },
  {
    additionalProperties: false,
    description: 'API key options; present when authType is apiKey.',
    allOf: [
      { if: { properties: { attachmentType: { const: 'header' } } }, then: { required: ['header'] } },
      { if: { properties: { attachmentType: { const: 'query' } } }, then: { required: ['query'] } },
    ],
  },
);
export type ProviderApiKeyOpts = Static<typeof ApiKeyOptsSchema>;

export const BasicOptsSchema = Type.Object(
  {
    apiKeyAsBasic: Type.Optional(
      Type.Boolean({ description: 'True: the provider takes an API key as one half of Basic credentials.' }),
    ),
    apiKeyAsBasicOpts: Type.Optional(
      Type.Object(
        {
          fieldUsed: Type.Union([Type.Literal('username'), Type.Literal('password')], {
            description: 'Which Basic field holds the key; the other is empty.',
          }),
          keyFormat: Type.Optional(
            Type.String({ description: 'Format of that field, `%s` standing for the key.' }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    usernameFormat: Type.Optional(
      Type.String({
        pattern: '%s',
        description:
          'Format of the Basic username, `%s` standing for the username the connection gives (Zendesk API tokens: `%s/token`); a username already in that form is sent as it is. Ferry’s own field.',
      }),
    ),
    docsURL: Type.Optional(Type.String({ description: 'Where the provider documents its credentials.' })),
  },
  { additionalProperties: false, description: 'HTTP Basic options.' },
);

export const JwtOptsSchema = Type.Object(
  {
    tokenURL: TemplatedURL('Token endpoint that takes the signed assertion (RFC 7523 JWT bearer grant).'),
    audience: Type.Optional(
      TemplatedURL('The assertion’s `aud` claim; the token URL if absent (Google uses its token URL).'),
    ),
    algorithm: Type.Optional(
      Type.Literal('RS256', { description: 'Signature algorithm of the assertion; RS256 if absent.' }),
    ),
    subjectRequired: Type.Boolean({
      description:
        'True: the connection must name a subject (`sub`), the user the service acts as (Salesforce, DocuSign).',
    }),
    scopeClaim: Type.Optional(
      Type.Boolean({
        description:
          'True: scopes go in the assertion’s `scope` claim (Google); otherwise in the form’s `scope` parameter, if any.',
      }),
    ),
    defaultScopes: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description: 'Scopes requested when the connection names none.',
      }),
    ),
    assertionLifetimeSeconds: Type.Optional(
      Type.Integer({
        minimum: 30,
        maximum: 3600,
        description: 'Seconds from `iat` to `exp` of each assertion; 3600 if absent.',
      }),
    ),
    docsURL: Type.Optional(
      Type.String({ minLength: 1, description: 'Where the provider documents its JWT bearer flow.' }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'JWT bearer options (RFC 7523); present when authType is jwt. The connection holds a private key and the issuer; Ferry signs an assertion and exchanges it for an access token.',
  },
);
export type ProviderJwtOpts = Static<typeof JwtOptsSchema>;

const NameTemplateSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, description: 'Header or query parameter name.' }),
    valueTemplate: Type.String({ description: 'Value, with `{{.input}}` placeholders from `inputs`.' }),
  },
  { additionalProperties: false },
);

export const CustomOptsSchema = Type.Object(
  {
    headers: Type.Optional(Type.Array(NameTemplateSchema, { description: 'Headers added to each request.' })),
    queryParams: Type.Optional(
      Type.Array(NameTemplateSchema, { description: 'Query parameters added to each request.' }),
    ),
    inputs: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ minLength: 1, description: 'Placeholder name.' }),
            displayName: Type.String({ description: 'Label shown to the user.' }),
            prompt: Type.Optional(Type.String({ description: 'Help text shown to the user.' })),
            docsURL: Type.Optional(Type.String({ description: 'Where the provider documents the value.' })),
          },
          { additionalProperties: false },
        ),
        { description: 'Credentials the user enters.' },
      ),
    ),
  },
  { additionalProperties: false, description: 'Options of providers with a custom scheme.' },
);

export const AuthHealthCheckSchema = Type.Object(
  {
    url: TemplatedURL('A cheap endpoint that succeeds only with valid credentials.'),
    method: Type.Optional(
      Type.Union([Type.Literal('GET'), Type.Literal('POST'), Type.Literal('HEAD')], {
        description: 'HTTP method; GET if absent.',
      }),
    ),
    successStatusCodes: Type.Optional(
      Type.Array(Type.Integer({ minimum: 100, maximum: 599 }), {
        description: 'Healthy statuses; any 2xx if absent.',
      }),
    ),
  },
  { additionalProperties: false, description: 'Checks credential validity and provider reachability.' },
);

/** The `*Opts` object each auth type requires, for the catalog's own checks and messages. */
export const requiredAuthOpts = {
  oauth2: 'oauth2Opts',
  apiKey: 'apiKeyOpts',
  jwt: 'jwtOpts',
} as const;

export const authOptsRules = Object.entries(requiredAuthOpts).map(([authType, opts]) => ({
  if: { properties: { authType: { const: authType } } },
  then: { required: [opts] },
}));

/**
 * Another way the provider documents to authenticate, beside its main `authType` (a Pipedrive API
 * token beside OAuth, a HubSpot private-app token, a Zendesk API token as Basic): a connection made
 * with it still names the same provider, and runs every integration of that provider. Ferry's own
 * field: clients that know only the public shape read the main method and ignore this.
 */
export const AlternativeAuthSchema = Type.Object(
  {
    authType: Type.Union(
      [
        Type.Literal('oauth2'),
        Type.Literal('apiKey'),
        Type.Literal('basic'),
        Type.Literal('jwt'),
        Type.Literal('custom'),
      ],
      { description: 'How a connection made with this method authenticates.' },
    ),
    displayName: Type.String({
      minLength: 1,
      description: 'What the provider calls the credential (`API token`, `Private app access token`).',
    }),
    docsURL: Type.Optional(
      Type.String({ minLength: 1, description: 'Where the provider documents this method.' }),
    ),
    oauth2Opts: Type.Optional(OAuth2OptsSchema),
    apiKeyOpts: Type.Optional(ApiKeyOptsSchema),
    basicOpts: Type.Optional(BasicOptsSchema),
    customOpts: Type.Optional(CustomOptsSchema),
    jwtOpts: Type.Optional(JwtOptsSchema),
  },
  {
    additionalProperties: false,
    description:
      'An authentication method besides the main one, with the options of its auth type; present the way the provider documents it.',
    allOf: authOptsRules,
  },
);
export type AlternativeAuth = Static<typeof AlternativeAuthSchema>;

import Type, { type Static } from 'typebox';
import {
  AlternativeAuthSchema,
  ApiKeyOptsSchema,
  AuthHealthCheckSchema,
  AuthTypeSchema,
  BasicOptsSchema,
  CustomOptsSchema,
  JwtOptsSchema,
  OAuth2OptsSchema,
  TemplatedURL,
  authOptsRules,
} from './provider-auth.js';

export * from './provider-auth.js';

/**
 * The spec's Provider shape: what `GET /v1/providers` and `GET /v1/providers/{provider}` return,
 * and what every file of Ferry's provider catalog must satisfy.
 *
 * URL strings may hold `{{.name}}` placeholders. Most are filled from the connection's metadata
 * (declared in `metadata.input` or `metadata.postAuthentication`); `{{.sandboxURL}}` is filled by
 * Ferry from its own configuration.
 */

export const BulkWriteSupportSchema = Type.Object(
  {
    insert: Type.Boolean({ description: 'Bulk insert of records.' }),
    update: Type.Boolean({ description: 'Bulk update of records.' }),
    upsert: Type.Boolean({ description: 'Bulk upsert of records.' }),
    delete: Type.Boolean({ description: 'Bulk delete of records.' }),
  },
  {
    additionalProperties: false,
    description: 'Which bulk write operations Ferry supports for the provider.',
  },
);

export const SubscribeSupportSchema = Type.Object(
  {
    create: Type.Boolean({ description: 'Events for created records.' }),
    update: Type.Boolean({ description: 'Events for updated records.' }),
    delete: Type.Boolean({ description: 'Events for deleted records.' }),
    passThrough: Type.Boolean({ description: 'Provider events delivered as they arrive, untranslated.' }),
  },
  { additionalProperties: false, description: 'Which subscription events Ferry supports for the provider.' },
);

export const SupportSchema = Type.Object(
  {
    bulkWrite: BulkWriteSupportSchema,
    proxy: Type.Boolean({
      description: 'Requests can be proxied to the provider with the connection’s credentials.',
    }),
    read: Type.Boolean({ description: 'Ferry can read records (incremental, paginated, chosen fields).' }),
    subscribe: Type.Boolean({ description: 'Ferry can subscribe to record changes.' }),
    write: Type.Boolean({ description: 'Ferry can create and update records.' }),
    delete: Type.Boolean({ description: 'Ferry can delete records by id.' }),
    search: Type.Object(
      {
        operators: Type.Object(
          { equals: Type.Boolean({ description: 'Search by field equality.' }) },
          { additionalProperties: false, description: 'Supported search operators.' },
        ),
      },
      { additionalProperties: false, description: 'Record search support.' },
    ),
    subscribeSupport: SubscribeSupportSchema,
  },
  { additionalProperties: false, description: 'What Ferry supports for the provider (or module).' },
);
export type ProviderSupport = Static<typeof SupportSchema>;

const MediaImagesSchema = Type.Object(
  {
    iconURL: Type.Optional(Type.String({ description: 'Square icon.' })),
    logoURL: Type.Optional(Type.String({ description: 'Full logo.' })),
  },
  { additionalProperties: false },
);

export const MediaSchema = Type.Object(
  { regular: Type.Optional(MediaImagesSchema), darkMode: Type.Optional(MediaImagesSchema) },
  { additionalProperties: false, description: 'Images for light and dark backgrounds.' },
);

const moduleProperties = {
  id: Type.String({ minLength: 1, description: 'Module id, equal to its key.' }),
  label: Type.String({ description: 'Short label.' }),
  baseURL: TemplatedURL('Base URL of the module’s API.'),
  displayName: Type.String({ description: 'Human-readable name.' }),
};

export const ModuleSchema = Type.Object(
  { ...moduleProperties, support: SupportSchema },
  { additionalProperties: false, description: 'A part of the provider’s API with its own base URL.' },
);
export type ProviderModule = Static<typeof ModuleSchema>;

export const MetadataInputSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, description: 'Placeholder name used in URL templates.' }),
    displayName: Type.Optional(Type.String({ description: 'Label shown to the user.' })),
    prompt: Type.Optional(Type.String({ description: 'Help text shown to the user.' })),
    defaultValue: Type.Optional(Type.String({ description: 'Value used when the user gives none.' })),
    allowedValues: Type.Optional(
      Type.Array(Type.String(), {
        description: 'The only values accepted; required for a value that forms a whole host name.',
      }),
    ),
    docsURL: Type.Optional(Type.String({ description: 'Where the provider documents the value.' })),
    moduleDependencies: Type.Optional(
      Type.Array(Type.String(), { description: 'Modules that need the value; all if absent.' }),
    ),
  },
  { additionalProperties: false },
);
export type ProviderMetadataInput = Static<typeof MetadataInputSchema>;

export const ProviderMetadataSchema = Type.Object(
  {
    input: Type.Optional(
      Type.Array(MetadataInputSchema, {
        description: 'Connection metadata the user enters before authorization.',
      }),
    ),
    postAuthentication: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ minLength: 1, description: 'Placeholder name used in URL templates.' }),
            moduleDependencies: Type.Optional(
              Type.Array(Type.String(), { description: 'Modules that need the value; all if absent.' }),
            ),
          },
          { additionalProperties: false },
        ),
        { description: 'Connection metadata learnt after authorization (token response or an API call).' },
      ),
    ),
  },
  { additionalProperties: false, description: 'Connection metadata the provider’s URLs need.' },
);

const providerProperties = {
  name: Type.String({ pattern: '^[a-z][A-Za-z0-9]*$', description: 'Provider name, camelCase.' }),
  authType: AuthTypeSchema,
  baseURL: TemplatedURL('Base URL of the provider’s API; may hold `{{.name}}` placeholders.'),
  defaultModule: Type.String({
    minLength: 1,
    description: 'Module used when none is named; `root` if none.',
  }),
  providerOpts: Type.Record(Type.String(), Type.String(), { description: 'Provider-specific metadata.' }),
  oauth2Opts: Type.Optional(OAuth2OptsSchema),
  apiKeyOpts: Type.Optional(ApiKeyOptsSchema),
  basicOpts: Type.Optional(BasicOptsSchema),
  customOpts: Type.Optional(CustomOptsSchema),
  jwtOpts: Type.Optional(JwtOptsSchema),
  authHealthCheck: Type.Optional(AuthHealthCheckSchema),
  displayName: Type.Optional(
    Type.String({ description: 'Human-readable name; the provider name if absent.' }),
  ),
  postAuthInfoNeeded: Type.Optional(
    Type.Boolean({ description: 'True: extra information is required after authorization.' }),
  ),
  media: Type.Optional(MediaSchema),
  labels: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Free-form labels.' })),
  subscribeOpts: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), {
      description: 'Options of subscriptions to the provider.',
    }),
  ),
  metadata: Type.Optional(ProviderMetadataSchema),
  alternativeAuth: Type.Optional(
    Type.Array(AlternativeAuthSchema, {
      description:
        'Other authentication methods the provider documents; a connection uses the main one or one of these, recorded as its `authScheme`.',
    }),
  ),
};

const providerRules = { additionalProperties: false, allOf: authOptsRules };

export const ProviderSchema = Type.Object(
  {
    ...providerProperties,
    support: SupportSchema,
    modules: Type.Optional(
      Type.Record(Type.String(), ModuleSchema, { description: 'Registry of provider modules, keyed by id.' }),
    ),
  },
  { ...providerRules, description: 'A SaaS provider Ferry can connect to.' },
);
export type Provider = Static<typeof ProviderSchema>;

/**
 * A catalog file: the provider without `support`, which the catalog derives from the provider's
 * connector declaration (capabilities are declared once, by the connector).
 */
export const ProviderFileSchema = Type.Object(
  {
    ...providerProperties,
    modules: Type.Optional(
      Type.Record(Type.String(), Type.Object(moduleProperties, { additionalProperties: false })),
    ),
  },
  { ...providerRules, description: 'A provider catalog file.' },
);
export type ProviderFile = Static<typeof ProviderFileSchema>;

export const ProviderMapSchema = Type.Record(Type.String(), ProviderSchema, {
  description: 'Every provider in Ferry’s catalog, keyed by name.',
});
export type ProviderMap = Static<typeof ProviderMapSchema>;

/**
 * A deployment's own endpoints for a provider (FERRY_PROVIDER_OVERRIDES): a regional instance, the
 * provider's sandbox environment (Salesforce sandbox orgs log in at test.salesforce.com) or a local
 * server. URLs may hold the same `{{.name}}` placeholders as the catalog's.
 */
export const ProviderOverrideSchema = Type.Object(
  {
    baseURL: Type.Optional(TemplatedURL('Replaces the provider’s base URL.')),
    authURL: Type.Optional(TemplatedURL('Replaces the OAuth authorization URL.')),
    tokenURL: Type.Optional(TemplatedURL('Replaces the OAuth (or JWT bearer) token URL.')),
    modules: Type.Optional(
      Type.Record(
        Type.String({ minLength: 1 }),
        Type.Object(
          { baseURL: TemplatedURL('Replaces the module’s base URL.') },
          { additionalProperties: false },
        ),
      ),
    ),
  },
  { additionalProperties: false },
);
export type ProviderOverride = Static<typeof ProviderOverrideSchema>;

export const ProviderOverridesSchema = Type.Record(Type.String({ minLength: 1 }), ProviderOverrideSchema, {
  description: 'Provider name → endpoints this deployment uses instead of the catalog’s.',
});
export type ProviderOverrides = Static<typeof ProviderOverridesSchema>;

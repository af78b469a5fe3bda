import Type, { type Static } from 'typebox';
import { NfcName } from './common.js';

const strict = { additionalProperties: false } as const;

/** Names appear in paths, so they may not contain `/` or `:` nor start with a space. */
export const IntegrationName = NfcName({ minLength: 1, maxLength: 200, pattern: '^[^/\\s:][^/:]*$' });
const Always = Type.Enum(['always'], { description: 'The only allowed value is `always`.' });

/** A provider field read as it is, optionally renamed for the builder. */
export const ExistingField = Type.Object(
  {
    fieldName: Type.String({ minLength: 1 }),
    mapToName: Type.Optional(Type.String({ minLength: 1 })),
    mapToDisplayName: Type.Optional(Type.String()),
  },
  strict,
);

/** A builder-defined field that the customer maps to one of their provider fields. */
export const MappingField = Type.Object(
  {
    mapToName: Type.String({ minLength: 1 }),
    mapToDisplayName: Type.Optional(Type.String()),
    default: Type.Optional(Type.String()),
    prompt: Type.Optional(Type.String()),
  },
  strict,
);

export const FieldSchema = Type.Union([ExistingField, MappingField], {
  description:
    'Either `{fieldName, mapToName?, mapToDisplayName?}` or `{mapToName, mapToDisplayName?, default?, prompt?}`.',
});
export type Field = Static<typeof FieldSchema>;

export const BackfillSchema = Type.Object(
  {
    defaultPeriod: Type.Object(
      {
        days: Type.Optional(
          Type.Integer({
            minimum: 0,
            // A century: any more is no date a provider keeps (and past 10^8 days, no date at all).
            maximum: 36_500,
            description: 'Days of history, up to 36,500; 0 means no backfill, fullHistory all of it.',
          }),
        ),
        fullHistory: Type.Optional(Type.Boolean({ description: 'Backfill the whole history.' })),
      },
      strict,
    ),
  },
  strict,
);

export const ReadObjectSchema = Type.Object(
  {
    objectName: Type.String({ minLength: 1 }),
    destination: Type.String({
      minLength: 1,
      description: 'Name of the destination that receives the data.',
    }),
    schedule: Type.String({ minLength: 1, description: 'Cron schedule, e.g. `*/30 * * * *`.' }),
    mapToName: Type.Optional(Type.String({ minLength: 1 })),
    mapToDisplayName: Type.Optional(Type.String()),
    requiredFields: Type.Optional(Type.Array(FieldSchema)),
    optionalFields: Type.Optional(Type.Array(FieldSchema)),
    optionalFieldsAuto: Type.Optional(Type.Enum(['all'])),
    backfill: Type.Optional(BackfillSchema),
    delivery: Type.Optional(
      Type.Object(
        {
          mode: Type.Optional(Type.Enum(['onRequest', 'auto'], { default: 'auto' })),
          pageSize: Type.Optional(
            Type.Integer({ minimum: 50, maximum: 500, description: 'Records per delivery.' }),
          ),
          deletions: Type.Optional(
            Type.Boolean({
              default: true,
              description:
                'Scheduled and triggered reads deliver records deleted at the provider as entries `{id, deleted: true, ...}`, where the provider reveals deletions (`inferred: true` when a full read no longer found the record). false: live records only.',
            }),
          ),
        },
        strict,
      ),
    ),
    enabled: Type.Optional(Always),
  },
  strict,
);
export type ReadObject = Static<typeof ReadObjectSchema>;

export const WriteObjectSchema = Type.Object(
  {
    objectName: Type.String({ minLength: 1 }),
    inheritMapping: Type.Optional(Type.Boolean()),
    valueDefaults: Type.Optional(Type.Object({ allowAnyFields: Type.Optional(Type.Boolean()) })),
  },
  strict,
);
export type WriteObject = Static<typeof WriteObjectSchema>;

const EnabledEvent = Type.Object({ enabled: Always }, strict);

export const SubscribeObjectSchema = Type.Object(
  {
    objectName: Type.String({ minLength: 1 }),
    destination: Type.String({ minLength: 1 }),
    inheritFieldsAndMapping: Type.Optional(Type.Boolean()),
    createEvent: Type.Optional(EnabledEvent),
    updateEvent: Type.Optional(
      Type.Object(
        {
          enabled: Always,
          watchFieldsAuto: Type.Optional(Type.Enum(['all'])),
          requiredWatchFields: Type.Optional(Type.Array(Type.Array(Type.String()))),
        },
        strict,
      ),
    ),
    deleteEvent: Type.Optional(EnabledEvent),
    associationChangeEvent: Type.Optional(
      Type.Object({ enabled: Always, includeFullRecords: Type.Optional(Type.Boolean()) }, strict),
    ),
    otherEvents: Type.Optional(Type.Array(Type.Array(Type.String()))),
  },
  strict,
);
export type SubscribeObject = Static<typeof SubscribeObjectSchema>;

export const WatchSchemaSchema = Type.Object(
  {
    destination: Type.String({ minLength: 1 }),
    allObjects: Type.Optional(
      Type.Object(
        {
          fieldCreated: Type.Optional(EnabledEvent),
          fieldDeleted: Type.Optional(EnabledEvent),
          fieldChanged: Type.Optional(EnabledEvent),
        },
        strict,
      ),
    ),
    schedule: Type.Optional(Type.String({ minLength: 1 })),
  },
  strict,
);
export type WatchSchema = Static<typeof WatchSchemaSchema>;

export const IntegrationContentSchema = Type.Object(
  {
    name: IntegrationName,
    provider: Type.String({ minLength: 1 }),
    displayName: Type.Optional(Type.String()),
    module: Type.Optional(Type.String()),
    read: Type.Optional(Type.Object({ objects: Type.Array(ReadObjectSchema) }, strict)),
    write: Type.Optional(Type.Object({ objects: Type.Array(WriteObjectSchema) }, strict)),
    proxy: Type.Optional(
      Type.Object({ enabled: Type.Boolean(), useModule: Type.Optional(Type.Boolean()) }, strict),
    ),
    subscribe: Type.Optional(Type.Object({ objects: Type.Array(SubscribeObjectSchema) }, strict)),
    watchSchema: Type.Optional(WatchSchemaSchema),
  },
  strict,
);
export type IntegrationContent = Static<typeof IntegrationContentSchema>;

/** An `amp.yaml` manifest: one spec version and the integrations it declares. */
export const ManifestSchema = Type.Object(
  {
    specVersion: Type.String({ minLength: 1 }),
    integrations: Type.Array(IntegrationContentSchema),
  },
  strict,
);
export type Manifest = Static<typeof ManifestSchema>;

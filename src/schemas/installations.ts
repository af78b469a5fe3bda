import Type, { type Static } from 'typebox';
import { BackfillSchema, SubscribeObjectSchema } from './integration-content.js';
import { DateTime, NfcName, ProjectIdOrName, UpdateMask, Uuid, readOnly } from './common.js';
import { ConnectionSchema, GroupSchema } from './connections.js';

const strict = { additionalProperties: false } as const;
const ObjectName = Type.String({ minLength: 1, maxLength: 200 });

/** More fields than any provider's object has (Salesforce allows about 800 custom ones). */
const MAX_SELECTED_FIELDS = 2000;
const FieldName = Type.String({ minLength: 1, maxLength: 256 });

/** One entry of `dynamicMappingsInput`, as the public React components send it. */
const DynamicMappingsInputEntry = Type.Object(
  {
    mapToName: FieldName,
    mapToDisplayName: Type.Optional(Type.String({ maxLength: 1000 })),
    prompt: Type.Optional(Type.String({ maxLength: 1000 })),
    fieldName: Type.Optional(FieldName),
    mappedValues: Type.Optional(
      Type.Array(
        Type.Object(
          {
            mappedValue: Type.String({ maxLength: 1000 }),
            mappedDisplayValue: Type.String({ maxLength: 1000 }),
          },
          strict,
        ),
        { maxItems: 1000 },
      ),
    ),
  },
  strict,
);

const SelectedFieldMappings = Type.Record(FieldName, FieldName, {
  maxProperties: MAX_SELECTED_FIELDS,
  description: 'mapToName to the provider field it maps.',
});

/**
 * A read object as the customer configured it (COMPAT "Installation config content"). A request may
 * leave out `schedule` and `destination`: they are filled from the manifest's read object.
 */
export const ReadConfigSchema = Type.Object(
  {
    objectName: ObjectName,
    schedule: Type.String({ minLength: 1, description: 'Cron schedule, e.g. `*/30 * * * *`.' }),
    disabled: Type.Optional(Type.Boolean({ description: 'true stops scheduled reads of this object.' })),
    destination: Type.String({ minLength: 1, description: 'Name of the destination receiving records.' }),
    selectedFields: Type.Record(FieldName, Type.Boolean(), {
      maxProperties: MAX_SELECTED_FIELDS,
      description: `Field name to whether it is read (at most ${MAX_SELECTED_FIELDS}).`,
    }),
    selectedFieldMappings: Type.Optional(SelectedFieldMappings),
    selectedFieldsAuto: Type.Optional(Type.Enum(['all'])),
    backfill: Type.Optional(BackfillSchema),
    // Sent by the public React components (`@amp-labs/react`); stored and returned, not applied.
    selectedValueMappings: Type.Optional(
      Type.Record(
        FieldName,
        Type.Record(Type.String({ maxLength: 1000 }), Type.String({ maxLength: 1000 })),
        {
          maxProperties: MAX_SELECTED_FIELDS,
          description: 'Field name to a map of provider value to your value. Stored, not applied by Ferry.',
        },
      ),
    ),
    dynamicMappingsInput: Type.Optional(
      Type.Array(DynamicMappingsInputEntry, {
        maxItems: MAX_SELECTED_FIELDS,
        description: 'The field mappings the React components offered the customer. Stored, not applied.',
      }),
    ),
  },
  strict,
);
export type ReadConfig = Static<typeof ReadConfigSchema>;

/** A read object as answers show it: `selectedFieldMappings` always there, as the public config requires. */
export const ReadConfigViewSchema = Type.Object(
  {
    ...ReadConfigSchema.properties,
    selectedFieldMappings: SelectedFieldMappings,
  },
  strict,
);

export const WriteConfigSchema = Type.Object(
  {
    objectName: ObjectName,
    selectedValueDefaults: Type.Optional(
      Type.Record(
        Type.String({ minLength: 1 }),
        Type.Object(
          { value: Type.Unknown(), applyOnUpdate: Type.Optional(Type.Enum(['always', 'never'])) },
          strict,
        ),
      ),
    ),
    deletionSettings: Type.Optional(Type.Object({ enabled: Type.Boolean() }, strict)),
    // What the public React components send for a field's write default.
    selectedFieldSettings: Type.Optional(
      Type.Record(
        FieldName,
        Type.Object(
          {
            default: Type.Optional(
              Type.Object(
                {
                  stringValue: Type.Optional(Type.String({ maxLength: 8000 })),
                  integerValue: Type.Optional(Type.Integer()),
                  booleanValue: Type.Optional(Type.Boolean()),
                },
                { ...strict, minProperties: 1, maxProperties: 1, description: 'Exactly one value.' },
              ),
            ),
            writeOnCreate: Type.Optional(
              Type.Enum(['always', 'never'], { description: 'Fill the field on create (default always).' }),
            ),
            writeOnUpdate: Type.Optional(
              Type.Enum(['always', 'never'], {
                description:
                  'Fill the field on update (default never). `ifEmpty` is not supported: Ferry does not read the record before writing.',
              }),
            ),
          },
          strict,
        ),
        {
          maxProperties: MAX_SELECTED_FIELDS,
          description: 'Field name to its default when a record leaves it out.',
        },
      ),
    ),
  },
  strict,
);
export type WriteConfig = Static<typeof WriteConfigSchema>;

const { inheritFieldsAndMapping: legacyInheritFlag, ...subscribeObjectFields } =
  SubscribeObjectSchema.properties;

const InheritFieldsAndMappings = Type.Boolean({
  description: 'Deliver the read object’s selected fields and mappings instead of every field.',
});

/**
 * A subscribed object as the customer configured it: the manifest's SubscribeObject shape (spec:
 * SubscribeObject), so `requiredWatchFields` is an array of arrays of field names in both, except
 * for the flag that reuses the read object's fields and mappings: `inheritFieldsAndMappings`, as
 * the public installation config names it, or the manifest's name, `inheritFieldsAndMapping`.
 * Configs are stored with the public name (see `withPublicSubscribeFlag`).
 */
export const SubscribeConfigSchema = Type.Object(
  {
    ...subscribeObjectFields,
    inheritFieldsAndMappings: Type.Optional(InheritFieldsAndMappings),
    inheritFieldsAndMapping: Type.Optional({
      ...legacyInheritFlag,
      description: 'Another name for `inheritFieldsAndMappings` (the manifest’s).',
    }),
  },
  strict,
);
export type SubscribeConfig = Static<typeof SubscribeConfigSchema>;

/** A subscribed object as answers show it: the public name of the flag, always there. */
export const SubscribeConfigViewSchema = Type.Object(
  { ...subscribeObjectFields, inheritFieldsAndMappings: InheritFieldsAndMappings },
  strict,
);
export type SubscribeConfigView = Static<typeof SubscribeConfigViewSchema>;

/** `config.content`: maps keyed by object name, so one object's config is addressable by path. */
export const InstallationConfigContentSchema = Type.Object(
  {
    provider: Type.String({ minLength: 1 }),
    read: Type.Optional(Type.Object({ objects: Type.Record(Type.String(), ReadConfigSchema) }, strict)),
    write: Type.Optional(Type.Object({ objects: Type.Record(Type.String(), WriteConfigSchema) }, strict)),
    subscribe: Type.Optional(
      Type.Object({ objects: Type.Record(Type.String(), SubscribeConfigSchema) }, strict),
    ),
    proxy: Type.Optional(Type.Object({ enabled: Type.Boolean() }, strict)),
  },
  strict,
);
export type InstallationConfigContent = Static<typeof InstallationConfigContentSchema>;

/** A read object as a request may send it: `schedule` and `destination` default to the manifest's. */
const ReadConfigRequestSchema = Type.Object(
  {
    ...ReadConfigSchema.properties,
    schedule: Type.Optional(ReadConfigSchema.properties.schedule),
    destination: Type.Optional(ReadConfigSchema.properties.destination),
    selectedFields: Type.Optional(
      Type.Record(FieldName, Type.Boolean(), {
        maxProperties: MAX_SELECTED_FIELDS,
        description: `Field name to whether it is read (at most ${MAX_SELECTED_FIELDS}); may be left out when the manifest's object has no optional fields.`,
      }),
    ),
  },
  strict,
);

/** `config.content` as a create request sends it (the public React components leave schedules out). */
export const InstallationConfigContentRequestSchema = Type.Object(
  {
    ...InstallationConfigContentSchema.properties,
    read: Type.Optional(
      Type.Object({ objects: Type.Record(Type.String(), ReadConfigRequestSchema) }, strict),
    ),
  },
  strict,
);

/** `builder:{id}` or `consumer:{id}`: who made a config version. */
export const CreatedBy = Type.String({ pattern: '^(builder|consumer):.+$', maxLength: 300 });

export const InstallationConfigSchema = Type.Object({
  id: readOnly(Uuid),
  revisionId: Uuid,
  createTime: readOnly(DateTime),
  createdBy: readOnly(Type.String()),
  content: Type.Object(
    {
      ...InstallationConfigContentSchema.properties,
      provider: readOnly(InstallationConfigContentSchema.properties.provider),
      read: Type.Optional(Type.Object({ objects: Type.Record(Type.String(), ReadConfigViewSchema) }, strict)),
      subscribe: Type.Optional(
        Type.Object({ objects: Type.Record(Type.String(), SubscribeConfigViewSchema) }, strict),
      ),
    },
    { additionalProperties: false },
  ),
});
export type InstallationConfigView = Static<typeof InstallationConfigSchema>;

export const InstallationSchema = Type.Object({
  id: readOnly(Uuid),
  projectId: readOnly(Uuid),
  integrationId: readOnly(Uuid),
  healthStatus: readOnly(
    Type.Enum(['healthy', 'unhealthy'], {
      description:
        '`unhealthy` when its latest read failed, or a destination its config delivers to is disabled or failing.',
    }),
  ),
  healthReason: Type.Optional(
    readOnly(Type.String({ description: 'Why the installation is unhealthy; absent when healthy.' })),
  ),
  connection: readOnly(ConnectionSchema),
  createTime: readOnly(DateTime),
  createdBy: readOnly(Type.String({ description: '`consumer:{consumerRef}` of the connection’s consumer.' })),
  config: InstallationConfigSchema,
  group: Type.Optional(readOnly(GroupSchema)),
  lastOperationStatus: Type.Optional(readOnly(Type.Enum(['success', 'failure', 'in_progress']))),
  updateTime: Type.Optional(readOnly(DateTime)),
});
export type InstallationView = Static<typeof InstallationSchema>;

export const CreateInstallationBody = Type.Object(
  {
    groupRef: NfcName({ minLength: 1, description: 'The customer group that installs.' }),
    connectionId: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'The connection to use; the group’s connection for the provider when omitted.',
      }),
    ),
    config: Type.Object(
      {
        revisionId: Type.Optional(
          Type.String({ minLength: 1, description: 'Defaults to the latest revision.' }),
        ),
        createdBy: Type.Optional(CreatedBy),
        content: InstallationConfigContentRequestSchema,
      },
      strict,
    ),
  },
  strict,
);

export const CreateInstallationQuery = Type.Object({
  skipSampling: Type.Optional(
    Type.Boolean({ description: 'Accepted for compatibility; Ferry never samples.' }),
  ),
});

export const GroupRefQuery = Type.Object({
  groupRef: Type.Optional(NfcName({ minLength: 1 })),
});

export const IntegrationInstallationsParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  integrationId: NfcName({ minLength: 1, description: 'The integration ID or name.' }),
});

export const InstallationParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  integrationId: NfcName({ minLength: 1, description: 'The integration ID or name.' }),
  installationId: Type.String({ minLength: 1 }),
});

export const UpdateInstallationBody = Type.Object(
  {
    updateMask: UpdateMask,
    installation: Type.Object(
      {
        connectionId: Type.Optional(
          Type.String({
            minLength: 1,
            description:
              'With `connectionId` in updateMask: the connection in use, the group’s one connection for the provider; any other is refused.',
          }),
        ),
        config: Type.Optional(
          Type.Object(
            {
              revisionId: Type.Optional(Type.String({ minLength: 1 })),
              createdBy: Type.Optional(CreatedBy),
              content: Type.Optional(
                Type.Unknown({
                  description:
                    'Shaped as `InstallationConfigContent` (the `config.content` of createInstallation), but only the paths `updateMask` names are read; the result is then validated whole.',
                }),
              ),
            },
            { additionalProperties: true },
          ),
        ),
      },
      { additionalProperties: true, description: 'Shaped as Installation; only masked paths are read.' },
    ),
  },
  strict,
);

export const ConfigContentParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  integrationId: NfcName({ minLength: 1, description: 'The integration ID or name.' }),
  objectName: ObjectName,
});

export const JsonPatchOperationSchema = Type.Object(
  {
    op: Type.Enum(['add', 'remove', 'replace', 'move', 'copy', 'test']),
    path: Type.String({ description: 'JSON Pointer into the object config, e.g. `/schedule`.' }),
    from: Type.Optional(Type.String()),
    value: Type.Optional(Type.Unknown()),
  },
  strict,
);

export const ConfigContentPatchBody = Type.Object(
  {
    groupRef: Type.Optional(NfcName({ minLength: 1 })),
    installationId: Type.Optional(Type.String({ minLength: 1 })),
    action: Type.Enum(['read', 'subscribe', 'write']),
    changes: Type.Array(JsonPatchOperationSchema, {
      minItems: 1,
      // Each operation may copy or compare the part it names: a bound keeps one request's work bounded.
      maxItems: 1_000,
      description: 'JSON Patch operations, applied in order; at most 1,000.',
    }),
  },
  strict,
);

export const PauseBody = Type.Object(
  {
    objects: Type.Optional(
      Type.Array(ObjectName, { description: 'Objects to pause or resume; all when omitted.' }),
    ),
    note: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  strict,
);

import Type, { type Static } from 'typebox';
import { BackfillSchema } from './integration-content.js';
import { DateTime, ProjectIdOrName, UpdateMask, Uuid } from './common.js';
import { ConnectionSchema, GroupSchema } from './connections.js';

const strict = { additionalProperties: false } as const;
const ObjectName = Type.String({ minLength: 1, maxLength: 200 });
const Always = Type.Enum(['always']);

/** A read object as the customer configured it (COMPAT "Installation config content"). */
export const ReadConfigSchema = Type.Object(
  {
    objectName: ObjectName,
    schedule: Type.String({ minLength: 1, description: 'Cron schedule, e.g. `*/30 * * * *`.' }),
    disabled: Type.Optional(Type.Boolean({ description: 'true stops scheduled reads of this object.' })),
    destination: Type.String({ minLength: 1, description: 'Name of the destination receiving records.' }),
    selectedFields: Type.Record(Type.String({ minLength: 1 }), Type.Boolean(), {
      description: 'Field name to whether it is read.',
    }),
    selectedFieldMappings: Type.Optional(
      Type.Record(Type.String({ minLength: 1 }), Type.String({ minLength: 1 }), {
        description: 'mapToName to the provider field it maps.',
      }),
    ),
    selectedFieldsAuto: Type.Optional(Type.Enum(['all'])),
    backfill: Type.Optional(BackfillSchema),
  },
  strict,
);
export type ReadConfig = Static<typeof ReadConfigSchema>;

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
  },
  strict,
);
export type WriteConfig = Static<typeof WriteConfigSchema>;

const EnabledEvent = Type.Object({ enabled: Always }, strict);

export const SubscribeConfigSchema = Type.Object(
  {
    objectName: ObjectName,
    destination: Type.String({ minLength: 1 }),
    inheritFieldsAndMapping: Type.Optional(Type.Boolean()),
    createEvent: Type.Optional(EnabledEvent),
    updateEvent: Type.Optional(
      Type.Object(
        {
          enabled: Always,
          watchFieldsAuto: Type.Optional(Type.Enum(['all'])),
          requiredWatchFields: Type.Optional(Type.Array(Type.String())),
        },
        strict,
      ),
    ),
    deleteEvent: Type.Optional(EnabledEvent),
    associationChangeEvent: Type.Optional(
      Type.Object({ enabled: Always, includeFullRecords: Type.Optional(Type.Boolean()) }, strict),
    ),
    otherEvents: Type.Optional(Type.Array(Type.String())),
  },
  strict,
);
export type SubscribeConfig = Static<typeof SubscribeConfigSchema>;

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

/** `builder:{id}` or `consumer:{id}`: who made a config version. */
export const CreatedBy = Type.String({ pattern: '^(builder|consumer):.+$', maxLength: 300 });

export const InstallationConfigSchema = Type.Object({
  id: Uuid,
  revisionId: Uuid,
  createTime: DateTime,
  createdBy: Type.String(),
  content: InstallationConfigContentSchema,
});
export type InstallationConfigView = Static<typeof InstallationConfigSchema>;

export const InstallationSchema = Type.Object({
  id: Uuid,
  projectId: Uuid,
  integrationId: Uuid,
  healthStatus: Type.Enum(['healthy', 'unhealthy']),
  connection: ConnectionSchema,
  createTime: DateTime,
  createdBy: Type.String({ description: '`consumer:{consumerRef}` of the connection’s consumer.' }),
  config: InstallationConfigSchema,
  group: Type.Optional(GroupSchema),
  lastOperationStatus: Type.Optional(Type.Enum(['success', 'failure', 'in_progress'])),
  updateTime: Type.Optional(DateTime),
});
export type InstallationView = Static<typeof InstallationSchema>;

export const CreateInstallationBody = Type.Object(
  {
    groupRef: Type.String({ minLength: 1, description: 'The customer group that installs.' }),
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
        content: Type.Unknown({ description: 'Installation config content; validated after parsing.' }),
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
  groupRef: Type.Optional(Type.String({ minLength: 1 })),
});

export const IntegrationInstallationsParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  integrationId: Type.String({ minLength: 1, description: 'The integration ID or name.' }),
});

export const InstallationParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  integrationId: Type.String({ minLength: 1, description: 'The integration ID or name.' }),
  installationId: Type.String({ minLength: 1 }),
});

export const UpdateInstallationBody = Type.Object(
  {
    updateMask: UpdateMask,
    installation: Type.Object(
      {
        config: Type.Optional(
          Type.Object(
            {
              revisionId: Type.Optional(Type.String({ minLength: 1 })),
              createdBy: Type.Optional(CreatedBy),
              content: Type.Optional(Type.Unknown()),
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
  integrationId: Type.String({ minLength: 1, description: 'The integration ID or name.' }),
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
    groupRef: Type.Optional(Type.String({ minLength: 1 })),
    installationId: Type.Optional(Type.String({ minLength: 1 })),
    action: Type.Enum(['read', 'subscribe', 'write']),
    changes: Type.Array(JsonPatchOperationSchema, { minItems: 1 }),
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

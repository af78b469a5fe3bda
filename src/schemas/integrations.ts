import Type, { type Static } from 'typebox';
import { DateTime, NfcName, ProjectIdOrName, Uuid } from './common.js';
import { IntegrationContentSchema, IntegrationName, ManifestSchema } from './integration-content.js';

export const RevisionSchema = Type.Object({
  id: Uuid,
  specVersion: Type.String(),
  createTime: DateTime,
  content: IntegrationContentSchema,
});
export type RevisionView = Static<typeof RevisionSchema>;

export const IntegrationSchema = Type.Object({
  id: Uuid,
  projectId: Uuid,
  name: Type.String(),
  provider: Type.String(),
  createTime: DateTime,
  updateTime: DateTime,
  latestRevision: RevisionSchema,
});
export type IntegrationView = Static<typeof IntegrationSchema>;

export const CreateIntegrationBody = Type.Object(
  {
    name: IntegrationName,
    provider: Type.String({ minLength: 1 }),
    latestRevision: Type.Object(
      { specVersion: Type.String({ minLength: 1 }), content: IntegrationContentSchema },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/** A manifest as the README's quick start deploys it (examples/read.yaml). */
const exampleManifest = `specVersion: 1.0.0
integrations:
  - name: crm-contacts
    provider: sandbox
    read:
      objects:
        - objectName: contacts
          destination: records
          schedule: "*/30 * * * *"
          requiredFields:
            - fieldName: email
            - fieldName: firstname
`;

export const SourceYamlBody = Type.Object(
  {
    sourceYaml: Type.String({
      minLength: 1,
      description: 'A whole amp.yaml manifest (YAML text shaped as `contentSchema`).',
      contentMediaType: 'application/yaml',
      contentSchema: ManifestSchema,
      examples: [exampleManifest],
    }),
  },
  { additionalProperties: false },
);

export const BatchQuery = Type.Object({
  destructive: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'Delete the project’s integrations absent from the manifest.',
    }),
  ),
});

/** The public answer of a batch: the manifest's integrations, a bare array (deleted ones are not listed). */
export const BatchResultSchema = Type.Array(IntegrationSchema);

const ManifestWarningSchema = Type.Object({
  in: Type.String({ description: '`body`' }),
  name: Type.String({
    description: 'Where, as in an error: `sourceYaml:integrations[0].read.objects[1].objectName`.',
  }),
  value: Type.Optional(Type.Unknown({ description: 'The name the manifest gives.' })),
  detail: Type.String({ description: 'Starts with the line and column: `line 12, column 23: …`.' }),
});

export const ManifestCheckSchema = Type.Object({
  integrations: Type.Array(Type.Object({ name: Type.String(), provider: Type.String() }), {
    description: 'The integrations the manifest declares, in its order.',
  }),
  warnings: Type.Array(ManifestWarningSchema, {
    description:
      'What the manifest names that a provider’s deep connector does not know (objects, fields), each with its line and column; deploying it is still allowed.',
  }),
});

export const IntegrationParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  integrationIdOrName: NfcName({ minLength: 1, description: 'The integration ID or name.' }),
});

export const DeployedManifestSchema = Type.Object({
  sourceYaml: Type.String({
    description: 'The manifest as it was deployed, comments, order and layout kept.',
  }),
  createTime: DateTime,
  matchesLive: Type.Boolean({
    description:
      'Whether it still describes the project’s integrations exactly (each latest revision, and no other integration); false once an integration was changed or created another way.',
  }),
});
export type DeployedManifestView = Static<typeof DeployedManifestSchema>;

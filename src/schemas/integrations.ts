import Type, { type Static } from 'typebox';
import { DateTime, ProjectIdOrName, Uuid } from './common.js';
import { IntegrationContentSchema, IntegrationName } from './integration-content.js';

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

export const SourceYamlBody = Type.Object(
  { sourceYaml: Type.String({ minLength: 1, description: 'A whole amp.yaml manifest.' }) },
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

export const BatchResultSchema = Type.Object({
  integrations: Type.Array(IntegrationSchema),
  deleted: Type.Array(Type.String(), {
    description: 'Names of integrations removed by a destructive batch.',
  }),
});

export const IntegrationParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  integrationIdOrName: Type.String({ minLength: 1, description: 'The integration ID or name.' }),
});

import Type, { type Static } from 'typebox';
import { DateTime, UpdateMask, Uuid } from './common.js';

const ProjectName = Type.String({
  minLength: 1,
  maxLength: 63,
  pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$',
  description: 'Unique name, usable in paths instead of the ID.',
});

export const ProjectSchema = Type.Object({
  id: Uuid,
  name: Type.String(),
  appName: Type.String({ description: 'The product name shown to the builder’s customers.' }),
  orgId: Uuid,
  createTime: DateTime,
  updateTime: DateTime,
});
export type ProjectView = Static<typeof ProjectSchema>;

export const CreateProjectBody = Type.Object(
  { name: ProjectName, appName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), orgId: Uuid },
  { additionalProperties: false },
);

export const UpdateProjectBody = Type.Object(
  {
    updateMask: UpdateMask,
    project: Type.Object(
      {
        name: Type.Optional(ProjectName),
        appName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const ApiKeySchema = Type.Object({
  id: Uuid,
  projectId: Uuid,
  label: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key, to recognise it.' }),
  key: Type.String({
    description:
      'The key whole only when it is created; after that its prefix and `...` (Ferry keeps only a hash), which addresses it in `/api-keys/{key}` as the whole key does.',
  }),
  scopes: Type.Array(Type.String()),
  active: Type.Boolean(),
  lastUsedTime: Type.Optional(DateTime),
  createTime: DateTime,
  updateTime: DateTime,
});
export type ApiKeyView = Static<typeof ApiKeySchema>;

export const CreatedApiKeySchema = Type.Intersect([
  ApiKeySchema,
  Type.Object({ key: Type.String({ description: 'The key itself. Shown only in this response.' }) }),
]);

export const apiKeyScopes = ['full', 'frontend'] as const;

export const CreateApiKeyBody = Type.Object(
  {
    label: Type.String({ minLength: 1, maxLength: 200 }),
    scopes: Type.Optional(
      Type.Array(Type.Enum(apiKeyScopes), {
        maxItems: apiKeyScopes.length,
        uniqueItems: true,
        description:
          '`full` (also what no scopes mean): everything in the project. `frontend` alone: a key (`ferry_pk_…`) for code that runs in the browser, such as the embeddable components: it reaches what they use (integrations, and the installations and connections of any group), never credentials, other keys, destinations, project-wide changes (integrations, provider apps, notification routes), custom fields in a provider account, reads, writes or the proxy, which answer 403. Whoever reads it can act for any of your groups there; a project JWT minted per group is narrower.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const UpdateApiKeyBody = Type.Object(
  {
    updateMask: UpdateMask,
    apiKey: Type.Object(
      {
        label: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        active: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

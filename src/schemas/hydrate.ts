import Type, { type Static } from 'typebox';
import { DateTime, NfcName, ProjectIdOrName, Uuid } from './common.js';
import {
  ExistingField,
  IntegrationContentSchema,
  MappingField,
  ReadObjectSchema,
  WriteObjectSchema,
} from './integration-content.js';
import { FieldMetadataSchema } from './object-metadata.js';

/** An `allFields` entry: a provider field, with the integration's mapping of it when there is one. */
export const HydratedFieldSchema = Type.Object({
  fieldName: Type.String(),
  displayName: Type.Optional(Type.String()),
  mapToName: Type.Optional(Type.String()),
  mapToDisplayName: Type.Optional(Type.String()),
});

/** A `requiredFields`/`optionalFields` entry: a provider field also names its display name. */
export const HydratedDeclaredFieldSchema = Type.Union([
  Type.Object(
    {
      ...ExistingField.properties,
      displayName: Type.String({
        description: 'The provider’s name of the field (its field name if unknown).',
      }),
    },
    { additionalProperties: false },
  ),
  MappingField,
]);

export const HydratedReadObjectSchema = Type.Object({
  ...ReadObjectSchema.properties,
  requiredFields: Type.Optional(Type.Array(HydratedDeclaredFieldSchema)),
  optionalFields: Type.Optional(Type.Array(HydratedDeclaredFieldSchema)),
  displayName: Type.String({
    description: 'The mapped display name, else the provider’s name of the object.',
  }),
  error: Type.Optional(
    Type.String({
      description: 'Why the provider could not describe this object; its field lists are then empty.',
    }),
  ),
  allFieldsMetadata: Type.Record(Type.String(), FieldMetadataSchema, {
    description: 'Every provider field of the object, keyed by field name.',
  }),
  allFields: Type.Array(HydratedFieldSchema),
});
export type HydratedReadObject = Static<typeof HydratedReadObjectSchema>;

export const HydratedWriteObjectSchema = Type.Object({
  ...WriteObjectSchema.properties,
  displayName: Type.String({
    description: 'The provider’s name of the object (its object name if unknown).',
  }),
});
export type HydratedWriteObject = Static<typeof HydratedWriteObjectSchema>;

export const HydratedContentSchema = Type.Object({
  ...IntegrationContentSchema.properties,
  read: Type.Optional(Type.Object({ objects: Type.Array(HydratedReadObjectSchema) })),
  write: Type.Optional(Type.Object({ objects: Type.Array(HydratedWriteObjectSchema) })),
});

export const HydratedRevisionSchema = Type.Object(
  { id: Uuid, specVersion: Type.String(), createTime: DateTime, content: HydratedContentSchema },
  { description: 'A revision whose content is enriched with the provider’s field metadata.' },
);
export type HydratedRevisionView = Static<typeof HydratedRevisionSchema>;

export const HydrateParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  integrationIdOrName: NfcName({ minLength: 1, description: 'The integration ID or name.' }),
  revisionId: Type.String({ minLength: 1 }),
});

export const HydrateQuery = Type.Object({
  connectionId: Type.String({
    minLength: 1,
    description: 'The connection whose credentials are used to fetch field metadata from the provider.',
  }),
});

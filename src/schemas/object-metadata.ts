import Type, { type Static } from 'typebox';
import { NfcName, ProjectIdOrName } from './common.js';

/**
 * Ferry's value types, shared by metadata (`valueType`) and custom-field definitions.
 * `other` covers provider types with no portable meaning (JSON, coordinates, files...).
 */
export const ValueTypeSchema = Type.Enum([
  'string',
  'boolean',
  'int',
  'float',
  'date',
  'datetime',
  'singleSelect',
  'multiSelect',
  'other',
]);
export type ValueType = Static<typeof ValueTypeSchema>;

/** Value types a custom field can be created with (`other` describes, it does not create). */
export const CustomFieldValueTypeSchema = Type.Enum([
  'string',
  'boolean',
  'int',
  'float',
  'date',
  'datetime',
  'singleSelect',
  'multiSelect',
]);
export type CustomFieldValueType = Static<typeof CustomFieldValueTypeSchema>;

/** One field of a provider object: the spec's `allFieldsMetadata` entry. */
export const FieldMetadataSchema = Type.Object(
  {
    fieldName: Type.String(),
    displayName: Type.String(),
    valueType: ValueTypeSchema,
    providerType: Type.String({ description: 'The provider’s own type name.' }),
    readOnly: Type.Boolean(),
    createOnly: Type.Optional(
      Type.Boolean({
        description: 'A create may set the field; an update may not (present only when true).',
      }),
    ),
    updateOnly: Type.Optional(
      Type.Boolean({
        description: 'An update may set the field; a create may not (present only when true).',
      }),
    ),
    isCustom: Type.Boolean(),
    isRequired: Type.Boolean(),
    values: Type.Optional(
      Type.Array(Type.Object({ value: Type.String(), displayValue: Type.String() }), {
        description: 'Allowed values of select fields.',
      }),
    ),
  },
  { description: 'Metadata of one provider field.' },
);
export type FieldMetadata = Static<typeof FieldMetadataSchema>;

export const ObjectMetadataSchema = Type.Object(
  {
    name: Type.String({ description: 'The provider’s name of the object.' }),
    displayName: Type.Optional(Type.String()),
    mappedObjectName: Type.Optional(
      Type.String({
        description: 'The name the integration maps the object to (`mapToName`), when it does.',
      }),
    ),
    fields: Type.Record(Type.String(), FieldMetadataSchema, {
      description: 'Field metadata keyed by field name.',
    }),
  },
  { description: 'The spec’s Object metadata.' },
);
/** The spec's Object metadata, keyed by provider field name; connectors return it without `mappedObjectName`. */
export type ObjectMetadata = Static<typeof ObjectMetadataSchema>;

export const ObjectMetadataQuery = Type.Object({
  groupRef: NfcName({ minLength: 1, description: 'The group whose connection to the provider is used.' }),
  excludeReadOnly: Type.Optional(
    Type.Boolean({ default: false, description: 'true omits fields whose read-only flag is set.' }),
  ),
});

export const ProviderObjectParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  provider: Type.String({ minLength: 1, description: 'A provider name from the catalog.' }),
  objectName: Type.String({
    minLength: 1,
    description: 'The provider’s object name, or the name an integration maps it to.',
  }),
});

export const IntegrationObjectParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  integrationIdOrName: NfcName({ minLength: 1, description: 'The integration ID or name.' }),
  objectName: Type.String({
    minLength: 1,
    description: 'The provider’s object name, or its mapped name (`mapToName`).',
  }),
});

export const ProviderParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  provider: Type.String({ minLength: 1, description: 'A provider name from the catalog.' }),
});

export const IntegrationParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  integrationIdOrName: NfcName({ minLength: 1, description: 'The integration ID or name.' }),
});

const strict = { additionalProperties: false } as const;

/** The spec's "Custom field definition". */
export const CustomFieldDefinitionSchema = Type.Object(
  {
    fieldName: Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: '^[A-Za-z][A-Za-z0-9_]*$',
      description: 'Letters, digits and underscores, starting with a letter.',
    }),
    displayName: Type.String({ minLength: 1, maxLength: 255 }),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    valueType: CustomFieldValueTypeSchema,
    required: Type.Optional(Type.Boolean()),
    unique: Type.Optional(Type.Boolean({ description: 'Values must be unique across records.' })),
    stringOptions: Type.Optional(
      Type.Object(
        {
          length: Type.Optional(Type.Integer({ minimum: 1, description: 'Maximum length.' })),
          defaultValue: Type.Optional(Type.String()),
          values: Type.Optional(
            Type.Array(Type.String({ minLength: 1 }), {
              minItems: 1,
              uniqueItems: true,
              description: 'Allowed values.',
            }),
          ),
          valuesRestricted: Type.Optional(Type.Boolean({ description: 'true: only `values` are accepted.' })),
        },
        strict,
      ),
    ),
    numericOptions: Type.Optional(
      Type.Object(
        {
          precision: Type.Optional(Type.Integer({ minimum: 1 })),
          scale: Type.Optional(Type.Integer({ minimum: 0 })),
          min: Type.Optional(Type.Number()),
          max: Type.Optional(Type.Number()),
          defaultValue: Type.Optional(Type.Number()),
        },
        strict,
      ),
    ),
  },
  strict,
);
/** The spec's "Custom field definition": a field to create, or to update when it exists. */
export type CustomFieldDefinition = Static<typeof CustomFieldDefinitionSchema>;

export const UpsertObjectMetadataBody = Type.Object(
  {
    groupRef: Type.Optional(
      NfcName({
        minLength: 1,
        description: 'The group whose connection is used (or the `groupRef` query parameter).',
      }),
    ),
    fields: Type.Record(
      Type.String({ minLength: 1 }),
      Type.Array(CustomFieldDefinitionSchema, { minItems: 1, maxItems: 100 }),
      {
        description: 'Object name → custom field definitions to create, or update where they exist.',
      },
    ),
  },
  strict,
);

export const UpsertObjectMetadataQuery = Type.Object({
  groupRef: Type.Optional(NfcName({ minLength: 1, description: 'Alternative to `groupRef` in the body.' })),
});

export const FieldUpsertResultSchema = Type.Object({
  fieldName: Type.String(),
  action: Type.Enum(['create', 'update', 'none']),
  metadata: Type.Optional(FieldMetadataSchema),
  warnings: Type.Optional(
    Type.Array(Type.String(), { description: 'Parts of the definition the provider could not keep.' }),
  ),
});

/** What happened to one custom field; options the provider cannot honour are named in `warnings`. */
export type CustomFieldUpsertResult = Static<typeof FieldUpsertResultSchema>;

export interface UpsertCustomFieldsResult {
  /** Keyed by field name. */
  fields: Record<string, CustomFieldUpsertResult>;
}

export const UpsertObjectMetadataResponse = Type.Object({
  success: Type.Boolean(),
  fields: Type.Record(Type.String(), Type.Record(Type.String(), FieldUpsertResultSchema), {
    description: 'Object name → field name → what happened.',
  }),
});

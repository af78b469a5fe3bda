import Type, { type Static } from 'typebox';
import { NfcName, ProjectIdOrName } from './common.js';

const strict = { additionalProperties: false } as const;

export const SearchParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  integrationId: NfcName({ minLength: 1, description: 'The integration’s ID or name.' }),
});

export const SearchQuery = Type.Object({
  groupRef: Type.Optional(
    NfcName({ minLength: 1, description: 'The group whose installation is searched.' }),
  ),
  installationId: Type.Optional(
    Type.String({ minLength: 1, description: 'The installation searched (instead of `groupRef`).' }),
  ),
});

export const FieldFilterSchema = Type.Object(
  {
    fieldName: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'A field the installation reads: its provider name, or its `mapToName`.',
    }),
    operator: Type.String({
      minLength: 1,
      description: '`eq`, where the provider’s `support.search.operators.equals` is true.',
    }),
    value: Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]),
  },
  strict,
);

export const SearchBody = Type.Object(
  {
    objectName: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'A read object of the installation (its provider name, or its `mapToName`).',
    }),
    fieldFilters: Type.Array(FieldFilterSchema, {
      minItems: 1,
      maxItems: 20,
      description: 'Records match when every filter holds.',
    }),
    pageSize: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1000,
        default: 100,
        description: 'Records per page at most (the provider may give fewer).',
      }),
    ),
    pageToken: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 10_000,
        description: '`nextPageToken` of the previous page, unchanged; it carries the filters it continues.',
      }),
    ),
  },
  strict,
);
export type SearchRequest = Static<typeof SearchBody>;

/** One record as reads deliver it (COMPAT.md): selected fields, mapped fields, and the provider's record. */
export const MappedRecordSchema = Type.Object(
  {
    fields: Type.Record(Type.String(), Type.Unknown()),
    mappedFields: Type.Record(Type.String(), Type.Unknown()),
    raw: Type.Record(Type.String(), Type.Unknown()),
  },
  strict,
);

export const SearchResponse = Type.Object(
  {
    result: Type.Array(MappedRecordSchema),
    nextPageToken: Type.Optional(Type.String({ description: 'Absent on the last page.' })),
  },
  strict,
);
export type SearchAnswer = Static<typeof SearchResponse>;

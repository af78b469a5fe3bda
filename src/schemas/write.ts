import Type, { type Static } from 'typebox';
import { NfcName, ProjectIdOrName, Uuid } from './common.js';

/** Record change kinds, as Ferry names them (write types and subscription events). */
export const RecordChangeTypeSchema = Type.Enum(['create', 'update', 'delete']);
export type RecordChangeType = Static<typeof RecordChangeTypeSchema>;

const strict = { additionalProperties: false } as const;

export const WriteParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  integrationId: NfcName({ minLength: 1, description: 'The integration’s ID or name.' }),
  objectName: Type.String({
    minLength: 1,
    maxLength: 200,
    description: 'A write object of the installation’s config.',
  }),
});

const FieldValues = Type.Record(Type.String({ minLength: 1 }), Type.Unknown(), {
  description: 'Field values in the provider’s field names; `id` names the record for update and delete.',
});

const Associations = Type.Array(Type.Unknown(), {
  maxItems: 100,
  description: 'Provider-specific associations created with the record (HubSpot’s `associations`).',
});

export const WriteBatchItem = Type.Object(
  { record: FieldValues, associations: Type.Optional(Associations) },
  strict,
);

export const WriteBody = Type.Object(
  {
    groupRef: NfcName({ minLength: 1, description: 'The group whose installation writes.' }),
    type: RecordChangeTypeSchema,
    mode: Type.Optional(
      Type.Enum(['synchronous', 'asynchronous'], {
        default: 'synchronous',
        description:
          'synchronous answers with the result; asynchronous answers at once and reports `write.async.done`.',
      }),
    ),
    record: Type.Optional(FieldValues),
    batch: Type.Optional(Type.Array(WriteBatchItem, { minItems: 1, maxItems: 100 })),
    associations: Type.Optional(Associations),
  },
  strict,
);
export type WriteRequest = Static<typeof WriteBody>;

export const WriteRecordResult = Type.Object({
  success: Type.Boolean(),
  recordId: Type.Optional(Type.String()),
  data: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), { description: 'The record as the provider returned it.' }),
  ),
  error: Type.Optional(Type.String({ description: 'Why this record was not written (batch writes).' })),
});
export type WriteRecordResultView = Static<typeof WriteRecordResult>;

export const WriteResponse = Type.Object({
  operationId: Uuid,
  result: Type.Optional(WriteRecordResult),
  results: Type.Optional(
    Type.Array(WriteRecordResult, { description: 'Per record, in order, for a synchronous batch.' }),
  ),
  successCount: Type.Optional(Type.Integer({ description: 'Records written, for a synchronous batch.' })),
  failureCount: Type.Optional(Type.Integer({ description: 'Records not written, for a synchronous batch.' })),
});

import Type, { type Static } from 'typebox';
import { DateTime, NfcName, ProjectIdOrName, Uuid } from './common.js';

const strict = { additionalProperties: false } as const;

export const ReadObjectParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  integrationId: NfcName({ minLength: 1, description: 'The integration’s ID or name.' }),
  objectName: Type.String({ minLength: 1, maxLength: 200 }),
});

export const TriggerReadBody = Type.Object(
  {
    groupRef: NfcName({ minLength: 1, description: 'The group whose installation reads.' }),
    mode: Type.Literal('async', {
      description: 'Reads always run in the background; `async` is the only mode.',
    }),
    sinceTimestamp: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'Records updated at or after this time. Absent: the whole history.',
      }),
    ),
    untilTimestamp: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'Records updated before this time. Absent: until now.',
      }),
    ),
  },
  strict,
);

export const TriggerReadResponse = Type.Object({
  operationId: Uuid,
});

export const DeliverResultsBody = Type.Object(
  {
    groupRef: NfcName({ minLength: 1 }),
    pages: Type.Integer({
      minimum: 1,
      maximum: 1000,
      description:
        'How many stored pages to send now, oldest first; the rest are sent as soon as they are read.',
    }),
  },
  strict,
);

export const BackfillProgressParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  integrationId: NfcName({ minLength: 1, description: 'The integration’s ID or name.' }),
  installationId: Type.String({ minLength: 1 }),
  objectName: Type.String({ minLength: 1, maxLength: 200 }),
});

export const BackfillProgressSchema = Type.Object({
  installationId: Uuid,
  objectName: Type.String({ description: 'The object as the path names it.' }),
  operationId: Uuid,
  recordsProcessed: Type.Integer(),
  recordsEstimatedTotal: Type.Optional(
    Type.Integer({
      description:
        'From the provider’s count, when it offers one; once the backfill succeeded without one, the records it read. Absent while a backfill without a count runs, and after it failed.',
    }),
  ),
  createTime: DateTime,
  updateTime: DateTime,
});

/** What started a read: the object's backfill, its schedule, or a request (API or operator). */
export const ReadTypeSchema = Type.Enum(['backfill', 'scheduled', 'triggered']);
export type ReadType = Static<typeof ReadTypeSchema>;

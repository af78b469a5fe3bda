import Type from 'typebox';
import { DateTime, Uuid } from './common.js';
import { EventTypeSchema } from './notifications.js';
import { FieldMetadataSchema } from './object-metadata.js';
import { ReadTypeSchema } from './reads.js';

/**
 * The bodies Ferry sends to webhook destinations (COMPAT.md "Messages delivered to a webhook
 * destination" and "Notification payloads"), for the OpenAPI document's `webhooks`. The builders
 * in src/delivery/messages.ts produce them; tests check delivered messages against these schemas.
 */

const strict = { additionalProperties: false } as const;
const Fields = Type.Record(Type.String(), Type.Unknown());

const recordEntry = {
  fields: Type.Record(Type.String(), Type.Unknown(), {
    description: 'The selected unmapped fields, under lower-cased names.',
  }),
  mappedFields: Type.Record(Type.String(), Type.Unknown(), {
    description: 'The mapped fields, under their `mapToName`.',
  }),
  raw: Type.Record(Type.String(), Type.Unknown(), {
    description: 'The record exactly as the provider sent it.',
  }),
  associations: Type.Optional(Fields),
};

export const RecordEntrySchema = Type.Object(
  {
    ...recordEntry,
    id: Type.Optional(Type.String({ description: 'The deleted record’s id, on deletions.' })),
    deleted: Type.Optional(
      Type.Literal(true, {
        description:
          'The record was deleted (or archived, trashed) at the provider since the last read: scheduled and triggered reads deliver deletions where the provider reveals them, unless the read object says `delivery.deletions: false`. `raw` is what the provider still shows of it.',
      }),
    ),
    inferred: Type.Optional(
      Type.Literal(true, {
        description:
          'On deletions only: the provider never said so; a scheduled full read (an object its provider cannot list by change time) walked the whole listing and no longer found the record. `fields`, `mappedFields` and `raw` are empty.',
      }),
    ),
  },
  strict,
);

export const SubscribeEntrySchema = Type.Object(
  {
    ...recordEntry,
    subscribeEventType: Type.Enum(['create', 'update', 'delete', 'associationUpdate', 'other']),
    providerEventType: Type.Optional(Type.String()),
    rawEvent: Type.Optional(Type.Unknown({ description: 'The provider’s event as it arrived.' })),
    id: Type.Optional(Type.String({ description: 'The deleted record’s id, on delete events.' })),
    fieldsUpdated: Type.Optional(Type.Array(Type.String())),
  },
  strict,
);

export const SchemaChangesSchema = Type.Object(
  {
    createdFields: Type.Array(FieldMetadataSchema),
    deletedFields: Type.Array(FieldMetadataSchema),
    changedFields: Type.Array(
      Type.Object({ oldSchema: FieldMetadataSchema, newSchema: FieldMetadataSchema }, strict),
    ),
  },
  strict,
);

/** What every result message says besides its records. */
const context = {
  projectId: Uuid,
  provider: Type.String(),
  workspace: Type.Optional(Type.String()),
  groupRef: Type.String(),
  groupName: Type.String(),
  consumerRef: Type.String(),
  consumerName: Type.String(),
  installationId: Type.String(),
  installationUpdateTime: DateTime,
  objectName: Type.String({ description: 'The mapped object name when the object is mapped.' }),
  rawObjectName: Type.String({ description: 'The provider’s object name.' }),
  operationTime: DateTime,
  resultInfo: Type.Object(
    { type: Type.Literal('inline'), numRecords: Type.Integer({ minimum: 0 }) },
    { ...strict, description: 'How many entries `result` holds.' },
  ),
};

export const ReadMessageSchema = Type.Object(
  {
    action: Type.Literal('read'),
    ...context,
    operationId: Uuid,
    readType: ReadTypeSchema,
    result: Type.Array(RecordEntrySchema),
  },
  { ...strict, title: 'ReadMessage' },
);

export const SubscribeMessageSchema = Type.Object(
  { action: Type.Literal('subscribe'), ...context, result: Type.Array(SubscribeEntrySchema) },
  { ...strict, title: 'SubscribeMessage' },
);

export const SchemaWatchMessageSchema = Type.Object(
  { action: Type.Literal('schema.watch'), ...context, result: SchemaChangesSchema },
  { ...strict, title: 'SchemaWatchMessage' },
);

/** One message to a webhook destination of a read, a subscription or a schema watch; under 300 KB. */
export const ResultMessageSchema = Type.Union(
  [ReadMessageSchema, SubscribeMessageSchema, SchemaWatchMessageSchema],
  { description: 'A read, subscribe or schema.watch message; `action` tells which.' },
);

/** A notification event as a topic's destination receives it. */
export const NotificationMessageSchema = Type.Object(
  {
    notificationType: EventTypeSchema,
    data: Type.Record(Type.String(), Type.Unknown(), {
      description: 'The event’s payload (COMPAT.md "Notification payloads").',
    }),
  },
  { ...strict, title: 'NotificationMessage' },
);

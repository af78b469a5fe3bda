import Type, { type Static } from 'typebox';
import { OperationProgressSchema } from './operations.js';
import { ReadTypeSchema } from './reads.js';
import { RecordChangeTypeSchema } from './write.js';

/**
 * An operation's `metadata`, one shape per action kind, declared once: the domain writes it through
 * typed helpers (domain/operation-metadata.ts) and reads it back through these schemas, never a cast.
 * Keys this version does not know are kept (additional properties), so a row written by another
 * version still decodes; a stored value that does not fit is dropped key by key, not trusted.
 */

const Objects = Type.Array(Type.String(), { description: 'The object the operation concerns (one).' });
const Window = Type.Object({ since: Type.Optional(Type.String()), until: Type.String() });
const Requested = Type.Object({
  sinceTimestamp: Type.Optional(Type.String()),
  untilTimestamp: Type.Optional(Type.String()),
});

export const ReadOperationMetadataSchema = Type.Object({
  objects: Objects,
  readType: ReadTypeSchema,
  progress: Type.Optional(Type.Partial(OperationProgressSchema)),
  /** A read of the whole history (a backfill, or a triggered read without `sinceTimestamp`). */
  backfill: Type.Optional(Type.Boolean()),
  window: Type.Optional(Window),
  /** The destination's name, as the plan named it. */
  destination: Type.Optional(Type.String()),
  /** Run by the installation's workflow rather than a workflow of its own (until handed over). */
  inline: Type.Optional(Type.Boolean()),
  /** The window a trigger or an operator asked for. */
  requested: Type.Optional(Requested),
  requestedWindow: Type.Optional(Type.Boolean()),
  requestedBy: Type.Optional(Type.Literal('operator')),
  retryOf: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
  authFailure: Type.Optional(Type.Boolean()),
  /** Which destination it failed at: re-enabling that one retries this read (destination-recovery). */
  failedAtDestinationId: Type.Optional(Type.String()),
  /** A triggered read its workflow never heard of, asked for again (stuck-operations). */
  resumedAfterStall: Type.Optional(Type.Boolean()),
});

const WriteError = Type.Object({
  index: Type.Integer(),
  recordId: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
});

export const WriteOperationMetadataSchema = Type.Object({
  objects: Objects,
  writeType: RecordChangeTypeSchema,
  mode: Type.Enum(['synchronous', 'asynchronous']),
  /** How many records were sent. */
  records: Type.Integer({ minimum: 0 }),
  successfulRecordIds: Type.Optional(Type.Array(Type.String())),
  /** The records that failed, whole (the public event lists them as strings). */
  errors: Type.Optional(Type.Array(WriteError)),
  retryOf: Type.Optional(Type.String()),
});

export const SubscribeOperationMetadataSchema = Type.Object({
  objects: Objects,
  subscribeEventType: Type.String(),
  providerEventType: Type.String(),
  recordId: Type.String(),
  subscriptionId: Type.String(),
  providerEventId: Type.String(),
  destination: Type.String(),
  destinationId: Type.String(),
  /**
   * A renewal of a subscription that expires (`subscribeEventType: renewal`), rather than an event:
   * its expiry before, and after when it succeeded.
   */
  renewal: Type.Optional(
    Type.Object({
      previousExpiresAt: Type.Optional(Type.String()),
      expiresAt: Type.Optional(Type.String()),
    }),
  ),
});

export const SchemaWatchOperationMetadataSchema = Type.Object({
  objects: Objects,
  destination: Type.String(),
  /** Absent when the destination named does not exist. */
  destinationId: Type.Optional(Type.String()),
});

export const McpToolOperationMetadataSchema = Type.Object({
  tool: Type.String(),
  /** Without secrets. */
  arguments: Type.Record(Type.String(), Type.Unknown()),
  sessionId: Type.String(),
  transport: Type.Enum(['http', 'stdio']),
  caller: Type.Union([
    Type.Object({ kind: Type.Literal('apiKey'), apiKeyId: Type.String() }),
    Type.Object({
      kind: Type.Literal('projectJwt'),
      keyId: Type.String(),
      subject: Type.Optional(Type.String()),
    }),
  ]),
  durationMs: Type.Number({ minimum: 0 }),
  /** The operation of a write the call made. */
  writeOperationId: Type.Optional(Type.String()),
});

/** Each action kind's metadata schema. */
export const OperationMetadataSchemas = {
  read: ReadOperationMetadataSchema,
  write: WriteOperationMetadataSchema,
  subscribe: SubscribeOperationMetadataSchema,
  'schema.watch': SchemaWatchOperationMetadataSchema,
  'mcp.tool': McpToolOperationMetadataSchema,
} as const;

export type OperationActionType = keyof typeof OperationMetadataSchemas;
export type OperationMetadataOf<K extends OperationActionType> = Static<(typeof OperationMetadataSchemas)[K]>;
export type ReadOperationMetadata = OperationMetadataOf<'read'>;
export type WriteOperationMetadata = OperationMetadataOf<'write'>;
export type SubscribeOperationMetadata = OperationMetadataOf<'subscribe'>;
export type SchemaWatchOperationMetadata = OperationMetadataOf<'schema.watch'>;
export type McpToolOperationMetadata = OperationMetadataOf<'mcp.tool'>;

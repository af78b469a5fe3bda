import type { Static, TObject } from 'typebox';
import { conforms } from '../core/validation.js';
import type { Operation } from '../db/entities/operation.js';
import {
  McpToolOperationMetadataSchema,
  ReadOperationMetadataSchema,
  SchemaWatchOperationMetadataSchema,
  SubscribeOperationMetadataSchema,
  WriteOperationMetadataSchema,
  type OperationActionType,
  type OperationMetadataOf,
  type ReadOperationMetadata,
  type SchemaWatchOperationMetadata,
  type SubscribeOperationMetadata,
  type WriteOperationMetadata,
} from '../schemas/operation-metadata.js';

/**
 * An operation's metadata, read and written per action kind through its schema
 * (schemas/operation-metadata.ts). A stored value is JSON of any age: it is read as it is when it
 * fits, otherwise each key that fits is kept over the kind's fallback, so an older or damaged row
 * still reads (an unknown object name, a triggered read, a synchronous write) rather than failing.
 */

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function decodeStored<T extends TObject>(schema: T, stored: unknown, fallback: Static<T>): Static<T> {
  if (conforms(schema, stored)) return stored;
  const kept = Object.entries(isRecord(stored) ? stored : {}).filter(([key, value]) => {
    const property: unknown = schema.properties[key];
    return property === undefined || conforms(schema.properties[key], value);
  });
  const salvaged = { ...fallback, ...Object.fromEntries(kept) };
  return conforms(schema, salvaged) ? salvaged : fallback;
}

export function readMetadataOf(stored: unknown): ReadOperationMetadata {
  return decodeStored(ReadOperationMetadataSchema, stored, { objects: [], readType: 'triggered' });
}

export function writeMetadataOf(stored: unknown): WriteOperationMetadata {
  return decodeStored(WriteOperationMetadataSchema, stored, {
    objects: [],
    writeType: 'create',
    mode: 'synchronous',
    records: 0,
  });
}

export function subscribeMetadataOf(stored: unknown): SubscribeOperationMetadata {
  return decodeStored(SubscribeOperationMetadataSchema, stored, {
    objects: [],
    subscribeEventType: 'other',
    providerEventType: '',
    recordId: '',
    subscriptionId: '',
    providerEventId: '',
    destination: '',
    destinationId: '',
  });
}

export function schemaWatchMetadataOf(stored: unknown): SchemaWatchOperationMetadata {
  return decodeStored(SchemaWatchOperationMetadataSchema, stored, { objects: [], destination: '' });
}

export function mcpToolMetadataOf(stored: unknown): OperationMetadataOf<'mcp.tool'> {
  return decodeStored(McpToolOperationMetadataSchema, stored, {
    tool: '',
    arguments: {},
    sessionId: '',
    transport: 'http',
    caller: { kind: 'apiKey', apiKeyId: '' },
    durationMs: 0,
  });
}

/** The object an operation concerns: the first of `objects`, or a read's progress names it. */
export function objectNameOf(metadata: { objects: string[]; progress?: { objectName?: string } }): string {
  return metadata.objects[0] ?? metadata.progress?.objectName ?? '';
}

/** Adds to (or replaces keys of) an operation's metadata, typed by its action kind. */
export function amendMetadata<K extends OperationActionType>(
  operation: Operation,
  kind: K,
  patch: Partial<OperationMetadataOf<K>>,
): void {
  if (operation.actionType !== kind) {
    throw new Error(`Operation ${operation.id} is a ${operation.actionType}, not a ${kind}.`);
  }
  operation.metadata = { ...operation.metadata, ...patch };
}

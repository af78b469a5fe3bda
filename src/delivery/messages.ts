import { createHash } from 'node:crypto';
import type { MappedRecord } from './record-mapping.js';
import type { ReadType } from '../schemas/reads.js';

/**
 * The bodies Ferry delivers to webhook destinations (COMPAT.md): read and subscribe results, split
 * into messages that each stay under the size limit, and notification events.
 */

/** One delivered message stays under 300 KB. */
export const MAX_MESSAGE_BYTES = 300 * 1024;

export type ResultAction = 'read' | 'subscribe' | 'schema.watch';

/** Everything in a result message except the records. */
export interface ResultMessageContext {
  action: ResultAction;
  projectId: string;
  provider: string;
  workspace?: string;
  groupRef: string;
  groupName: string;
  consumerRef: string;
  consumerName: string;
  installationId: string;
  /** ISO 8601. */
  installationUpdateTime: string;
  /** The mapped object name when the object is mapped, else the provider's name. */
  objectName: string;
  rawObjectName: string;
  /** Reads only. */
  operationId?: string;
  /** ISO 8601. */
  operationTime: string;
  /** Reads only. */
  readType?: ReadType;
}

export interface ReadMessageContext extends ResultMessageContext {
  action: 'read';
  operationId: string;
  readType: ReadType;
}

export interface ResultEntry extends MappedRecord {
  associations?: Record<string, unknown>;
}

/**
 * A read's entry: a record, or a deletion (`deleted`, with the record's `id`; `inferred` when a full
 * read found the record no longer listed rather than the provider saying so).
 */
export interface ReadResultEntry extends ResultEntry {
  id?: string;
  deleted?: true;
  inferred?: true;
}

export interface SubscribeResultEntry extends ResultEntry {
  subscribeEventType: 'create' | 'update' | 'delete' | 'associationUpdate' | 'other';
  providerEventType?: string;
  rawEvent?: unknown;
  /** The deleted record's id, on delete events (or when the event carried no record). */
  id?: string;
  fieldsUpdated?: string[];
}

export interface ResultMessage<Entry extends ResultEntry = ResultEntry> extends ResultMessageContext {
  resultInfo: { type: 'inline'; numRecords: number };
  result: Entry[];
}

/** Builds a result message with its keys in the documented order, leaving out absent optional ones. */
export function buildResultMessage<Entry extends ResultEntry>(
  context: ResultMessageContext,
  result: Entry[],
): ResultMessage<Entry> {
  return {
    action: context.action,
    projectId: context.projectId,
    provider: context.provider,
    ...(context.workspace !== undefined && { workspace: context.workspace }),
    groupRef: context.groupRef,
    groupName: context.groupName,
    consumerRef: context.consumerRef,
    consumerName: context.consumerName,
    installationId: context.installationId,
    installationUpdateTime: context.installationUpdateTime,
    objectName: context.objectName,
    rawObjectName: context.rawObjectName,
    ...(context.operationId !== undefined && { operationId: context.operationId }),
    operationTime: context.operationTime,
    ...(context.readType !== undefined && { readType: context.readType }),
    resultInfo: { type: 'inline', numRecords: result.length },
    result,
  };
}

/** A record that cannot be delivered even alone in a message. */
export class MessageTooLargeError extends Error {
  override readonly name = 'MessageTooLargeError';

  constructor(
    readonly recordIndex: number,
    readonly messageBytes: number,
    readonly maxBytes: number,
  ) {
    super(
      `record ${recordIndex} of the page makes a ${messageBytes}-byte message on its own, over the ${maxBytes}-byte limit`,
    );
  }
}

/** One message ready to sign and send: `body` is the exact JSON, encoded as UTF-8. */
export interface MessagePart {
  partIndex: number;
  numRecords: number;
  body: Buffer;
}

const COMMA = Buffer.from(',');
const MESSAGE_END = Buffer.from(']}');

/** An entry as it appears in a message: its JSON, encoded as UTF-8. */
export function encodeEntry(entry: ResultEntry): Buffer {
  return Buffer.from(JSON.stringify(entry), 'utf8');
}

/**
 * Splits one page of entries into messages of at most `pageSize` entries whose serialized body is at
 * most `maxBytes` of UTF-8, keeping the entries' order. Each entry is serialized and encoded once,
 * and each body is put together from those bytes: a message's size is the empty message's size plus
 * its entries and the commas between them.
 */
export function splitIntoMessages(
  context: ResultMessageContext,
  entries: readonly ResultEntry[],
  pageSize: number,
  maxBytes = MAX_MESSAGE_BYTES,
): MessagePart[] {
  return splitEncoded(context, entries.map(encodeEntry), pageSize, maxBytes);
}

/** `splitIntoMessages` for entries already encoded (`encodeEntry`). */
export function splitEncoded(
  context: ResultMessageContext,
  encoded: readonly Buffer[],
  pageSize: number,
  maxBytes = MAX_MESSAGE_BYTES,
): MessagePart[] {
  if (!Number.isInteger(pageSize) || pageSize < 1)
    throw new RangeError(`pageSize must be a positive integer, got ${pageSize}`);
  const empty = JSON.stringify(buildResultMessage(context, []));
  const emptyBytes = Buffer.byteLength(empty);
  // Everything before the count: the empty message ends `"numRecords":0},"result":[]}`.
  const head = empty.slice(0, empty.length - '0},"result":[]}'.length);
  // The empty message says numRecords 0; a message of n entries spells n instead.
  const messageBytes = (count: number, entriesBytes: number) =>
    emptyBytes - 1 + String(count).length + entriesBytes + Math.max(count - 1, 0);

  const parts: MessagePart[] = [];
  let start = 0;
  while (start < encoded.length) {
    let count = 0;
    let entriesBytes = 0;
    while (start + count < encoded.length && count < pageSize) {
      const withNext = messageBytes(count + 1, entriesBytes + encoded[start + count].length);
      if (withNext > maxBytes) break;
      entriesBytes += encoded[start + count].length;
      count++;
    }
    if (count === 0) throw new MessageTooLargeError(start, messageBytes(1, encoded[start].length), maxBytes);
    const pieces: Buffer[] = [Buffer.from(`${head}${count}},"result":[`, 'utf8')];
    for (let index = start; index < start + count; index++) {
      if (index > start) pieces.push(COMMA);
      pieces.push(encoded[index]);
    }
    pieces.push(MESSAGE_END);
    parts.push({ partIndex: parts.length, numRecords: count, body: Buffer.concat(pieces) });
    start += count;
  }
  return parts;
}

/**
 * A message id derived from what the message is, so a page delivered again after a crash or retry
 * carries the same id and receivers can deduplicate it.
 */
export function stableMessageId(...parts: (string | number)[]): string {
  const digest = createHash('sha256').update(parts.map(String).join('\u0000')).digest();
  return `msg_${digest.subarray(0, 18).toString('base64url')}`;
}

/** The id of part `partIndex` of provider page `pageIndex` of a read or subscribe operation. */
export function messageIdFor(operationId: string, pageIndex: number, partIndex: number): string {
  return stableMessageId('result', operationId, pageIndex, partIndex);
}

/** The id of a notification event's message; the same event to several destinations keeps one id. */
export function notificationMessageId(eventId: string): string {
  return stableMessageId('notification', eventId);
}

export type NotificationType =
  | 'connection.created'
  | 'connection.error'
  | 'connection.refreshed'
  | 'connection.updated'
  | 'connection.deleted'
  | 'installation.created'
  | 'installation.updated'
  | 'installation.deleted'
  | 'read.schedule.paused'
  | 'read.backfill.done'
  | 'read.triggered.done'
  | 'read.triggered.error'
  | 'write.async.done'
  | 'subscribe.create.error'
  | 'subscribe.update.error'
  | 'subscribe.delete.error'
  | 'subscribe.create.success'
  | 'subscribe.update.success'
  | 'subscribe.delete.success'
  | 'destination.webhook.disabled'
  | 'destination.delivery.error'
  | 'destination.disabled';

export interface NotificationMessage<Data = Record<string, unknown>> {
  notificationType: NotificationType;
  data: Data;
}

/** The webhook body of a notification event: `{notificationType, data}`. */
export function buildNotification<Data>(
  notificationType: NotificationType,
  data: Data,
): NotificationMessage<Data> {
  return { notificationType, data };
}

import { EntitySchema } from '@mikro-orm/core';
import { timestampColumn, uuidColumn } from '../columns.js';

/** A message of a read whose object is delivered on request, kept until the receiver asks for it. */
export interface StoredPage {
  id?: string;
  projectId: string;
  installationId: string;
  objectName: string;
  operationId: string;
  pageIndex: number;
  partIndex: number;
  messageId: string;
  numRecords: number;
  /** The message body exactly as it will be signed and sent. */
  body: string;
  createTime: Date;
}

export const StoredPageEntity = new EntitySchema<StoredPage>({
  name: 'StoredPage',
  tableName: 'stored_pages',
  properties: {
    id: { type: 'bigint', primary: true, autoincrement: true },
    projectId: uuidColumn,
    installationId: uuidColumn,
    objectName: { type: 'string' },
    operationId: uuidColumn,
    pageIndex: { type: 'integer' },
    partIndex: { type: 'integer' },
    messageId: { type: 'string' },
    numRecords: { type: 'integer' },
    body: { type: 'text' },
    createTime: { ...timestampColumn, onCreate: () => new Date() },
  },
});

/** Pages a receiver asked for (deliverResults) that no stored page has answered yet. */
export interface DeliveryCredit {
  installationId: string;
  objectName: string;
  projectId: string;
  pages: number;
  updateTime: Date;
}

export const DeliveryCreditEntity = new EntitySchema<DeliveryCredit>({
  name: 'DeliveryCredit',
  tableName: 'delivery_credits',
  properties: {
    installationId: { ...uuidColumn, primary: true },
    objectName: { type: 'string', primary: true },
    projectId: uuidColumn,
    pages: { type: 'integer' },
    updateTime: { ...timestampColumn, onCreate: () => new Date(), onUpdate: () => new Date() },
  },
});

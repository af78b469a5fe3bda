import type { EntityManager } from '@mikro-orm/postgresql';
import { em as newEntityManager } from '../../db/orm.js';
import type { MessagePart } from '../../delivery/messages.js';
import { messageIdFor } from '../../delivery/messages.js';
import {
  attemptDelivery,
  type DeliveryAttemptResult,
  type DeliverySettings,
} from '../destination-delivery.js';

/**
 * `delivery.mode: onRequest`: a read stores its messages instead of sending them, and a receiver
 * asks for them (`:deliverResults {pages}`), oldest first. Pages asked for while none are stored
 * remain as credit, and are sent as soon as the read stores more.
 */

export interface StoredObject {
  projectId: string;
  installationId: string;
  objectName: string;
}

/** Stores one provider page's messages; a page stored again (a retried activity) keeps its first copy. */
export async function storeMessages(
  em: EntityManager,
  object: StoredObject,
  operationId: string,
  pageIndex: number,
  parts: readonly MessagePart[],
): Promise<void> {
  if (!parts.length) return;
  const values = parts.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
  const params = parts.flatMap((part) => [
    object.projectId,
    object.installationId,
    object.objectName,
    operationId,
    pageIndex,
    part.partIndex,
    messageIdFor(operationId, pageIndex, part.partIndex),
    part.numRecords,
    part.body.toString('utf8'),
  ]);
  await em.execute(
    `insert into stored_pages
       (project_id, installation_id, object_name, operation_id, page_index, part_index, message_id, num_records, body)
     values ${values}
     on conflict (operation_id, page_index, part_index) do nothing`,
    params,
    'run',
  );
}

/** Adds `pages` to what the receiver has asked for and not yet received. */
export async function grantPages(em: EntityManager, object: StoredObject, pages: number): Promise<void> {
  await em.execute(
    `insert into delivery_credits (installation_id, object_name, project_id, pages, update_time)
     values (?, ?, ?, ?, now())
     on conflict (installation_id, object_name)
     do update set pages = delivery_credits.pages + excluded.pages, update_time = now()`,
    [object.installationId, object.objectName, object.projectId, pages],
    'run',
  );
}

export async function outstandingPages(em: EntityManager, object: StoredObject): Promise<number> {
  const rows = await em.execute<{ pages: number }[]>(
    'select pages from delivery_credits where installation_id = ? and object_name = ?',
    [object.installationId, object.objectName],
  );
  return rows[0]?.pages ?? 0;
}

export async function storedPageCount(em: EntityManager, object: StoredObject): Promise<number> {
  const rows = await em.execute<{ count: string }[]>(
    'select count(*) as count from stored_pages where installation_id = ? and object_name = ?',
    [object.installationId, object.objectName],
  );
  return Number(rows[0]?.count ?? 0);
}

export interface DrainResult {
  delivered: number;
  /** The attempt that stopped the drain; its page stays stored and its credit stays granted. */
  failure?: DeliveryAttemptResult;
}

class NothingStored extends Error {}

class DeliveryStopped extends Error {
  constructor(readonly result: DeliveryAttemptResult) {
    super(result.error ?? 'delivery failed');
  }
}

/**
 * Sends stored messages, oldest first, while credit remains. Each send takes one credit and locks
 * its row in one transaction that commits only once the receiver accepted the message, so a failed
 * send gives the credit back and two drains never send the same message.
 */
export async function drainStoredPages(
  object: StoredObject,
  destinationId: string,
  settings: DeliverySettings,
): Promise<DrainResult> {
  let delivered = 0;
  for (;;) {
    const em = await newEntityManager();
    try {
      const sent = await em.transactional(async (tx) => {
        const credit = await tx.execute<{ pages: number }[]>(
          `update delivery_credits set pages = pages - 1, update_time = now()
           where installation_id = ? and object_name = ? and pages > 0 returning pages`,
          [object.installationId, object.objectName],
        );
        if (!credit.length) return false;
        const rows = await tx.execute<
          { id: string; message_id: string; body: string; operation_id: string }[]
        >(
          `select id, message_id, body, operation_id from stored_pages
           where installation_id = ? and object_name = ?
           order by id limit 1 for update skip locked`,
          [object.installationId, object.objectName],
        );
        if (!rows.length) {
          // Nothing stored: undo the credit taken above by rolling back.
          throw new NothingStored();
        }
        const [page] = rows;
        const result = await attemptDelivery(
          {
            projectId: object.projectId,
            destinationId,
            messageId: page.message_id,
            body: page.body,
            kind: 'record',
            operationId: page.operation_id,
          },
          settings,
        );
        if (!result.delivered) throw new DeliveryStopped(result);
        await tx.execute('delete from stored_pages where id = ?', [page.id], 'run');
        return true;
      });
      if (!sent) return { delivered };
      delivered++;
    } catch (error) {
      if (error instanceof NothingStored) return { delivered };
      if (error instanceof DeliveryStopped) return { delivered, failure: error.result };
      throw error;
    }
  }
}

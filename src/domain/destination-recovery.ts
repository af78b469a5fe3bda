import type { EntityManager } from '@mikro-orm/postgresql';
import type { Destination } from '../db/entities/operation.js';
import type { Project } from '../db/entities/project.js';
import { NotificationEventEntity } from '../db/entities/event.js';
import { logger } from '../logger.js';
import { notificationDeliveryMessageId, eventIdentity } from '../notifications/message.js';
import { destinationsForEvent } from '../notifications/routing.js';
import { startNotificationDelivery } from '../temporal/gateway.js';
import { retryOperation } from './operation-retry.js';

/**
 * What re-enabling a destination resumes, as Svix's "recover" does: every read that failed at this
 * destination since its failures began continues from its last delivered page (the newest failed
 * read of each installation's object; older ones are covered by it or by the next scheduled read),
 * and every notification routed to it since then that it never accepted is sent again under the
 * same message id. Safe to repeat: a read already retried and a notification already accepted are
 * left alone.
 */

export interface DestinationRecovery {
  /** The new operations of the reads retried. */
  readsResumed: string[];
  /** The events sent again. */
  notificationsResent: string[];
}

/** The most of each kind one recovery takes on; older failures can still be retried by hand. */
const RECOVERY_LIMIT = 1000;

export async function recoverDestination(
  em: EntityManager,
  project: Project,
  destination: Destination,
  since: Date,
): Promise<DestinationRecovery> {
  const recovery: DestinationRecovery = { readsResumed: [], notificationsResent: [] };
  for (const operationId of await readsToResume(em, destination, since)) {
    try {
      recovery.readsResumed.push((await retryOperation(em, project, operationId)).operationId);
    } catch (error) {
      logger.warn({ err: error, operationId }, 'could not resume a read on its re-enabled destination');
    }
  }
  for (const event of await notificationsToResend(em, destination, since)) {
    await startNotificationDelivery(
      { eventId: event.id, destinationId: destination.id, projectId: destination.projectId },
      {
        eventType: event.type,
        workflowIdSuffix: `recover-${since.getTime()}`,
        identity: eventIdentity(destination.projectId, event.data),
      },
    );
    recovery.notificationsResent.push(event.id);
  }
  logger.info(
    {
      destinationId: destination.id,
      reads: recovery.readsResumed.length,
      notifications: recovery.notificationsResent.length,
    },
    'destination re-enabled: resumed what was waiting for it',
  );
  return recovery;
}

async function readsToResume(em: EntityManager, destination: Destination, since: Date): Promise<string[]> {
  const rows = await em.execute<{ id: string }[]>(
    `select distinct on (o.installation_id, o.metadata->'objects'->>0) o.id
       from operations o
      where o.project_id = ? and o.action_type = 'read' and o.status = 'failure'
        and o.metadata->>'failedAtDestinationId' = ? and o.update_time >= ?
        and not exists (select 1 from operations r
                         where r.project_id = o.project_id and r.metadata->>'retryOf' = o.id::text)
      order by o.installation_id, o.metadata->'objects'->>0, o.create_time desc
      limit ?`,
    [destination.projectId, destination.id, since, RECOVERY_LIMIT],
  );
  return rows.map((row) => row.id);
}

/** Events since `since` whose routes lead to the destination and that it never accepted. */
async function notificationsToResend(
  em: EntityManager,
  destination: Destination,
  since: Date,
): Promise<{ id: string; type: string; data: Record<string, unknown> }[]> {
  const events = await em.find(
    NotificationEventEntity,
    { projectId: destination.projectId, createTime: { $gte: since } },
    { orderBy: { createTime: 'asc' }, limit: RECOVERY_LIMIT },
  );
  // What it accepted since, in one query: a notification's attempts all carry one message id.
  const accepted = new Set(
    (
      await em.execute<{ message_id: string }[]>(
        `select distinct message_id from delivery_attempts
          where project_id = ? and destination_id = ? and kind = 'notification' and delivered and create_time >= ?`,
        [destination.projectId, destination.id, since],
      )
    ).map((row) => row.message_id),
  );
  const waiting = [];
  for (const event of events) {
    const routed = await destinationsForEvent(em, {
      id: event.id,
      projectId: event.projectId,
      type: event.type,
      ...(typeof event.data.destinationId === 'string' && { subjectDestinationId: event.data.destinationId }),
    });
    if (!routed.includes(destination.id)) continue;
    if (!accepted.has(notificationDeliveryMessageId(event.id, destination.id))) waiting.push(event);
  }
  return waiting;
}

import type { EntityManager } from '@mikro-orm/postgresql';

/** An outbox event as the relay claims it. */
export interface ClaimedEvent {
  id: string;
  projectId: string;
  type: string;
  /** For destination events: the destination the event is about. */
  subjectDestinationId?: string;
}

/**
 * The destinations one event goes to: every enabled destination subscribed to a topic that the
 * event's type is routed to, once each even when several topics lead to it.
 *
 * Events about a destination (`destination.delivery.error`, `destination.webhook.disabled`) never go
 * to a destination that is itself failing: that destination would fail again and report it with a
 * new event, and two failing destinations would feed each other without end.
 */
export async function destinationsForEvent(em: EntityManager, event: ClaimedEvent): Promise<string[]> {
  const aboutDestinations = event.type.startsWith('destination.');
  const rows = await em.execute<{ destination_id: string }[]>(
    `select distinct tdr.destination_id
       from event_topic_routes etr
       join topic_destination_routes tdr on tdr.topic_id = etr.topic_id
       join destinations d on d.id = tdr.destination_id
      where etr.project_id = ? and etr.event_type = ? and d.disabled_time is null
        ${aboutDestinations ? 'and d.first_failure_time is null and d.id is distinct from ?::uuid' : ''}
      order by tdr.destination_id`,
    aboutDestinations
      ? [event.projectId, event.type, event.subjectDestinationId ?? null]
      : [event.projectId, event.type],
  );
  return rows.map((row) => row.destination_id);
}

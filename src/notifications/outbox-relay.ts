import type { EntityManager } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { Config } from '../config.js';
import { logger } from '../logger.js';
import { em as newEntityManager, transaction } from '../db/orm.js';
import { measureOutboxLagWith } from '../metrics.js';
import { NotificationEventEntity } from '../db/entities/event.js';
import { startNotificationDelivery } from '../temporal/gateway.js';
import { eventIdentity } from './message.js';
import { destinationsForEvent, type ClaimedEvent } from './routing.js';

/**
 * Moves committed outbox events to Temporal: claims unrouted events (`for update skip locked`, so
 * several relays share the work), starts one delivery workflow per (event, destination), and marks
 * the events routed in the same transaction. Events with no route are marked routed too: kept and
 * listed, never delivered. A crash between starting workflows and committing only repeats starts,
 * which the workflow ids make no-ops.
 */

export interface OutboxRelayOptions {
  /** Poll interval when no notification wakes the relay. */
  intervalMs?: number;
  batchSize?: number;
  /** The deployment's base task queue (FERRY_TASK_QUEUE unless given); deliveries run on its `deliveries` queue. */
  taskQueue?: string;
  /** LISTEN for the insert trigger's notifications; polling alone still works without it. */
  listen?: boolean;
  /**
   * Relay only these projects' events. Tests use it so that parallel test processes, each with a
   * task queue of its own, never take each other's events.
   */
  onlyProjects?: () => Iterable<string>;
}

export interface OutboxRelay {
  /** Relays now instead of at the next poll. */
  wake(): void;
  stop(): Promise<void>;
}

const CHANNEL = 'ferry_events';
const LISTEN_RETRY_MS = 30_000;

interface EventRow {
  id: string;
  project_id: string;
  type: string;
  subject_destination_id: string | null;
  data: Record<string, unknown>;
}

/** Relays one batch; returns how many events it claimed. */
export async function relayBatch(
  options: Pick<OutboxRelayOptions, 'batchSize' | 'onlyProjects'> & { taskQueue: string },
): Promise<number> {
  const batchSize = options.batchSize ?? 100;
  const { taskQueue } = options;
  const projects = options.onlyProjects && [...options.onlyProjects()];
  if (projects && !projects.length) return 0;
  return transaction(async (em: EntityManager) => {
    const rows = await em.execute<EventRow[]>(
      `select id, project_id, type, data->>'destinationId' as subject_destination_id,
              jsonb_build_object('integrationId', data->'integrationId', 'installationId', data->'installationId',
                                 'provider', data->'provider', 'groupRef', data->'groupRef') as data
         from events
        where routed_time is null ${projects ? 'and project_id = any(?::uuid[])' : ''}
        order by create_time, id
        limit ?
          for update skip locked`,
      projects ? [`{${projects.join(',')}}`, batchSize] : [batchSize],
    );
    if (!rows.length) return 0;
    for (const row of rows) {
      const event: ClaimedEvent = {
        id: row.id,
        projectId: row.project_id,
        type: row.type,
        ...(row.subject_destination_id && { subjectDestinationId: row.subject_destination_id }),
      };
      const destinations = await destinationsForEvent(em, event);
      await Promise.all(
        destinations.map((destinationId) =>
          startNotificationDelivery(
            { eventId: event.id, destinationId, projectId: event.projectId },
            {
              eventType: event.type,
              baseTaskQueue: taskQueue,
              identity: eventIdentity(event.projectId, row.data),
            },
          ),
        ),
      );
    }
    await em.nativeUpdate(
      NotificationEventEntity,
      { id: { $in: rows.map((row) => row.id) } },
      { routedTime: new Date() },
    );
    return rows.length;
  });
}

/** A LISTEN connection that calls `onEvent` whenever events commit; reconnects lazily after errors. */
class EventListener {
  private client?: pg.Client;
  private connecting?: Promise<void>;
  /** After a failure, wait before connecting again rather than trying (and logging) on every poll. */
  private retryAt = 0;

  constructor(
    private readonly databaseUrl: string,
    private readonly onEvent: () => void,
  ) {}

  ensure(): void {
    if (this.client || this.connecting || Date.now() < this.retryAt) return;
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on('notification', () => this.onEvent());
    client.on('error', (error) => {
      logger.warn({ err: error }, 'outbox relay lost its LISTEN connection; polling until it reconnects');
      this.drop(client);
    });
    this.connecting = client
      .connect()
      .then(() => client.query(`listen ${CHANNEL}`))
      .then(() => {
        this.client = client;
      })
      .catch((error) => {
        logger.warn({ err: error }, 'outbox relay could not LISTEN; polling only');
        this.drop(client);
      })
      .finally(() => {
        this.connecting = undefined;
      });
  }

  private drop(client: pg.Client): void {
    if (this.client === client) this.client = undefined;
    this.retryAt = Date.now() + LISTEN_RETRY_MS;
    client.end().catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.connecting;
    if (this.client) await this.client.end().catch(() => undefined);
    this.client = undefined;
  }
}

/** Seconds since the oldest unrouted event was raised, 0 when none waits (the `events_unrouted` index answers it). */
export async function outboxLagSeconds(): Promise<number> {
  const em = await newEntityManager();
  const [row] = await em.execute<{ lag: number | string | null }[]>(
    'select extract(epoch from now() - min(create_time)) as lag from events where routed_time is null',
  );
  return Math.max(0, Number(row?.lag ?? 0));
}

/** `settings`: where the events are (DATABASE_URL) and the deployment's task queue, read by the caller. */
export function startOutboxRelay(
  settings: Pick<Config, 'databaseUrl' | 'temporal'>,
  options: OutboxRelayOptions = {},
): OutboxRelay {
  // The process that relays reports how far behind the relays are (ferry_outbox_lag_seconds).
  measureOutboxLagWith(outboxLagSeconds);
  const intervalMs = options.intervalMs ?? 500;
  const batchSize = options.batchSize ?? 100;
  let stopped = false;
  let wakeUp: (() => void) | undefined;
  let pendingWake = false;
  const wake = () => {
    pendingWake = true;
    wakeUp?.();
  };
  const listener = options.listen === false ? undefined : new EventListener(settings.databaseUrl, wake);

  const idle = () =>
    new Promise<void>((resolve) => {
      if (pendingWake || stopped) return resolve();
      const timer = setTimeout(done, intervalMs);
      function done() {
        clearTimeout(timer);
        wakeUp = undefined;
        resolve();
      }
      wakeUp = done;
    });

  const loop = (async () => {
    let failing = false;
    while (!stopped) {
      listener?.ensure();
      pendingWake = false;
      let claimed = 0;
      try {
        claimed = await relayBatch({
          batchSize,
          taskQueue: options.taskQueue ?? settings.temporal.taskQueue,
          onlyProjects: options.onlyProjects,
        });
        if (failing) logger.info('outbox relay recovered');
        failing = false;
      } catch (error) {
        // Nothing was marked routed; the same events are claimed again next time.
        if (!failing) logger.warn({ err: error }, 'outbox relay failed; retrying');
        failing = true;
      }
      if (claimed < batchSize || failing) await idle();
    }
  })();

  return {
    wake,
    async stop() {
      stopped = true;
      wakeUp?.();
      await loop;
      await listener?.close();
    },
  };
}

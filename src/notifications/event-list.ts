import type { EntityManager } from '@mikro-orm/postgresql';
import Type from 'typebox';
import { invalidPageToken, pageTokenCodec } from '../crypto/page-token.js';
import type { NotificationEventView } from '../schemas/notifications.js';

/**
 * The project's outbox, newest first, with opaque cursors. The cursor carries the last row's
 * create time to the microsecond and its id, so rows written in the same millisecond are neither
 * repeated nor skipped.
 */

interface Cursor {
  time: string;
  id: string;
}

interface EventRow {
  id: string;
  project_id: string;
  type: string;
  data: Record<string, unknown>;
  create_time: Date;
  routed_time: Date | null;
  cursor_time: string;
}

const timestampPattern = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}Z$';

/** Tokens of a project's event listing (crypto/page-token): the last row's time and id. */
const eventsToken = pageTokenCodec(
  'events',
  Type.Object(
    { time: Type.String({ pattern: timestampPattern }), id: Type.String({ format: 'uuid' }) },
    { additionalProperties: false },
  ),
);

function decodeCursor(projectId: string, token: string, secret: Buffer): Cursor {
  const cursor = eventsToken.decode(projectId, token, secret);
  // The shape alone lets through times no calendar has (2024-02-30, hour 99).
  const time = new Date(cursor.time);
  if (Number.isNaN(time.getTime()) || time.toISOString().slice(0, 23) !== cursor.time.slice(0, 23)) {
    throw invalidPageToken(token);
  }
  return cursor;
}

export function eventView(row: {
  id: string;
  projectId: string;
  type: string;
  data: Record<string, unknown>;
  createTime: Date;
  routedTime?: Date | null;
}): NotificationEventView {
  return {
    id: row.id,
    projectId: row.projectId,
    eventType: row.type,
    data: row.data,
    createTime: row.createTime.toISOString(),
    ...(row.routedTime && { routedTime: row.routedTime.toISOString() }),
  };
}

export interface EventPage {
  results: NotificationEventView[];
  pagination: { done: boolean; nextPageToken?: string };
}

export async function listEvents(
  em: EntityManager,
  projectId: string,
  options: { eventType?: string; pageSize: number; pageToken?: string },
  /** The key page tokens are signed under (FERRY_ENCRYPTION_KEY). */
  secret: Buffer,
): Promise<EventPage> {
  const cursor = options.pageToken ? decodeCursor(projectId, options.pageToken, secret) : undefined;
  const conditions = ['project_id = ?'];
  const params: unknown[] = [projectId];
  if (options.eventType) {
    conditions.push('type = ?');
    params.push(options.eventType);
  }
  if (cursor) {
    conditions.push('(create_time, id) < (?::timestamptz, ?::uuid)');
    params.push(cursor.time, cursor.id);
  }
  // One row more than asked tells whether another page exists.
  params.push(options.pageSize + 1);
  const rows = await em.execute<EventRow[]>(
    `select id, project_id, type, data, create_time, routed_time,
            to_char(create_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_time
       from events
      where ${conditions.join(' and ')}
      order by create_time desc, id desc
      limit ?`,
    params,
  );
  const page = rows.slice(0, options.pageSize);
  const last = page.at(-1);
  const done = rows.length <= options.pageSize || !last;
  return {
    results: page.map((row) =>
      eventView({
        id: row.id,
        projectId: row.project_id,
        type: row.type,
        data: row.data,
        createTime: new Date(row.create_time),
        routedTime: row.routed_time && new Date(row.routed_time),
      }),
    ),
    pagination: done
      ? { done }
      : {
          done,
          nextPageToken: eventsToken.encode(projectId, { time: last.cursor_time, id: last.id }, secret),
        },
  };
}

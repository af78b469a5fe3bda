import type { EntityManager } from '@mikro-orm/postgresql';
import { OperationLogEntity, type OperationLog } from '../db/entities/operation.js';
import type { OperationLogView } from '../schemas/operations.js';

/**
 * Operation logs: what a run did, for the builder (spec: Operation log entry). Entries are written
 * in batches with the state change they describe. Never put secrets in `details`: request URLs come
 * from the connectors' request hook, which strips credentials.
 */

export type Severity = OperationLog['severity'];

export interface LogEntry {
  severity: Severity;
  msg: string;
  error?: string;
  details?: Record<string, unknown>;
  /** Defaults to when the entry is written. */
  timestamp?: Date;
}

/** The most entries the logs endpoint returns for one operation, oldest first. */
export const MAX_LOG_ENTRIES = 10_000;

/** Adds entries to the caller's unit of work (flushed with it). */
export function appendLogs(
  em: EntityManager,
  projectId: string,
  operationId: string,
  entries: readonly LogEntry[],
): void {
  const now = new Date();
  for (const entry of entries) {
    em.persist(
      em.create(OperationLogEntity, {
        projectId,
        operationId,
        timestamp: entry.timestamp ?? now,
        severity: entry.severity,
        msg: entry.msg,
        ...(entry.error !== undefined && { error: entry.error }),
        details: entry.details ?? {},
      }),
    );
  }
}

export async function writeLogs(
  em: EntityManager,
  projectId: string,
  operationId: string,
  entries: readonly LogEntry[],
): Promise<void> {
  if (!entries.length) return;
  appendLogs(em, projectId, operationId, entries);
  await em.flush();
}

/**
 * Detail values as the public log shape has them, strings: a string as it is, anything else as its
 * JSON (`"503"`, `"{\"method\":\"GET\",…}"`). They are stored as written.
 */
function detailStrings(details: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(details)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => [name, typeof value === 'string' ? value : JSON.stringify(value)]),
  );
}

export function logView(log: OperationLog): OperationLogView {
  return {
    timestamp: log.timestamp.toISOString(),
    severity: log.severity,
    message: {
      msg: log.msg,
      ...(log.error != null && { error: log.error }),
      operation_id: log.operationId,
      details: detailStrings(log.details ?? {}),
    },
  };
}

export async function listLogs(
  em: EntityManager,
  projectId: string,
  operationId: string,
): Promise<OperationLogView[]> {
  const logs = await em.find(
    OperationLogEntity,
    { projectId, operationId },
    { orderBy: { id: 'asc' }, limit: MAX_LOG_ENTRIES },
  );
  return logs.map(logView);
}

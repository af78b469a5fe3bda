import { TtlCache } from '../../core/ttl-cache.js';
import { type Connector, type ConnectionTarget, type RequestLogEntry } from '../../providers/connector.js';
import { connectorFor } from '../../providers/connectors/index.js';
import { connectionTarget } from '../credentials.js';
import type { LogEntry } from '../operation-logs.js';

/**
 * The connector a read uses for one step, reporting each provider request as a DEBUG log entry
 * (`details.request: {method, url}`, credentials already stripped by the HTTP layer).
 */

/** Targets are reused briefly: a read asks for one per page, and `auth()` refreshes tokens itself. */
const TARGET_TTL_MS = 60_000;
const MAX_TARGETS = 200;
const targets = new TtlCache<string, Promise<ConnectionTarget>>(TARGET_TTL_MS, MAX_TARGETS);

function cachedTarget(connectionId: string): Promise<ConnectionTarget> {
  const cached = targets.get(connectionId);
  if (cached) return cached;
  const target = connectionTarget(connectionId);
  targets.set(connectionId, target);
  target.catch(() => targets.delete(connectionId));
  return target;
}

export function requestLog(entry: RequestLogEntry): LogEntry {
  const outcome = entry.status !== undefined ? String(entry.status) : (entry.error ?? 'no answer');
  return {
    severity: 'DEBUG',
    msg: `${entry.method} ${entry.url} → ${outcome} (${Math.round(entry.durationMs)} ms)`,
    ...(entry.error && { error: entry.error }),
    details: {
      request: { method: entry.method, url: entry.url },
      ...(entry.status !== undefined && { response: { status: entry.status } }),
      durationMs: Math.round(entry.durationMs),
      attempt: entry.attempt,
      ...(entry.retryInMs !== undefined && { retryInMs: entry.retryInMs }),
    },
  };
}

export async function readConnector(connectionId: string, logs: LogEntry[]): Promise<Connector> {
  const target = await cachedTarget(connectionId);
  return connectorFor(target, { onRequest: (entry) => logs.push(requestLog(entry)) });
}

/**
 * The connector for the pages of one read, fetched one after the other: built once and again only
 * when the connection's target changes (after TARGET_TTL_MS), instead of once a page. Each call
 * names the list that the requests of the page about to be fetched are logged to.
 */
export function pageConnector(connectionId: string): (logs: LogEntry[]) => Promise<Connector> {
  let built: { target: Promise<ConnectionTarget>; connector: Connector } | undefined;
  let pageLogs: LogEntry[] = [];
  return async (logs) => {
    pageLogs = logs;
    const target = cachedTarget(connectionId);
    if (built?.target !== target) {
      const connector = connectorFor(await target, {
        onRequest: (entry) => pageLogs.push(requestLog(entry)),
      });
      built = { target, connector };
    }
    return built.connector;
  };
}

import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Ferry's Prometheus metrics, declared once, in one registry per process. Code that finishes a
 * read, a write or a delivery attempt counts it here; `/metrics` on the metrics listener
 * (FERRY_METRICS_PORT, FERRY_WORKER_METRICS_PORT) serves them, off the public listeners and
 * without an API key. Workflows never import this module: they run in Temporal's sandbox, and
 * their activities count for them.
 */

export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'ferry_' });

export const httpRequestDuration = new Histogram({
  name: 'ferry_http_request_duration_seconds',
  help: 'Time to answer an HTTP request, by host, method, route template and status.',
  labelNames: ['host', 'method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export const readBatchSize = new Histogram({
  name: 'ferry_db_read_batch_size',
  help: 'Gets by key read in one statement, by what is read (integration, installation, connection, operation): how many requests arriving together shared a round trip to PostgreSQL.',
  labelNames: ['read'] as const,
  buckets: [1, 2, 5, 10, 20, 50, 100],
  registers: [registry],
});

export const readsFinished = new Counter({
  name: 'ferry_reads_total',
  help: 'Reads finished, by read type (scheduled, backfill, triggered) and outcome (success, failure).',
  labelNames: ['read_type', 'outcome'] as const,
  registers: [registry],
});

export const writesFinished = new Counter({
  name: 'ferry_writes_total',
  help: 'Write operations finished, by write type (create, update, delete) and outcome (success, failure).',
  labelNames: ['write_type', 'outcome'] as const,
  registers: [registry],
});

export const recordsRead = new Counter({
  name: 'ferry_read_records_total',
  help: 'Records read and checkpointed (delivered to a webhook destination, or stored on request); its rate is records per second.',
  labelNames: ['delivery_mode'] as const,
  registers: [registry],
});

export const deliveryAttempts = new Counter({
  name: 'ferry_delivery_attempts_total',
  help: 'Delivery attempts recorded, by message kind (record, notification) and outcome (delivered, failed).',
  labelNames: ['kind', 'outcome'] as const,
  registers: [registry],
});

export const scheduleLateness = new Histogram({
  name: 'ferry_schedule_lateness_seconds',
  help: 'How long after its planned fire time a scheduled read or backfill started.',
  labelNames: ['read_type'] as const,
  buckets: [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
  registers: [registry],
});

export const repairMarks = new Counter({
  name: 'ferry_repair_marks_total',
  help: 'Changes left unfinished by a dead process (unlocked repair marks) taken up by the repair loop, by outcome (repaired, failed: tried again later).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const repairPasses = new Counter({
  name: 'ferry_repair_passes_total',
  help: 'Full repair passes (reconcile and stuck-operation sweep), by outcome (clean, repaired, failed, skipped: another worker ran it).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const repairPassDuration = new Histogram({
  name: 'ferry_repair_pass_seconds',
  help: 'How long a full repair pass that ran took (the next, in any worker, waits at least 49 times as long).',
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120],
  registers: [registry],
});

export const repairedItems = new Counter({
  name: 'ferry_repair_items_total',
  help: 'What full repair passes changed, by action (started, config_resent, orphans_ended, resumed, ended, failed).',
  labelNames: ['action'] as const,
  registers: [registry],
});

export const mcpToolCalls = new Counter({
  name: 'ferry_mcp_tool_calls_total',
  help: 'Tool calls of AI agents through the MCP listener, by tool (`unknown` for a name no tool has) and outcome (success, failure, refused: rate-limited).',
  labelNames: ['tool', 'outcome'] as const,
  registers: [registry],
});

export const mcpToolCallDuration = new Histogram({
  name: 'ferry_mcp_tool_call_seconds',
  help: 'Time to answer an agent’s tool call, by tool.',
  labelNames: ['tool'] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

/** Seconds since the oldest event still waiting for the outbox relay was raised (0 when none waits). */
type OutboxLagSource = () => Promise<number>;
let outboxLagSource: OutboxLagSource | undefined;

/** The process that can ask the database sets how (see notifications/outbox-relay). */
export function measureOutboxLagWith(source: OutboxLagSource): void {
  outboxLagSource = source;
}

export const outboxLag = new Gauge({
  name: 'ferry_outbox_lag_seconds',
  help: 'Age of the oldest notification event not yet routed by the outbox relay; 0 when none waits.',
  registers: [registry],
  async collect() {
    if (!outboxLagSource) return;
    try {
      this.set(await outboxLagSource());
    } catch {
      // A scrape while the database is away leaves the last value; the scrape itself still answers.
    }
  },
});

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (Prometheus text format) on its own port; anything else is 404. `null`
 * (the setting is 0 or `off`) serves nothing; port 0 here picks a free port (tests).
 */
export async function startMetricsServer(
  port: number | null,
  bind: string,
): Promise<MetricsServer | undefined> {
  if (port === null) return undefined;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res
        .writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
        .end('Not found: try GET /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': registry.contentType });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics failed\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, bind, () => resolve());
  });
  const address = server.address();
  const actual = typeof address === 'object' && address ? address.port : port;
  return {
    url: `http://${bind === '0.0.0.0' ? 'localhost' : bind}:${actual}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

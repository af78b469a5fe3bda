import { config } from '../config.js';
import { logger } from '../logger.js';
import { closeOrm, migrate } from '../db/orm.js';
import { startServers } from '../api/server.js';
import { createWorker } from './worker.js';
import { closeTemporalClient } from '../temporal/client.js';
import { startOutboxRelay } from '../notifications/outbox-relay.js';
import { startRepairLoop } from './repair-loop.js';
import { startRetentionInBackground } from './retention.js';
import { startMetricsServer } from '../metrics.js';
import { stopTracing } from '../tracing.js';

/** Stops cleanly on SIGINT/SIGTERM: listeners close, in-flight work finishes, connections drop. */
export function onShutdown(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    stop()
      .catch((error) => logger.error({ err: error }, 'shutdown failed'))
      .finally(() => process.exit(0));
  };
  process.once('SIGINT', () => handler('SIGINT'));
  process.once('SIGTERM', () => handler('SIGTERM'));
}

export async function migrateCommand(): Promise<void> {
  const applied = await migrate(config().databaseUrl);
  process.stdout.write(`${JSON.stringify({ applied })}\n`);
}

export async function server(): Promise<void> {
  const servers = await startServers();
  // Prometheus scrapes `/metrics` here, off the public listeners (FERRY_METRICS_PORT; 0 turns it off).
  const metrics = await startMetricsServer(config().metricsPorts.server, config().host);
  if (metrics) logger.info({ url: metrics.url }, 'metrics listening');
  onShutdown(async () => {
    await metrics?.close();
    await servers.close();
    await closeTemporalClient();
    await closeOrm();
    await stopTracing();
  });
}

export async function worker(): Promise<void> {
  config(); // a bad setting stops the worker here, with its message, before anything starts
  const running = await createWorker();
  // Reads, writes and deliveries run here: the worker serves its own `/metrics` (FERRY_WORKER_METRICS_PORT).
  const metrics = await startMetricsServer(config().metricsPorts.worker, config().host);
  if (metrics) logger.info({ url: metrics.url }, 'metrics listening');
  const relay = startOutboxRelay(config());
  const run = running.run();
  // Repairs drift between PostgreSQL and Temporal from now on, crashes included, without a restart.
  const repair = startRepairLoop();
  onShutdown(async () => {
    await repair.stop();
    await relay.stop();
    await metrics?.close();
    // The SDK drains the worker on SIGINT/SIGTERM by itself; a second shutdown would throw.
    if (running.getState() === 'RUNNING') running.shutdown();
    await stopTracing();
  });
  startRetentionInBackground();
  await run;
  await closeOrm();
  await stopTracing();
}

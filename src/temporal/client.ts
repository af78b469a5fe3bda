import { Client, Connection } from '@temporalio/client';
import { config } from '../config.js';
import { tracingOn } from '../tracing.js';
import { temporalConnectionOptions } from './connection.js';

let client: Promise<Client> | undefined;

/** The process-wide Temporal client for `TEMPORAL_ADDRESS` / `TEMPORAL_NAMESPACE` (and TLS: connection.ts). */
export function temporalClient(): Promise<Client> {
  client ??= (async () => {
    const connection = await Connection.connect({ ...temporalConnectionOptions(), connectTimeout: 5000 });
    // Traced, each start, signal and update carries the caller's span to the workflow in its headers.
    const interceptors = tracingOn()
      ? {
          workflow: [
            new (
              await import('@temporalio/interceptors-opentelemetry')
            ).OpenTelemetryWorkflowClientInterceptor(),
          ],
        }
      : undefined;
    return new Client({ connection, namespace: config().temporal.namespace, interceptors });
  })().catch((error) => {
    client = undefined;
    throw error;
  });
  return client;
}

export async function closeTemporalClient(): Promise<void> {
  if (!client) return;
  const current = client;
  client = undefined;
  await (await current.catch(() => undefined))?.connection.close();
}

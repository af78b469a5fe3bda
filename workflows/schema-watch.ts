import { proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities/schema-watch.js';
import type {
  SchemaWatchDeliveryInput,
  SchemaWatchDeliveryResult,
} from '../src/temporal/contracts/schema-watch.js';
import { deliverUntilSettled } from './message-retries.js';

// HTTP failures come back as results; these retries only cover the activity itself failing.
const { deliverSchemaWatchAttempt, finishSchemaWatchDelivery } = proxyActivities<typeof activities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '5 minutes', maximumAttempts: 20 },
});

/**
 * Delivers the `schema.watch` messages of one run (workflow id `schema-watch/<operationId>`), one
 * after the other, each attempted on the delivery retry schedule with durable timers, as change
 * events are; ends the run's operation with the outcome.
 */
export async function deliverSchemaWatchWorkflow(
  input: SchemaWatchDeliveryInput,
): Promise<SchemaWatchDeliveryResult> {
  let delivered = 0;
  let failed = 0;
  let lastError: string | undefined;
  for (const messageId of input.messageIds) {
    const settled = await deliverUntilSettled((attempt) => deliverSchemaWatchAttempt({ messageId, attempt }));
    if (settled.outcome === 'delivered') delivered++;
    else {
      failed++;
      lastError = settled.error ?? 'not delivered';
    }
  }
  await finishSchemaWatchDelivery({
    operationId: input.operationId,
    delivered,
    failed,
    ...(lastError && { error: lastError }),
  });
  return { delivered, failed, ...(lastError && { error: lastError }) };
}

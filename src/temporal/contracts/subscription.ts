export const SUBSCRIPTION_EVENT_WORKFLOW_TYPE = 'deliverSubscriptionEventWorkflow';

/** One change event a provider sent to a subscription, to deliver to the object's destination. */
export interface SubscriptionEventInput {
  subscriptionEventId: string;
  projectId: string;
}

export interface SubscriptionEventResult {
  outcome: 'delivered' | 'skipped' | 'failed' | 'destination-disabled' | 'retries-exhausted';
  /** The subscribe operation that recorded it (absent when skipped). */
  operationId?: string;
  attempts: number;
  error?: string;
}

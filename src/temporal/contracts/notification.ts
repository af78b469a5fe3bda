export const NOTIFICATION_WORKFLOW_TYPE = 'deliverNotificationWorkflow';

export interface NotificationDeliveryInput {
  eventId: string;
  destinationId: string;
  projectId: string;
}

export interface NotificationDeliveryResult {
  outcome: 'delivered' | 'failed' | 'destination-disabled' | 'retries-exhausted';
  attempts: number;
  error?: string;
}

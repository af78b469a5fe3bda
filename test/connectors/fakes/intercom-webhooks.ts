import { createHmac, randomUUID } from 'node:crypto';

/**
 * Intercom's webhooks as its reference describes them (https://developers.intercom.com/docs/webhooks,
 * …/webhooks/setting-up-webhooks, …/references/2.14/webhooks/webhook-models, and "Signed
 * notifications"):
 *
 * - Subscriptions belong to the app, not to a workspace: the app's Developer Hub settings hold the
 *   endpoint URL and the topics, and every workspace that installed the app sends its notifications
 *   there. The REST API has no call to register one, so the fake has no route for it.
 * - A notification is a POST of `{type: "notification_event", app_id, data: {type:
 *   "notification_event_data", item}, links, id: "notif_…", topic, delivery_status,
 *   delivery_attempts, delivered_at, first_sent_at, created_at, self}`; `app_id` is the workspace's
 *   id; times are Unix seconds. A retry is the same notification (same `id`) with
 *   `delivery_attempts` counted up.
 * - Topics of contacts and companies: `contact.user.created`, `contact.user.updated`,
 *   `contact.lead.created`, `contact.lead.updated`, `contact.deleted` ("The *.deleted webhook topics
 *   send a minimal identification payload containing only identifying fields"), `company.created`,
 *   `company.updated`, `company.deleted`.
 * - `X-Hub-Signature: sha1=<hex>`: the HMAC-SHA1 of the raw body keyed with the app's client secret
 *   (40 hex characters). Nothing in the signature dates it, so there is no replay window to check.
 */

/** The fake's workspace: the `app_id` of its notifications and the `workspace_id` of its contacts. */
export const INTERCOM_WORKSPACE_ID = 'ecahpwf5';

export interface IntercomNotification {
  type: 'notification_event';
  app_id: string;
  data: { type: 'notification_event_data'; item: Record<string, unknown> };
  links: Record<string, unknown>;
  id: string;
  topic: string;
  delivery_status: string;
  delivery_attempts: number;
  delivered_at: number;
  first_sent_at: number;
  created_at: number;
  self: null;
}

/** A notification of `topic` about `item` (a record as the API answers it), from a workspace. */
export function intercomNotification(
  topic: string,
  item: Record<string, unknown>,
  options: { workspaceId?: string } = {},
): IntercomNotification {
  const now = Math.floor(Date.now() / 1000);
  // `*.deleted` topics carry only what identifies the record.
  const sent = topic.endsWith('.deleted')
    ? { type: item.type, id: item.id, ...('external_id' in item && { external_id: item.external_id }) }
    : item;
  return {
    type: 'notification_event',
    app_id: options.workspaceId ?? INTERCOM_WORKSPACE_ID,
    data: { type: 'notification_event_data', item: sent },
    links: {},
    id: `notif_${randomUUID()}`,
    topic,
    delivery_status: 'pending',
    delivery_attempts: 1,
    delivered_at: 0,
    first_sent_at: now,
    created_at: now,
    self: null,
  };
}

/** The request Intercom posts: headers and raw body, signed with the app's client secret. */
export function intercomWebhookDelivery(
  clientSecret: string,
  notification: IntercomNotification,
): { headers: Record<string, string>; body: string } {
  const body = JSON.stringify(notification);
  return {
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': 'intercom-parrot-service-client/1.0',
      'x-hub-signature': `sha1=${createHmac('sha1', clientSecret).update(body).digest('hex')}`,
    },
    body,
  };
}

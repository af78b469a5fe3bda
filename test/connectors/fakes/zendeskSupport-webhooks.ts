import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type Router from '@koa/router';
import type { Context } from 'koa';

/**
 * Zendesk's webhooks subscribed to Zendesk events, as its reference describes them
 * (https://developer.zendesk.com/api-reference/webhooks/webhooks-api/webhooks/,
 * /documentation/webhooks/verifying/, /api-reference/webhooks/event-types/webhook-event-types/,
 * /api-reference/webhooks/event-types/ticket-events):
 *
 * - `POST /api/v2/webhooks` (201) takes `{webhook: {name, endpoint, http_method, request_format,
 *   status, subscriptions}}`, all but `subscriptions` mandatory; to subscribe to Zendesk events
 *   `http_method` must be `POST` and `request_format` `json`. The webhook's id is a 26-character
 *   string. Zendesk makes the signing secret: `GET /api/v2/webhooks/{id}/signing_secret` answers
 *   `{signing_secret: {algorithm: "SHA256", secret}}` (`POST` there resets it).
 * - `PUT` and `PATCH /api/v2/webhooks/{id}` answer 204 without a body; `DELETE` 204; an unknown id
 *   404. Errors are `{errors: [{code, title, detail}]}`.
 * - A delivery is an event `{type: "zen:event-type:ticket.created", account_id, id (a UUID), time,
 *   zendesk_event_version, subject: "zen:ticket:35436", detail: {the record, ids as strings},
 *   event: {what changed}}`, with `X-Zendesk-Webhook-Id`, `X-Zendesk-Webhook-Invocation-Id`,
 *   `X-Zendesk-Webhook-Signature-Timestamp` (ISO 8601, `2024-04-17T17:18:10Z`) and
 *   `X-Zendesk-Webhook-Signature: base64(HMAC-SHA256(secret, timestamp + body))`. Tickets have no
 *   "updated" event: each change has its own (`ticket.status_changed`, `ticket.subject_changed`…),
 *   and a deletion is `ticket.soft_deleted` (then `ticket.permanently_deleted`).
 */

export interface ZendeskWebhook {
  id: string;
  name: string;
  status: 'active' | 'inactive';
  endpoint: string;
  http_method: string;
  request_format: string;
  subscriptions: string[];
  created_at: string;
  created_by: string;
  updated_at?: string;
  updated_by?: string;
  /** Kept apart from what the API shows. */
  secret: string;
}

/** Webhooks the fake holds, by id. */
export const zendeskWebhooks = new Map<string, ZendeskWebhook>();

export const ZENDESK_ACCOUNT_ID = 12514403;
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const time = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const newId = () => `01${[...randomBytes(24)].map((byte) => CROCKFORD[byte % 32]).join('')}`;

function refuse(ctx: Context, status: number, code: string, title: string, detail: string) {
  ctx.status = status;
  ctx.body = { errors: [{ code, title, detail }] };
}

/** The webhook's values, checked as Zendesk checks them; a message when they do not pass. */
function checked(
  input: unknown,
  base?: ZendeskWebhook,
): Omit<ZendeskWebhook, 'id' | 'created_at' | 'created_by' | 'secret'> | string {
  const values = { ...base, ...(input as Record<string, unknown>) } as Record<string, unknown>;
  for (const name of ['name', 'endpoint', 'http_method', 'request_format', 'status'])
    if (typeof values[name] !== 'string' || !values[name]) return `${name} is required`;
  if (!/^https?:\/\//.test(String(values.endpoint))) return 'endpoint must be a valid URL';
  if (!['active', 'inactive'].includes(String(values.status))) return 'status is invalid';
  const subscriptions = values.subscriptions ?? [];
  if (!Array.isArray(subscriptions) || subscriptions.some((entry) => typeof entry !== 'string'))
    return 'subscriptions must be a list of event types';
  const events = subscriptions.filter((entry) => entry !== 'conditional_ticket_events');
  if (events.some((entry) => !/^zen:event-type:[a-z_]+\.[a-z_]+$/.test(entry)))
    return 'subscriptions name an unknown event type';
  if (events.length && (values.http_method !== 'POST' || values.request_format !== 'json'))
    return 'Webhooks subscribed to Zendesk events must use POST and json';
  if (events.length && events.length !== subscriptions.length)
    return 'A webhook cannot both subscribe to events and connect to triggers';
  return {
    name: String(values.name),
    status: values.status as ZendeskWebhook['status'],
    endpoint: String(values.endpoint),
    http_method: String(values.http_method),
    request_format: String(values.request_format),
    subscriptions: subscriptions as string[],
  };
}

const shown = ({ secret: _secret, ...webhook }: ZendeskWebhook) => webhook;

/** Adds the webhooks routes to the fake's router, before its generic `/api/v2/:file` routes. */
export function zendeskWebhookRoutes(router: Router, now: () => number): void {
  const found = (ctx: Context) => {
    const webhook = zendeskWebhooks.get(ctx.params.id);
    if (!webhook) refuse(ctx, 404, 'WebhookNotFound', 'Not Found', `Webhook ${ctx.params.id} not found`);
    return webhook;
  };
  router.post('/api/v2/webhooks', (ctx) => {
    const values = checked((ctx.request.body as { webhook?: unknown } | undefined)?.webhook ?? {});
    if (typeof values === 'string') return refuse(ctx, 400, 'InvalidInput', 'Invalid input', values);
    const webhook: ZendeskWebhook = {
      id: newId(),
      ...values,
      created_at: time(now()),
      created_by: '9001',
      secret: randomBytes(32).toString('base64url'),
    };
    zendeskWebhooks.set(webhook.id, webhook);
    ctx.status = 201;
    ctx.body = { webhook: shown(webhook) };
  });
  router.get('/api/v2/webhooks/:id', (ctx) => {
    const webhook = found(ctx);
    if (webhook) ctx.body = { webhook: shown(webhook) };
  });
  const change = (merge: boolean) => (ctx: Context) => {
    const webhook = found(ctx);
    if (!webhook) return;
    const input = (ctx.request.body as { webhook?: unknown } | undefined)?.webhook ?? {};
    // PUT replaces the webhook; PATCH (a JSON merge patch) changes only what it names.
    const values = checked(input, merge ? webhook : undefined);
    if (typeof values === 'string') return refuse(ctx, 400, 'InvalidInput', 'Invalid input', values);
    Object.assign(webhook, values, { updated_at: time(now()), updated_by: '9001' });
    ctx.status = 204;
  };
  router.put('/api/v2/webhooks/:id', change(false));
  router.patch('/api/v2/webhooks/:id', change(true));
  router.delete('/api/v2/webhooks/:id', (ctx) => {
    if (!found(ctx)) return;
    zendeskWebhooks.delete(ctx.params.id);
    ctx.status = 204;
  });
  router.get('/api/v2/webhooks/:id/signing_secret', (ctx) => {
    const webhook = found(ctx);
    if (webhook) ctx.body = { signing_secret: { algorithm: 'SHA256', secret: webhook.secret } };
  });
  router.post('/api/v2/webhooks/:id/signing_secret', (ctx) => {
    const webhook = found(ctx);
    if (!webhook) return;
    webhook.secret = randomBytes(32).toString('base64url');
    ctx.body = { signing_secret: { algorithm: 'SHA256', secret: webhook.secret } };
  });
}

/** A Zendesk event about a ticket, from the ticket as the API returns it. */
export function zendeskTicketEvent(
  type: string,
  ticket: Record<string, unknown>,
  event: Record<string, unknown> = {},
  atMs = Date.now(),
): Record<string, unknown> {
  const text = (value: unknown) => (value === null || value === undefined ? null : String(value));
  return {
    type: `zen:event-type:ticket.${type}`,
    account_id: ZENDESK_ACCOUNT_ID,
    id: randomUUID(),
    time: time(atMs),
    zendesk_event_version: '2022-11-06',
    subject: `zen:ticket:${String(ticket.id)}`,
    detail: {
      actor_id: '9001',
      assignee_id: text(ticket.assignee_id),
      brand_id: text(ticket.brand_id),
      created_at: ticket.created_at,
      description: ticket.description,
      external_id: text(ticket.external_id),
      form_id: text(ticket.ticket_form_id),
      group_id: text(ticket.group_id),
      id: String(ticket.id),
      is_public: ticket.is_public ?? true,
      organization_id: text(ticket.organization_id),
      priority: ticket.priority ? String(ticket.priority).toUpperCase() : null,
      requester_id: text(ticket.requester_id),
      status: String(ticket.status).toUpperCase(),
      subject: ticket.subject,
      submitter_id: text(ticket.submitter_id),
      tags: ticket.tags ?? [],
      type: ticket.type ? String(ticket.type).toUpperCase() : null,
      updated_at: ticket.updated_at,
      via: { channel: 'web_service' },
    },
    event,
  };
}

export interface ZendeskDeliveryOptions {
  /** Sign with this secret instead of the webhook's (a forgery). */
  secret?: string;
  /** When it was signed (ms); now by default. */
  signedAtMs?: number;
}

/** A delivery of `event` to a webhook, as Zendesk posts it: headers and the raw body. */
export function zendeskWebhookDelivery(
  webhookId: string,
  event: Record<string, unknown>,
  options: ZendeskDeliveryOptions = {},
): { headers: Record<string, string>; body: string } {
  const webhook = zendeskWebhooks.get(webhookId);
  if (!webhook) throw new Error(`no Zendesk webhook ${webhookId}`);
  // Zendesk sends an event only to the webhooks subscribed to its type.
  if (!webhook.subscriptions.includes(String(event.type)) || webhook.status !== 'active')
    throw new Error(`Zendesk webhook ${webhookId} is not subscribed to ${String(event.type)}`);
  const body = JSON.stringify(event);
  const timestamp = time(options.signedAtMs ?? Date.now());
  const signature = createHmac('sha256', options.secret ?? webhook.secret)
    .update(timestamp + body)
    .digest('base64');
  return {
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'user-agent': 'Zendesk Webhook',
      'x-zendesk-webhook-id': webhook.id,
      'x-zendesk-webhook-invocation-id': String(Math.floor(Math.random() * 1e12)),
      'x-zendesk-webhook-signature-timestamp': timestamp,
      'x-zendesk-webhook-signature': signature,
    },
    body,
  };
}

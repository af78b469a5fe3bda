import { randomBytes, randomUUID } from 'node:crypto';
import type Router from '@koa/router';
import { FakeHttpError } from '../kit/fake-provider.js';

/**
 * Microsoft Graph change notifications through webhooks, for Outlook contacts, events and messages,
 * as the Graph reference describes them
 * (https://learn.microsoft.com/en-us/graph/change-notifications-delivery-webhooks,
 * .../graph/api/subscription-post-subscriptions, .../graph/api/resources/subscription,
 * .../graph/api/subscription-update, .../graph/change-notifications-lifecycle-events):
 *
 * - `POST /v1.0/subscriptions` `{changeType, notificationUrl, lifecycleNotificationUrl?, resource,
 *   expirationDateTime, clientState?}`. Before answering, Graph validates each URL: it POSTs
 *   `<url>?validationToken=<opaque token>` (`Content-Type: text/plain; charset=utf-8`, no body) and
 *   needs, within 10 seconds, 200 with `Content-Type: text/plain` and the URL-decoded token as the
 *   body; otherwise it creates nothing and answers 400. Created: 201 with the subscription.
 * - `changeType`: `created`, `updated`, `deleted`, comma separated. `clientState`: at most 128
 *   characters, sent back in every notification: the receiver compares it to what it chose (the
 *   documented check for basic notifications, which carry no signature).
 * - `expirationDateTime` is required and capped per resource: Outlook message, event and contact at
 *   4230 minutes (under 3 days) ahead; more is refused with 400 `ExtensionError` "Subscription
 *   expiration can only be 4230 minutes in the future." (the answer Graph gives, quoted in
 *   microsoftgraph/microsoft-graph-docs#2988). `PATCH /v1.0/subscriptions/{id}`
 *   `{expirationDateTime}` renews within the same cap (200 with the subscription); `DELETE` answers
 *   204. A subscription not renewed in time is deleted by Graph: it delivers nothing, and PATCH or
 *   DELETE then answer 404.
 * - A notification is a POST of `{value: [changeNotification…]}`, each
 *   `{id, subscriptionId, subscriptionExpirationDateTime, changeType, resource, resourceData: {@odata.type,
 *   @odata.id, @odata.etag, id}, clientState, tenantId}`; one POST may hold several notifications
 *   (of several subscriptions sharing the URL). Graph retries a POST not answered 2xx within 3
 *   seconds, with the same body.
 * - Lifecycle notifications go to `lifecycleNotificationUrl`: `{value: [{subscriptionId,
 *   subscriptionExpirationDateTime, tenantId, clientState, lifecycleEvent}]}`, `lifecycleEvent` one
 *   of `reauthorizationRequired`, `subscriptionRemoved`, `missed`.
 * - Relaxed: Graph requires HTTPS notification URLs; the fake takes http on loopback (the test stack).
 *   Not modelled: rich notifications (`includeResourceData`, encrypted), the per-mailbox limit of
 *   1000 subscriptions, `POST /subscriptions/{id}/reauthorize`.
 */

export const GRAPH_TENANT_ID = '84bd8158-6d4d-4958-8b9f-9d6445542f95';
export const GRAPH_USER_ID = '9c1e4f2a-7b3d-4e5f-a6b7-c8d9e0f1a2b3';
const GRAPH_APP_ID = '24d3b144-21ae-4080-943f-7067b395b913';

/** The longest subscription Graph allows on Outlook resources, in minutes. */
export const OUTLOOK_MAX_EXPIRATION_MINUTES = 4230;
const changeTypes = ['created', 'updated', 'deleted'];

export type GraphObject = 'contacts' | 'events' | 'messages';
const odataType: Record<GraphObject, string> = {
  contacts: '#Microsoft.Graph.Contact',
  events: '#Microsoft.Graph.Event',
  messages: '#Microsoft.Graph.Message',
};
const segment: Record<GraphObject, string> = { contacts: 'Contacts', events: 'Events', messages: 'Messages' };

export interface GraphSubscription {
  id: string;
  resource: string;
  /** The Outlook object the resource names. */
  object: GraphObject;
  changeType: string;
  notificationUrl: string;
  lifecycleNotificationUrl?: string;
  clientState?: string;
  /** Epoch milliseconds, on the fake's clock. */
  expiresAt: number;
}

/** Subscriptions the fake holds, by id (expired ones are dropped when next looked at). */
export const graphSubscriptions = new Map<string, GraphSubscription>();

/** Each validation request Graph made, oldest first. */
export const graphValidations: { url: string; token: string; status?: number; error?: string }[] = [];

/** How long Graph waits for a validation answer (10 seconds; tests shorten it). */
export const graphValidationSettings = { timeoutMs: 10_000 };

/** Renewals (PATCH) of these subscriptions answer 503 while the count lasts: an outage, for tests. */
export const graphRenewalOutages = new Map<string, number>();

/** Seven fractional digits, as Graph writes them. */
const graphTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$10000Z');
const graphError = (status: number, code: string, message: string) =>
  new FakeHttpError(status, message, code);

/** `me/contacts`, `/users/{id}/events`, `me/mailFolders('inbox')/messages`… → the Outlook object. */
function objectOfResource(resource: string): GraphObject | undefined {
  const path = resource.replace(/^\/+/, '').toLowerCase();
  const match =
    /^(?:me|users\/[^/]+)\/(?:(contacts|events|messages)|contactfolders\/[^/]+\/(contacts)|calendars?\/(?:[^/]+\/)?(events)|mailfolders(?:\/[^/]+|\('[^']+'\))\/(messages))$/.exec(
      path,
    );
  return (match?.slice(1).find(Boolean) as GraphObject | undefined) ?? undefined;
}

/** A Graph validation token: opaque text with spaces and colons, as Graph sends. */
const validationToken = () =>
  `Validation: Testing client application reachability for subscription Request-Id: ${randomUUID()}`;
/** Form-encoded as Graph writes it (`+` for spaces, lower-case escapes). */
const encodeToken = (token: string) =>
  encodeURIComponent(token)
    .replace(/%20/g, '+')
    .replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());

/** Graph's validation of a notification URL: undefined when it passed, else why it failed. */
async function validate(url: string): Promise<string | undefined> {
  const token = validationToken();
  const record: (typeof graphValidations)[number] = { url, token };
  graphValidations.push(record);
  const target = `${url}${url.includes('?') ? '&' : '?'}validationToken=${encodeToken(token)}`;
  let response: Response;
  try {
    response = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      signal: AbortSignal.timeout(graphValidationSettings.timeoutMs),
    });
  } catch (error) {
    record.error = (error as Error).name === 'TimeoutError' ? 'timeout' : 'unreachable';
    return record.error === 'timeout'
      ? 'Subscription validation request timeout.'
      : 'Subscription validation request failed. Notification endpoint must respond with 200 OK to validation request.';
  }
  record.status = response.status;
  const body = await response.text();
  if (response.status !== 200) {
    record.error = `status ${response.status}`;
    return 'Subscription validation request failed. Notification endpoint must respond with 200 OK to validation request.';
  }
  if (!/^text\/plain\b/i.test(response.headers.get('content-type') ?? '') || body !== token) {
    record.error = 'wrong answer';
    return 'Subscription validation request failed. Response must exactly match validationToken query parameter.';
  }
  return undefined;
}

/** The subscription as Graph answers it. */
function present(subscription: GraphSubscription) {
  return {
    '@odata.context': 'https://graph.microsoft.com/v1.0/$metadata#subscriptions/$entity',
    id: subscription.id,
    resource: subscription.resource,
    applicationId: GRAPH_APP_ID,
    changeType: subscription.changeType,
    clientState: subscription.clientState ?? null,
    notificationUrl: subscription.notificationUrl,
    lifecycleNotificationUrl: subscription.lifecycleNotificationUrl ?? null,
    expirationDateTime: graphTime(subscription.expiresAt),
    creatorId: GRAPH_USER_ID,
    includeResourceData: false,
    latestSupportedTlsVersion: 'v1_2',
    encryptionCertificate: null,
    encryptionCertificateId: null,
    notificationUrlAppId: null,
  };
}

const createMembers = [
  'changeType',
  'notificationUrl',
  'lifecycleNotificationUrl',
  'resource',
  'expirationDateTime',
  'clientState',
  'latestSupportedTlsVersion',
  'includeResourceData',
];

function checkUrl(name: string, value: unknown): string {
  if (typeof value !== 'string' || !value) throw graphError(400, 'InvalidRequest', `${name} is required.`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw graphError(400, 'InvalidRequest', `Invalid ${name}: '${value}'.`);
  }
  const loopback = url.hostname === '127.0.0.1' || url.hostname === 'localhost';
  if (url.protocol !== 'https:' && !loopback)
    throw graphError(400, 'InvalidRequest', `${name} must use the HTTPS protocol.`);
  return value;
}

/** The expiration asked for, checked against now and the resource's cap. */
function checkExpiration(value: unknown, now: number): number {
  if (typeof value !== 'string' || !value)
    throw graphError(
      400,
      'InvalidRequest',
      'expirationDateTime is a required property for subscription creation.',
    );
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw graphError(400, 'InvalidRequest', `Invalid expirationDateTime: '${value}'.`);
  if (ms <= now) throw graphError(400, 'InvalidRequest', 'Subscription expiration must be in the future.');
  if (ms > now + OUTLOOK_MAX_EXPIRATION_MINUTES * 60_000)
    throw graphError(
      400,
      'ExtensionError',
      `Subscription expiration can only be ${OUTLOOK_MAX_EXPIRATION_MINUTES} minutes in the future.`,
    );
  return ms;
}

/** The subscription routes, on the microsoft fake's router. */
export function addGraphSubscriptionRoutes(router: Router, now: () => number): void {
  const live = (id: string): GraphSubscription => {
    const subscription = graphSubscriptions.get(id);
    if (subscription && subscription.expiresAt <= now()) graphSubscriptions.delete(id);
    if (!subscription || subscription.expiresAt <= now())
      throw graphError(404, 'ResourceNotFound', `The object was not found: subscription '${id}'.`);
    return subscription;
  };

  router.post('/v1.0/subscriptions', async (ctx) => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const unknown = Object.keys(body).find((name) => !createMembers.includes(name));
    if (unknown)
      throw graphError(
        400,
        'BadRequest',
        `The property '${unknown}' does not exist on type 'microsoft.graph.subscription'.`,
      );
    if (typeof body.resource !== 'string' || !body.resource)
      throw graphError(400, 'InvalidRequest', 'resource is required.');
    const object = objectOfResource(body.resource);
    if (!object) throw graphError(400, 'InvalidRequest', `Resource '${body.resource}' is not supported.`);
    const asked = typeof body.changeType === 'string' ? body.changeType.split(',').map((t) => t.trim()) : [];
    if (!asked.length || asked.some((type) => !changeTypes.includes(type)))
      throw graphError(400, 'InvalidRequest', `Invalid changeType: '${String(body.changeType)}'.`);
    if (
      body.clientState !== undefined &&
      (typeof body.clientState !== 'string' || body.clientState.length > 128)
    )
      throw graphError(400, 'InvalidRequest', 'clientState must be a string of at most 128 characters.');
    if (body.includeResourceData === true)
      throw graphError(
        400,
        'InvalidRequest',
        'includeResourceData needs an encryptionCertificate (not modelled).',
      );
    const notificationUrl = checkUrl('notificationUrl', body.notificationUrl);
    const lifecycleNotificationUrl =
      body.lifecycleNotificationUrl === undefined
        ? undefined
        : checkUrl('lifecycleNotificationUrl', body.lifecycleNotificationUrl);
    const expiresAt = checkExpiration(body.expirationDateTime, now());
    for (const url of [notificationUrl, lifecycleNotificationUrl]) {
      if (!url) continue;
      const failure = await validate(url);
      if (failure) throw graphError(400, 'ValidationError', failure);
    }
    const subscription: GraphSubscription = {
      id: randomUUID(),
      resource: body.resource,
      object,
      changeType: asked.join(','),
      notificationUrl,
      ...(lifecycleNotificationUrl && { lifecycleNotificationUrl }),
      ...(typeof body.clientState === 'string' && { clientState: body.clientState }),
      expiresAt,
    };
    graphSubscriptions.set(subscription.id, subscription);
    ctx.status = 201;
    ctx.body = present(subscription);
  });

  router.get('/v1.0/subscriptions', (ctx) => {
    const mine = [...graphSubscriptions.keys()].filter((id) => {
      try {
        return live(id);
      } catch {
        return false;
      }
    });
    ctx.body = {
      '@odata.context': 'https://graph.microsoft.com/v1.0/$metadata#subscriptions',
      value: mine.map((id) => present(graphSubscriptions.get(id)!)),
    };
  });

  router.get('/v1.0/subscriptions/:id', (ctx) => {
    ctx.body = present(live(ctx.params.id));
  });

  router.patch('/v1.0/subscriptions/:id', async (ctx) => {
    const subscription = live(ctx.params.id);
    const outage = graphRenewalOutages.get(subscription.id) ?? 0;
    if (outage > 0) {
      graphRenewalOutages.set(subscription.id, outage - 1);
      throw graphError(503, 'ServiceNotAvailable', 'The service is temporarily unavailable.');
    }
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const unknown = Object.keys(body).find(
      (name) => !['expirationDateTime', 'notificationUrl'].includes(name),
    );
    if (unknown)
      throw graphError(
        400,
        'InvalidRequest',
        `The property '${unknown}' cannot be updated on a subscription.`,
      );
    const expiresAt =
      body.expirationDateTime === undefined ? undefined : checkExpiration(body.expirationDateTime, now());
    if (body.notificationUrl !== undefined) {
      const url = checkUrl('notificationUrl', body.notificationUrl);
      const failure = await validate(url);
      if (failure) throw graphError(400, 'ValidationError', failure);
      subscription.notificationUrl = url;
    }
    if (expiresAt !== undefined) subscription.expiresAt = expiresAt;
    ctx.body = present(subscription);
  });

  router.delete('/v1.0/subscriptions/:id', (ctx) => {
    live(ctx.params.id);
    graphSubscriptions.delete(ctx.params.id);
    ctx.status = 204;
  });
}

export interface GraphChange {
  object: GraphObject;
  changeType: 'created' | 'updated' | 'deleted';
  /** The item's id. */
  id: string;
  /** The item's `changeKey` (the `@odata.etag` Graph puts in `resourceData`), when it still exists. */
  changeKey?: string;
}

export interface GraphDelivery {
  url: string;
  headers: Record<string, string>;
  body: string;
}

const deliveryHeaders = { 'content-type': 'application/json; charset=utf-8' };

/**
 * What Graph posts for some changes: for each live subscription whose resource and change types
 * match a change, a notification; the notifications for one URL in one POST (`value`).
 * `clientState` replaces the subscription's (a forged notification).
 */
export function graphNotificationDeliveries(
  changes: GraphChange[],
  options: { now: number; clientState?: string },
): GraphDelivery[] {
  const byUrl = new Map<string, Record<string, unknown>[]>();
  for (const change of changes) {
    for (const subscription of graphSubscriptions.values()) {
      if (subscription.expiresAt <= options.now || subscription.object !== change.object) continue;
      if (!subscription.changeType.split(',').includes(change.changeType)) continue;
      const resource = `Users/${GRAPH_USER_ID}/${segment[change.object]}/${change.id}`;
      const notification = {
        id: randomBytes(9).toString('base64url'),
        subscriptionId: subscription.id,
        subscriptionExpirationDateTime: graphTime(subscription.expiresAt),
        changeType: change.changeType,
        resource,
        resourceData: {
          '@odata.type': odataType[change.object],
          '@odata.id': resource,
          ...(change.changeKey && {
            '@odata.etag': `W/"${Buffer.from(change.changeKey).toString('base64')}"`,
          }),
          id: change.id,
        },
        clientState: options.clientState ?? subscription.clientState ?? null,
        tenantId: GRAPH_TENANT_ID,
      };
      byUrl.set(subscription.notificationUrl, [
        ...(byUrl.get(subscription.notificationUrl) ?? []),
        notification,
      ]);
    }
  }
  return [...byUrl].map(([url, value]) => ({
    url,
    headers: { ...deliveryHeaders },
    body: JSON.stringify({ value }),
  }));
}

/**
 * What Graph posts to a subscription's lifecycleNotificationUrl (none when it gave none). A
 * `subscriptionRemoved` also removes the subscription, as Graph does.
 */
export function graphLifecycleDeliveries(
  subscriptionId: string,
  lifecycleEvent: 'reauthorizationRequired' | 'subscriptionRemoved' | 'missed',
  options: { clientState?: string } = {},
): GraphDelivery[] {
  const subscription = graphSubscriptions.get(subscriptionId);
  if (!subscription?.lifecycleNotificationUrl) return [];
  if (lifecycleEvent === 'subscriptionRemoved') graphSubscriptions.delete(subscriptionId);
  const notification = {
    subscriptionId,
    subscriptionExpirationDateTime: graphTime(subscription.expiresAt),
    tenantId: GRAPH_TENANT_ID,
    clientState: options.clientState ?? subscription.clientState ?? null,
    lifecycleEvent,
  };
  return [
    {
      url: subscription.lifecycleNotificationUrl,
      headers: { ...deliveryHeaders },
      body: JSON.stringify({ value: [notification] }),
    },
  ];
}

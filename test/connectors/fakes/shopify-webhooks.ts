import { createHmac, randomUUID } from 'node:crypto';
import { GraphqlFieldError } from './graphql-lite.js';

/**
 * Shopify's webhook subscriptions through the Admin GraphQL API (2025-10), as its reference
 * describes them (shopify.dev/docs/api/admin-graphql/2025-10/mutations/webhookSubscriptionCreate,
 * …/webhookSubscriptionUpdate, …/webhookSubscriptionDelete, /docs/apps/build/webhooks/subscribe,
 * /docs/apps/build/webhooks/verify-deliveries):
 *
 * - `webhookSubscriptionCreate(topic: WebhookSubscriptionTopic!, webhookSubscription:
 *   {uri, format, includeFields, metafieldNamespaces, filter})` answers `{webhookSubscription,
 *   userErrors}`; `uri` is new in 2025-10 (`callbackUrl` is still taken, deprecated). An unknown
 *   topic fails the request (an enum); the same topic and address twice is a user error ("Address
 *   for this topic has already been taken"). Ids are `gid://shopify/WebhookSubscription/<n>`.
 * - `webhookSubscriptionUpdate(id, webhookSubscription)` and `webhookSubscriptionDelete(id)`
 *   (`deletedWebhookSubscriptionId`); an unknown id is a user error, not a 404.
 * - A delivery posts the resource in the REST Admin API's shape (numeric `id`, snake_case fields,
 *   `admin_graphql_api_id` holding the GraphQL id, times with the shop's offset); a `…/delete`
 *   topic posts only what identifies the record. Headers: `X-Shopify-Topic` (`customers/update`;
 *   the body does not name it), `X-Shopify-Hmac-Sha256` (base64 HMAC-SHA256 of the body keyed with
 *   the app's client secret: the app signs, not the subscription), `X-Shopify-Shop-Domain`,
 *   `X-Shopify-API-Version`, `X-Shopify-Webhook-Id` (kept on a retry), `X-Shopify-Event-Id`,
 *   `X-Shopify-Triggered-At`. No timestamp is signed.
 *
 * The fake takes plain-http addresses, which Shopify refuses, so tests on loopback can register.
 */

/** The OAuth app whose client secret signs deliveries; tests register it as the provider app. */
export const SHOPIFY_APP = { clientId: 'shopify-app-client', clientSecret: 'shpss_fake_app_client_secret' };
export const SHOPIFY_SHOP_DOMAIN = 'acme.myshopify.com';

const TOPICS: Record<string, string> = {
  CUSTOMERS_CREATE: 'customers/create',
  CUSTOMERS_UPDATE: 'customers/update',
  CUSTOMERS_DELETE: 'customers/delete',
  PRODUCTS_CREATE: 'products/create',
  PRODUCTS_UPDATE: 'products/update',
  PRODUCTS_DELETE: 'products/delete',
  ORDERS_CREATE: 'orders/create',
  ORDERS_UPDATED: 'orders/updated',
  ORDERS_DELETE: 'orders/delete',
  APP_UNINSTALLED: 'app/uninstalled',
};

export interface ShopifyWebhookSubscription {
  __typename: 'WebhookSubscription';
  id: string;
  legacyResourceId: string;
  topic: string;
  uri: string;
  callbackUrl: string;
  endpoint: { __typename: 'WebhookHttpEndpoint'; callbackUrl: string };
  format: 'JSON' | 'XML';
  includeFields: string[];
  metafieldNamespaces: string[];
  filter: string | null;
  apiVersion: { __typename: 'ApiVersion'; handle: string; displayName: string; supported: boolean };
  createdAt: string;
  updatedAt: string;
}

/** Subscriptions the fake holds, by gid. */
export const shopifyWebhookSubscriptions = new Map<string, ShopifyWebhookSubscription>();
let nextSubscription = 1_100_000_001;

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

type Input = {
  uri?: unknown;
  callbackUrl?: unknown;
  format?: unknown;
  includeFields?: unknown;
  filter?: unknown;
};

/** The mutations (and queries) to add to the fake's roots. */
export function shopifyWebhookRoots(now: () => number, version: string) {
  const userErrors = (field: string[], message: string) => [{ __typename: 'UserError', field, message }];
  const addressOf = (input: Input) => {
    const address = input.uri ?? input.callbackUrl;
    return typeof address === 'string' && /^https?:\/\/[^/]+/.test(address) ? address : undefined;
  };
  const taken = (topic: string, uri: string, except?: string) =>
    [...shopifyWebhookSubscriptions.values()].some(
      (existing) => existing.topic === topic && existing.uri === uri && existing.id !== except,
    );
  const apply = (subscription: ShopifyWebhookSubscription, input: Input, uri: string) => {
    Object.assign(subscription, {
      uri,
      callbackUrl: uri,
      endpoint: { __typename: 'WebhookHttpEndpoint', callbackUrl: uri },
      ...(input.format !== undefined && { format: input.format === 'XML' ? 'XML' : 'JSON' }),
      ...(Array.isArray(input.includeFields) && { includeFields: input.includeFields.map(String) }),
      ...(input.filter !== undefined && { filter: input.filter === null ? null : String(input.filter) }),
      updatedAt: iso(now()),
    });
  };
  const mutations = {
    webhookSubscriptionCreate(args: Record<string, unknown>) {
      const topic = String(args.topic);
      if (!TOPICS[topic])
        throw new GraphqlFieldError(
          `Variable $topic of type WebhookSubscriptionTopic! was provided invalid value`,
          'INVALID_VARIABLE',
        );
      const input = (args.webhookSubscription ?? {}) as Input;
      const uri = addressOf(input);
      if (!uri)
        return {
          webhookSubscription: null,
          userErrors: userErrors(['webhookSubscription', 'uri'], 'Address is invalid'),
        };
      if (taken(topic, uri))
        return {
          webhookSubscription: null,
          userErrors: userErrors(
            ['webhookSubscription', 'callbackUrl'],
            'Address for this topic has already been taken',
          ),
        };
      const number = nextSubscription++;
      const subscription = {
        __typename: 'WebhookSubscription',
        id: `gid://shopify/WebhookSubscription/${number}`,
        legacyResourceId: String(number),
        topic,
        format: 'JSON',
        includeFields: [],
        metafieldNamespaces: [],
        filter: null,
        apiVersion: { __typename: 'ApiVersion', handle: version, displayName: version, supported: true },
        createdAt: iso(now()),
      } as unknown as ShopifyWebhookSubscription;
      apply(subscription, input, uri);
      shopifyWebhookSubscriptions.set(subscription.id, subscription);
      return {
        __typename: 'WebhookSubscriptionCreatePayload',
        webhookSubscription: subscription,
        userErrors: [],
      };
    },
    webhookSubscriptionUpdate(args: Record<string, unknown>) {
      const subscription = shopifyWebhookSubscriptions.get(String(args.id));
      if (!subscription)
        return {
          webhookSubscription: null,
          userErrors: userErrors(['id'], 'Webhook subscription does not exist'),
        };
      const input = (args.webhookSubscription ?? {}) as Input;
      const uri =
        input.uri === undefined && input.callbackUrl === undefined ? subscription.uri : addressOf(input);
      if (!uri)
        return {
          webhookSubscription: null,
          userErrors: userErrors(['webhookSubscription', 'uri'], 'Address is invalid'),
        };
      if (taken(subscription.topic, uri, subscription.id))
        return {
          webhookSubscription: null,
          userErrors: userErrors(
            ['webhookSubscription', 'callbackUrl'],
            'Address for this topic has already been taken',
          ),
        };
      apply(subscription, input, uri);
      return {
        __typename: 'WebhookSubscriptionUpdatePayload',
        webhookSubscription: subscription,
        userErrors: [],
      };
    },
    webhookSubscriptionDelete(args: Record<string, unknown>) {
      const id = String(args.id);
      if (!shopifyWebhookSubscriptions.delete(id))
        return {
          deletedWebhookSubscriptionId: null,
          userErrors: userErrors(['id'], 'Webhook subscription does not exist'),
        };
      return {
        __typename: 'WebhookSubscriptionDeletePayload',
        deletedWebhookSubscriptionId: id,
        userErrors: [],
      };
    },
  };
  const queries = {
    webhookSubscription: (args: Record<string, unknown>) =>
      shopifyWebhookSubscriptions.get(String(args.id)) ?? null,
  };
  return { mutations, queries };
}

/** A time as Shopify's REST payloads give it, in the shop's zone (here UTC−05:00). */
function shopTime(value: unknown): string {
  const ms = Date.parse(String(value)) - 5 * 3_600_000;
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, '-05:00');
}

/**
 * The body of a customer topic, from the customer as the fake's GraphQL API stores it: the REST
 * resource, or for `customers/delete` only what identifies it.
 */
export function shopifyCustomerPayload(
  customer: Record<string, unknown>,
  deleted = false,
): Record<string, unknown> {
  const id = Number(String(customer.id).split('/').pop());
  const identity = {
    id,
    phone: customer.phone ?? null,
    addresses: [],
    tax_exemptions: [],
    email_marketing_consent: null,
    sms_marketing_consent: null,
    admin_graphql_api_id: customer.id,
  };
  if (deleted) return identity;
  return {
    ...identity,
    email: customer.email ?? null,
    created_at: shopTime(customer.createdAt),
    updated_at: shopTime(customer.updatedAt),
    first_name: customer.firstName ?? null,
    last_name: customer.lastName ?? null,
    orders_count: 0,
    state: String(customer.state ?? 'disabled').toLowerCase(),
    total_spent: '0.00',
    last_order_id: null,
    note: customer.note ?? null,
    verified_email: Boolean(customer.verifiedEmail),
    multipass_identifier: null,
    tax_exempt: Boolean(customer.taxExempt),
    tags: Array.isArray(customer.tags) ? customer.tags.join(', ') : '',
    last_order_name: null,
    currency: 'USD',
    default_address: null,
  };
}

export interface ShopifyDeliveryOptions {
  /** Sign with this key instead of the app's client secret (a forgery). */
  secret?: string;
  /** A retry keeps the delivery's webhook id (and its event id). */
  webhookId?: string;
  eventId?: string;
}

/** A delivery to a subscription, as Shopify posts it: headers and the raw body. */
export function shopifyWebhookDelivery(
  subscriptionId: string,
  payload: Record<string, unknown>,
  options: ShopifyDeliveryOptions = {},
): { headers: Record<string, string>; body: string; webhookId: string; eventId: string } {
  const subscription = shopifyWebhookSubscriptions.get(subscriptionId);
  if (!subscription) throw new Error(`no Shopify webhook subscription ${subscriptionId}`);
  const body = JSON.stringify(payload);
  const webhookId = options.webhookId ?? randomUUID();
  const eventId = options.eventId ?? randomUUID();
  const hmac = createHmac('sha256', options.secret ?? SHOPIFY_APP.clientSecret)
    .update(body)
    .digest('base64');
  return {
    headers: {
      'content-type': 'application/json',
      'x-shopify-topic': TOPICS[subscription.topic],
      'x-shopify-hmac-sha256': hmac,
      'x-shopify-shop-domain': SHOPIFY_SHOP_DOMAIN,
      'x-shopify-api-version': subscription.apiVersion.handle,
      'x-shopify-webhook-id': webhookId,
      'x-shopify-event-id': eventId,
      'x-shopify-triggered-at': new Date().toISOString().replace('Z', '123456Z'),
    },
    body,
    webhookId,
    eventId,
  };
}

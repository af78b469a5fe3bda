import Type from 'typebox';
import { FailureLimiter } from '../core/failure-limiter.js';
import { ProblemError } from '../core/problem.js';
import { receiveAppWebhook } from '../domain/subscriptions/app-inbound.js';
import { receiveProviderWebhook } from '../domain/subscriptions/inbound.js';
import { connectorDeclaration } from '../providers/catalog/index.js';
import { defineRoute } from './route.js';

/**
 * Where providers post change events for a subscription. No credentials: the provider's signature,
 * checked with the subscription's secret, is the authentication. A caller whose requests keep
 * failing it is answered 429 before anything is looked up, so a flood cannot slow the API.
 */

const refused = new FailureLimiter(20, 60_000);

/** Refuses a caller whose webhooks keep failing; counts a 401 or 404 answer against its keys. */
async function limited<T>(keys: string[], receive: () => Promise<T>): Promise<T> {
  const now = Date.now();
  const waitMs = Math.max(...keys.map((key) => refused.blockedFor(key, now)));
  if (waitMs > 0) {
    throw new ProblemError({
      status: 429,
      detail: 'Too many webhooks with bad signatures; try again later.',
      retryable: true,
      retryAfter: Math.ceil(waitMs / 1000),
    });
  }
  try {
    return await receive();
  } catch (error) {
    if (error instanceof ProblemError && (error.status === 401 || error.status === 404)) {
      for (const key of keys) refused.fail(key, now);
    }
    throw error;
  }
}

const receivedSchema = Type.Object({
  received: Type.Integer({ description: 'Events in the request.' }),
  duplicates: Type.Integer({ description: 'Events already received before, not delivered again.' }),
});

const received = {
  200: { description: 'The events were accepted', schema: receivedSchema },
};

/**
 * The token of a provider's validation handshake (Microsoft Graph's `validationToken`), when its
 * declaration has one and the request carries it. Answered before anything is looked up: Graph
 * sends it while the create that names the subscription is still waiting for Graph's answer.
 */
function handshakeToken(provider: string, query: Record<string, unknown>): string | undefined {
  const declared = connectorDeclaration(provider)?.webhooks?.handshake;
  const value = declared && query[declared.query];
  return typeof value === 'string' ? value : undefined;
}

export const providerWebhookRoutes = [
  defineRoute({
    method: 'POST',
    path: '/webhooks/providers/{provider}/{subscriptionId}',
    operationId: 'receiveProviderWebhook',
    summary: 'Where a provider sends the change events of a subscription',
    description:
      'Not called by clients: Ferry registers this URL at the provider when an installation subscribes. The body is the provider’s own; a request whose signature does not check out is answered 401 and changes nothing. Each event is kept once (a redelivered event is a duplicate) and delivered to the subscribed object’s destination as a subscribe message, recorded as an operation with `actionType: subscribe`.',
    tags: ['Subscriptions'],
    auth: ['none'],
    rawBody: true,
    params: Type.Object({
      provider: Type.String({ minLength: 1, maxLength: 100, description: 'The provider’s catalog name.' }),
      subscriptionId: Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'Ferry’s id of the subscription.',
      }),
    }),
    responses: {
      200: {
        description:
          'The events were accepted; or, to a provider’s validation handshake (Microsoft Graph’s `validationToken` query parameter), the token as `text/plain`',
        schema: Type.Union([receivedSchema, Type.String()]),
      },
      202: {
        description: 'The events were accepted, for providers that document 202 (Microsoft Graph)',
        schema: receivedSchema,
      },
    },
  }).handle(async ({ params, koa, settings }) => {
    const token = handshakeToken(params.provider, koa.query);
    if (token !== undefined) return { status: 200, body: token, contentType: 'text/plain; charset=utf-8' };
    const result = await limited([`ip:${koa.ip}`, `subscription:${params.subscriptionId}`], () =>
      receiveProviderWebhook({
        provider: params.provider,
        subscriptionId: params.subscriptionId,
        request: { method: koa.method, uri: `${settings.publicApiUrl}${koa.originalUrl}` },
        headers: koa.headers,
        rawBody: (koa.state.rawBody as Buffer | undefined) ?? Buffer.alloc(0),
      }),
    );
    const status = connectorDeclaration(params.provider)?.webhooks?.acceptedStatus ?? 200;
    return { status, body: result };
  }),
  defineRoute({
    method: 'POST',
    path: '/webhooks/providers/{provider}/apps/{providerAppId}',
    operationId: 'receiveProviderAppWebhook',
    summary: 'Where a provider sends the change events its app’s settings subscribe to',
    description:
      'Not called by clients: set this URL as the target of the webhooks in the provider app’s own settings (HubSpot: the app’s Webhooks page), for providers whose webhooks belong to the app rather than to each connection. One request may carry events of every account that installed the app; its signature is checked with the provider app’s client secret (a bad or stale one is answered 401 and changes nothing). Each event goes, once, to the subscribed object’s destination of every installation whose connection is through this provider app and to the event’s account (the connection’s `providerWorkspaceRef`, HubSpot’s portal id), as a subscribe message. Events no installation subscribed to are accepted and dropped.',
    tags: ['Subscriptions'],
    auth: ['none'],
    rawBody: true,
    params: Type.Object({
      provider: Type.String({ minLength: 1, maxLength: 100, description: 'The provider’s catalog name.' }),
      providerAppId: Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'Ferry’s id of the provider app.',
      }),
    }),
    responses: received,
  }).handle(async ({ params, koa, settings }) => {
    const result = await limited([`ip:${koa.ip}`, `app:${params.providerAppId}`], () =>
      receiveAppWebhook({
        provider: params.provider,
        providerAppId: params.providerAppId,
        method: koa.method,
        // The provider signs the URL it posted to: Ferry's public URL, not the one behind a proxy.
        uri: `${settings.publicApiUrl}${koa.originalUrl}`,
        headers: koa.headers,
        rawBody: (koa.state.rawBody as Buffer | undefined) ?? Buffer.alloc(0),
      }),
    );
    return { status: 200, body: result };
  }),
];

import Type from 'typebox';
import { FailureLimiter } from '../core/failure-limiter.js';
import { ProblemError } from '../core/problem.js';
import { receiveProviderWebhook } from '../domain/subscriptions/inbound.js';
import { defineRoute } from './route.js';

/**
 * Where providers post change events for a subscription. No credentials: the provider's signature,
 * checked with the subscription's secret, is the authentication. A caller whose requests keep
 * failing it is answered 429 before anything is looked up, so a flood cannot slow the API.
 */

const refused = new FailureLimiter(20, 60_000);

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
        description: 'The events were accepted',
        schema: Type.Object({
          received: Type.Integer({ description: 'Events in the request.' }),
          duplicates: Type.Integer({ description: 'Events already received before, not delivered again.' }),
        }),
      },
    },
  }).handle(async ({ params, koa }) => {
    const now = Date.now();
    const keys = [`ip:${koa.ip}`, `subscription:${params.subscriptionId}`];
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
      const result = await receiveProviderWebhook({
        provider: params.provider,
        subscriptionId: params.subscriptionId,
        headers: koa.headers,
        rawBody: (koa.state.rawBody as Buffer | undefined) ?? Buffer.alloc(0),
      });
      return { status: 200, body: result };
    } catch (error) {
      if (error instanceof ProblemError && (error.status === 401 || error.status === 404)) {
        for (const key of keys) refused.fail(key, now);
      }
      throw error;
    }
  }),
];

import Type from 'typebox';
import { defineRoute } from './route.js';
import { ProblemError } from '../core/problem.js';
import { getProvider, listProviders } from '../providers/catalog/index.js';
import { ProviderMapSchema, ProviderSchema } from '../schemas/provider.js';

export const providerRoutes = [
  defineRoute({
    method: 'GET',
    path: '/providers',
    operationId: 'listProviders',
    summary: 'Every provider Ferry knows, keyed by name',
    tags: ['Providers'],
    auth: ['none'],
    responses: { 200: { description: 'Providers', schema: ProviderMapSchema } },
  }).handle(async () => {
    return { status: 200, body: listProviders() };
  }),
  defineRoute({
    method: 'GET',
    path: '/providers/{provider}',
    operationId: 'getProvider',
    summary: 'Describe one provider',
    tags: ['Providers'],
    auth: ['none'],
    params: Type.Object({ provider: Type.String({ minLength: 1 }) }),
    responses: { 200: { description: 'The provider', schema: ProviderSchema } },
  }).handle(async ({ params }) => {
    const provider = getProvider(params.provider);
    if (!provider) throw ProblemError.notFound(`Provider "${params.provider}" is not in Ferry’s catalog.`);
    return { status: 200, body: provider };
  }),
];

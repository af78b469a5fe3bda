import Type from 'typebox';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { defineRoute } from './route.js';
import { ProblemError } from '../core/problem.js';
import { ProjectPathParams } from '../schemas/common.js';
import {
  ConnectionParams,
  ConnectionSchema,
  GenerateConnectionBody,
  GetConnectionQuery,
  ListConnectionsQuery,
  UpdateConnectionBody,
} from '../schemas/connections.js';
import { generateConnection } from '../domain/connections/generate.js';
import { findConnection, listConnections } from '../domain/connections/lookups.js';
import { isOAuth2Connection } from '../domain/connections/sealed-credentials.js';
import { connectionView, connectionViews } from '../domain/connections/views.js';
import { deleteConnection, updateConnection } from '../domain/connections/writes.js';
import { refreshConnectionCredentials } from '../domain/credentials.js';

/** Two requests creating one group's first connection at once: the loser is told to retry. */
async function conflictOnRace<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) {
      throw ProblemError.conflict(
        'Another request changed this group’s connections at the same time; retry.',
      );
    }
    throw error;
  }
}

export const connectionRoutes = [
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/connections',
    operationId: 'listConnections',
    summary: 'List connections, optionally of one provider, group or consumer',
    tags: ['Connections'],
    auth: ['apiKey', 'bearer'],
    params: ProjectPathParams,
    query: ListConnectionsQuery,
    responses: {
      200: { description: 'Connections, without credentials', schema: Type.Array(ConnectionSchema) },
    },
  }).handle(async ({ em, project, query }) => {
    const connections = await listConnections(em, project.id, query);
    return { status: 200, body: await connectionViews(em, connections) };
  }),
  defineRoute({
    method: 'POST',
    path: '/projects/{projectIdOrName}/connections:generate',
    operationId: 'generateConnection',
    summary: 'Create a connection from credentials the caller already has',
    description:
      'Give exactly one of `apiKey`, `basicAuth`, `oauth2ClientCredentials` (a token is fetched now; the connection is saved only if it works) or `oauth2AuthorizationCode` (imported tokens, refreshed later with the project’s provider app). A group has one connection per provider: generating again replaces its credentials (200).',
    tags: ['Connections'],
    auth: ['apiKey', 'bearer'],
    params: ProjectPathParams,
    body: GenerateConnectionBody,
    responses: {
      201: { description: 'The new connection', schema: ConnectionSchema },
      200: {
        description: 'The group’s existing connection, with the new credentials',
        schema: ConnectionSchema,
      },
    },
  }).handle(async ({ em, project, body }) => {
    const { connection, created } = await conflictOnRace(() => generateConnection(em, project.id, body));
    return { status: created ? 201 : 200, body: await connectionView(em, connection) };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/connections/{connectionId}',
    operationId: 'getConnection',
    summary: 'Get a connection, optionally with its credentials',
    description:
      '`includeCreds=true` adds the decrypted credentials (the OAuth refresh token only with `includeRefreshToken=true`). `refresh=ifExpired` renews an OAuth access token that is (nearly) expired first; `refresh=force` always does.',
    tags: ['Connections'],
    auth: ['apiKey', 'bearer'],
    params: ConnectionParams,
    query: GetConnectionQuery,
    responses: { 200: { description: 'The connection', schema: ConnectionSchema } },
  }).handle(async ({ em, project, params, query }) => {
    let connection = await findConnection(em, project.id, params.connectionId);
    if (query.refresh && isOAuth2Connection(connection)) {
      connection = await refreshConnectionCredentials(connection.id, { force: query.refresh === 'force' });
    }
    return {
      status: 200,
      body: await connectionView(em, connection, {
        includeCreds: query.includeCreds,
        includeRefreshToken: query.includeRefreshToken,
      }),
    };
  }),
  defineRoute({
    method: 'PATCH',
    path: '/projects/{projectIdOrName}/connections/{connectionId}',
    operationId: 'updateConnection',
    summary: 'Update a connection’s provider workspace or metadata',
    description: '`updateMask` names the fields to change: providerWorkspaceRef, providerMetadata.',
    tags: ['Connections'],
    auth: ['apiKey', 'bearer'],
    params: ConnectionParams,
    body: UpdateConnectionBody,
    responses: { 200: { description: 'The updated connection', schema: ConnectionSchema } },
  }).handle(async ({ em, project, params, body }) => {
    const connection = await em.transactional(async (tx) => {
      const found = await findConnection(tx, project.id, params.connectionId);
      await updateConnection(tx, found, body);
      return found;
    });
    return { status: 200, body: await connectionView(em, connection) };
  }),
  defineRoute({
    method: 'DELETE',
    path: '/projects/{projectIdOrName}/connections/{connectionId}',
    operationId: 'deleteConnection',
    summary: 'Delete a connection that no installation uses',
    tags: ['Connections'],
    auth: ['apiKey', 'bearer'],
    params: ConnectionParams,
    responses: { 204: { description: 'Deleted' } },
  }).handle(async ({ em, project, params }) => {
    await em.transactional(async (tx) =>
      deleteConnection(tx, await findConnection(tx, project.id, params.connectionId)),
    );
    return { status: 204 };
  }),
];

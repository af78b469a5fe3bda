import Type from 'typebox';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { batchedList } from './batched-list.js';
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
  rotatableCredentials,
} from '../schemas/connections.js';
import { generateConnection, rotateConnectionCredentials } from '../domain/connections/generate.js';
import { findConnection } from '../domain/connections/lookups.js';
import { getConnectionView, listConnectionViews } from '../domain/read-views.js';
import { hasRenewableToken } from '../domain/connections/sealed-credentials.js';
import { connectionView } from '../domain/connections/views.js';
import { deleteConnection, updateConnection } from '../domain/connections/writes.js';
import { refreshConnectionCredentials } from '../domain/credentials.js';
import { assertActsForGroup, assertActsForGroupId, scopedGroupRef } from '../domain/project-access.js';

/** Two requests creating one group's first connection at once: the loser is told to retry. */
export async function conflictOnRace<T>(work: () => Promise<T>): Promise<T> {
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
    auth: ['apiKey', 'bearer', 'projectJwt'],
    params: ProjectPathParams,
    query: ListConnectionsQuery,
    responses: {
      200: { description: 'Connections, without credentials', schema: Type.Array(ConnectionSchema) },
    },
  }).handle(async ({ em, project, query, principal }) => {
    const groupRef = query.groupRef ?? scopedGroupRef(principal);
    assertActsForGroup(principal, groupRef);
    return { status: 200, body: batchedList(listConnectionViews(em, project.id, { ...query, groupRef })) };
  }),
  defineRoute({
    method: 'POST',
    path: '/projects/{projectIdOrName}/connections:generate',
    operationId: 'generateConnection',
    summary: 'Create a connection from credentials the caller already has',
    description:
      'Give exactly one of `apiKey`, `basicAuth`, `oauth2ClientCredentials` (a token is fetched now; the connection is saved only if it works) or `oauth2AuthorizationCode` (imported tokens, refreshed later with the project’s provider app). A group has one connection per provider: generating again replaces its credentials and answers that connection, with 201 as the first time (clients of the public API expect 201 only).',
    tags: ['Connections'],
    auth: ['apiKey', 'bearer', 'projectJwt'],
    params: ProjectPathParams,
    body: GenerateConnectionBody,
    responses: {
      201: {
        description: 'The connection: new, or the group’s existing one with the new credentials',
        schema: ConnectionSchema,
      },
    },
  }).handle(async ({ em, project, body, principal }) => {
    assertActsForGroup(principal, body.groupRef);
    const { connection } = await conflictOnRace(() => generateConnection(em, project.id, body));
    return { status: 201, body: await connectionView(em, connection) };
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
    if (!query.refresh && !query.includeCreds) {
      return { status: 200, body: await getConnectionView(em, project.id, params.connectionId) };
    }
    let connection = await findConnection(em, project.id, params.connectionId);
    if (query.refresh && hasRenewableToken(connection)) {
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
    summary: 'Update a connection’s provider workspace, metadata or credentials',
    description:
      '`updateMask` names the fields to change: providerWorkspaceRef, providerMetadata, or one credential (apiKey, basicAuth, oauth2ClientCredentials) of a kind the provider takes, checked as `connections:generate` checks it; new credentials set the connection back to `working`.',
    tags: ['Connections'],
    auth: ['apiKey', 'bearer', 'projectJwt'],
    params: ConnectionParams,
    body: UpdateConnectionBody,
    responses: { 200: { description: 'The updated connection', schema: ConnectionSchema } },
  }).handle(async ({ em, project, params, body, principal }) => {
    const connection = await em.transactional(async (tx) => {
      const found = await findConnection(tx, project.id, params.connectionId);
      await assertActsForGroupId(tx, principal, found.groupId);
      const credentials: readonly string[] = rotatableCredentials;
      if (body.updateMask.some((path) => !credentials.includes(path)))
        await updateConnection(tx, found, body);
      return rotateConnectionCredentials(tx, found, body);
    });
    return { status: 200, body: await connectionView(em, connection) };
  }),
  defineRoute({
    method: 'DELETE',
    path: '/projects/{projectIdOrName}/connections/{connectionId}',
    operationId: 'deleteConnection',
    summary: 'Delete a connection that no installation uses',
    tags: ['Connections'],
    auth: ['apiKey', 'bearer', 'projectJwt'],
    params: ConnectionParams,
    responses: { 204: { description: 'Deleted' } },
  }).handle(async ({ em, project, params, principal }) => {
    await em.transactional(async (tx) => {
      const connection = await findConnection(tx, project.id, params.connectionId);
      await assertActsForGroupId(tx, principal, connection.groupId);
      await deleteConnection(tx, connection);
    });
    return { status: 204 };
  }),
];

import type { EntityName, FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  ConsumerEntity,
  GroupEntity,
  ProviderAppEntity,
  type Connection,
  type Consumer,
  type Group,
  type ProviderApp,
} from '../../db/entities/connection.js';
import type { ConnectionView, ProviderMetadata } from '../../schemas/connections.js';
import { consumerView, groupView } from '../groups.js';
import { providerAppView } from '../provider-apps.js';
import { authSchemes, openCredentials } from './sealed-credentials.js';

/**
 * The spec's Connection for a stored connection: its group, consumer and provider app, and its
 * credentials only when the caller asks for them.
 */

export interface ViewOptions {
  includeCreds?: boolean;
  includeRefreshToken?: boolean;
}

function iso(date: Date | null | undefined): string | undefined {
  return date ? date.toISOString() : undefined;
}

function credentialView(connection: Connection, options: ViewOptions): Partial<ConnectionView> {
  const credentials = options.includeCreds ? openCredentials(connection) : undefined;
  const accessToken = (token: string) => ({
    token,
    ...(connection.accessTokenIssuedAt && { issuedAt: iso(connection.accessTokenIssuedAt) }),
    ...(connection.accessTokenExpiresAt && { expiresAt: iso(connection.accessTokenExpiresAt) }),
  });
  switch (connection.authScheme) {
    case authSchemes.oauth2AuthorizationCode: {
      const stored = credentials?.kind === 'oauth2AuthorizationCode' ? credentials : undefined;
      return {
        oauth2AuthorizationCode: {
          ...(stored && { accessToken: accessToken(stored.accessToken) }),
          ...(stored?.refreshToken &&
            options.includeRefreshToken && {
              refreshToken: {
                token: stored.refreshToken,
                ...(connection.refreshTokenIssuedAt && { issuedAt: iso(connection.refreshTokenIssuedAt) }),
                ...(connection.refreshTokenExpiresAt && { expiresAt: iso(connection.refreshTokenExpiresAt) }),
              },
            }),
          scopes: connection.scopes,
        },
      };
    }
    case authSchemes.oauth2ClientCredentials: {
      const stored = credentials?.kind === 'oauth2ClientCredentials' ? credentials : undefined;
      return {
        oauth2ClientCredentials: {
          ...(stored && {
            clientId: stored.clientId,
            clientSecret: stored.clientSecret,
            accessToken: accessToken(stored.accessToken),
          }),
          scopes: connection.scopes,
        },
      };
    }
    case authSchemes.oauth2Password: {
      const stored = credentials?.kind === 'oauth2Password' ? credentials : undefined;
      return {
        oauth2Password: {
          ...(stored && {
            username: stored.username,
            password: stored.password,
            ...(stored.clientId && { clientId: stored.clientId }),
            accessToken: accessToken(stored.accessToken),
          }),
          scopes: connection.scopes,
        },
      };
    }
    case authSchemes.apiKey:
      return credentials?.kind === 'apiKey' ? { apiKey: credentials.apiKey } : {};
    case authSchemes.basic:
      return credentials?.kind === 'basic'
        ? { basicAuth: { username: credentials.username, password: credentials.password } }
        : {};
    case authSchemes.jwtBearer: {
      // The private key is never shown, not even with includeCreds.
      const stored = credentials?.kind === 'jwtBearer' ? credentials : undefined;
      return {
        jwt: {
          ...(stored && {
            issuer: stored.issuer,
            ...(stored.subject && { subject: stored.subject }),
            ...(stored.keyId && { keyId: stored.keyId }),
            accessToken: accessToken(stored.accessToken),
          }),
          scopes: connection.scopes,
        },
      };
    }
    case authSchemes.custom:
      return credentials?.kind === 'custom' ? { customAuth: { ...credentials.values } } : {};
    default:
      return {};
  }
}

/**
 * The spec's Connection for each row, with group, consumer and provider app loaded in at most three
 * queries (none for what `loaded` already holds or no row refers to).
 */
export async function connectionViews(
  em: EntityManager,
  connections: Connection[],
  options: ViewOptions = {},
  loaded: { groups?: Group[] } = {},
): Promise<ConnectionView[]> {
  if (connections.length === 0) return [];
  const ids = <K extends keyof Connection>(key: K, known: { id: string }[] = []) => {
    const have = new Set(known.map((row) => row.id));
    return [...new Set(connections.map((connection) => connection[key]).filter(Boolean) as string[])].filter(
      (id) => !have.has(id),
    );
  };
  const find = async <T extends object>(entity: EntityName<T>, wanted: string[]): Promise<T[]> =>
    wanted.length ? em.find(entity, { id: { $in: wanted } } as unknown as FilterQuery<T>) : [];
  const [groups, consumers, apps] = [
    [...(loaded.groups ?? []), ...(await find(GroupEntity, ids('groupId', loaded.groups)))],
    await find(ConsumerEntity, ids('consumerId')),
    await find(ProviderAppEntity, ids('providerAppId')),
  ];
  const byId = <T extends { id: string }>(rows: T[]) => new Map(rows.map((row) => [row.id, row]));
  const [groupById, consumerById, appById] = [byId(groups), byId(consumers), byId(apps)];
  return connections.map((connection) =>
    connectionViewOf(
      connection,
      groupById.get(connection.groupId)!,
      consumerById.get(connection.consumerId)!,
      connection.providerAppId ? appById.get(connection.providerAppId) : undefined,
      options,
    ),
  );
}

/** The spec's Connection for a row whose group, consumer and provider app (if any) are at hand. */
export function connectionViewOf(
  connection: Connection,
  group: Group,
  consumer: Consumer,
  app: ProviderApp | undefined,
  options: ViewOptions = {},
): ConnectionView {
  return {
    id: connection.id,
    projectId: connection.projectId,
    provider: connection.provider,
    group: groupView(group),
    consumer: consumerView(consumer),
    ...(app && { providerApp: providerAppView(app) }),
    ...(connection.providerWorkspaceRef && { providerWorkspaceRef: connection.providerWorkspaceRef }),
    ...(connection.providerConsumerRef && { providerConsumerRef: connection.providerConsumerRef }),
    authScheme: connection.authScheme,
    status: connection.status,
    ...credentialView(connection, options),
    providerMetadata: connection.providerMetadata as ProviderMetadata,
    createTime: connection.createTime.toISOString(),
    updateTime: connection.updateTime.toISOString(),
  };
}

export async function connectionView(
  em: EntityManager,
  connection: Connection,
  options: ViewOptions = {},
): Promise<ConnectionView> {
  return (await connectionViews(em, [connection], options))[0];
}

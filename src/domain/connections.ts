import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../core/ids.js';
import { ProblemError, type ProblemIssue } from '../core/problem.js';
import { config } from '../config.js';
import { decryptJson, encryptJson } from '../crypto/secrets.js';
import {
  ConnectionEntity,
  ConsumerEntity,
  GroupEntity,
  ProviderAppEntity,
  type Connection,
  type Consumer,
  type Group,
} from '../db/entities/connection.js';
import { InstallationEntity } from '../db/entities/installation.js';
import {
  getProvider,
  renderProviderTemplate,
  SANDBOX_URL_VARIABLE,
  templateVariables,
  type Provider,
} from '../providers/catalog/index.js';
import {
  clientCredentialsToken,
  splitScopes,
  TokenEndpointError,
  valueAtPath,
  type TokenResponse,
} from '../providers/oauth-client.js';
import type {
  ConnectionView,
  GenerateConnectionInput,
  ProviderMetadata,
  ProviderMetadataInputValue,
  TokenInputValue,
  UpdateConnectionInput,
} from '../schemas/connections.js';
import { UpdateConnectionBody } from '../schemas/connections.js';
import { recordEvent } from './events.js';
import { type EventType } from '../schemas/notifications.js';
import { consumerView, ensureConsumer, ensureGroup, groupView } from './groups.js';
import { defaultProviderApp, providerAppView } from './provider-apps.js';
import { applyUpdateMask } from './update-mask.js';

/**
 * Connections: one customer's credentials for one provider, one per group and provider.
 * Every credential lives sealed (AES-256-GCM) in `credentialsEncrypted` as a `StoredCredentials`;
 * times and scopes stay in the clear so lists never decrypt anything.
 */

export type StoredCredentials =
  | { kind: 'oauth2AuthorizationCode'; accessToken: string; refreshToken?: string; tokenType?: string }
  | {
      kind: 'oauth2ClientCredentials';
      clientId: string;
      clientSecret: string;
      accessToken: string;
      tokenType?: string;
    }
  | { kind: 'apiKey'; apiKey: string }
  | { kind: 'basic'; username: string; password: string };

export const authSchemes = {
  oauth2AuthorizationCode: 'oauth2/authorizationCode',
  oauth2ClientCredentials: 'oauth2/clientCredentials',
  apiKey: 'apiKey',
  basic: 'basic',
} as const satisfies Record<StoredCredentials['kind'], string>;

export function sealCredentials(credentials: StoredCredentials): string {
  return encryptJson(credentials);
}

export function openCredentials(connection: Pick<Connection, 'credentialsEncrypted'>): StoredCredentials {
  return decryptJson<StoredCredentials>(connection.credentialsEncrypted);
}

export function isOAuth2Connection(connection: Pick<Connection, 'authScheme'>): boolean {
  return connection.authScheme.startsWith('oauth2/');
}

// ---------------------------------------------------------------------------------------------
// Provider metadata and URL templates

export function normaliseProviderMetadata(
  input: ProviderMetadataInputValue | undefined,
  source = 'input',
): ProviderMetadata {
  const result: ProviderMetadata = {};
  for (const [name, entry] of Object.entries(input ?? {})) {
    result[name] =
      typeof entry === 'string'
        ? { value: entry, source }
        : { value: entry.value, source: entry.source ?? source };
  }
  return result;
}

function metadataValue(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry;
  if (entry && typeof entry === 'object' && typeof (entry as { value?: unknown }).value === 'string')
    return (entry as { value: string }).value;
  return undefined;
}

/**
 * Values for the `{{.name}}` placeholders of a provider's URLs: the catalog's defaults, then the
 * connection's metadata, `workspace` from its workspace ref, and `sandboxURL` from Ferry's config.
 */
export function templateVars(
  provider: Provider | undefined,
  connection: { providerWorkspaceRef?: string | null; providerMetadata?: Record<string, unknown> },
): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const input of provider?.metadata?.input ?? []) {
    if (input.defaultValue) vars[input.name] = input.defaultValue;
  }
  for (const [name, entry] of Object.entries(connection.providerMetadata ?? {})) {
    const value = metadataValue(entry);
    if (value !== undefined && value !== '') vars[name] = value;
  }
  if (connection.providerWorkspaceRef) vars.workspace = connection.providerWorkspaceRef;
  vars[SANDBOX_URL_VARIABLE] = config().sandboxUrl;
  return vars;
}

/** Where a caller sets each template variable, for issues that name the missing ones. */
function fieldOfVariable(name: string): string {
  return name === 'workspace' ? 'providerWorkspaceRef' : `providerMetadata.${name}`;
}

function providerUrlTemplates(provider: Provider): string[] {
  return [
    provider.baseURL,
    provider.oauth2Opts?.authURL,
    provider.oauth2Opts?.tokenURL,
    provider.authHealthCheck?.url,
    ...Object.values(provider.modules ?? {}).map((module) => module.baseURL),
  ].filter((template): template is string => typeof template === 'string');
}

const hostSafeValue = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;

/**
 * Metadata values that land in a provider's URLs must be host-name material: a value such as
 * `evil.example/` or `x@evil.example` would send the customer's credentials elsewhere.
 */
export function checkTemplateValues(provider: Provider, metadata: ProviderMetadata, prefix = ''): void {
  const templates = providerUrlTemplates(provider);
  const used = new Set(templates.flatMap(templateVariables));
  const inputs = new Map((provider.metadata?.input ?? []).map((input) => [input.name, input]));
  const issues: ProblemIssue[] = [];
  for (const [name, entry] of Object.entries(metadata)) {
    const allowed = inputs.get(name)?.allowedValues;
    // A value that is the whole host could point credentials anywhere: only listed hosts will do.
    const wholeHost = templates.some((template) => template.includes(`//{{.${name}}}`));
    if (used.has(name) && (allowed || wholeHost) && !(allowed ?? []).includes(entry.value)) {
      issues.push({
        in: 'body',
        name: `${prefix}providerMetadata.${name}`,
        value: entry.value,
        detail: `${name} must be one of: ${(allowed ?? []).join(', ') || '(no value is allowed)'}`,
      });
      continue;
    }
    if (used.has(name) && name !== SANDBOX_URL_VARIABLE && !hostSafeValue.test(entry.value)) {
      issues.push({
        in: 'body',
        name: `${prefix}providerMetadata.${name}`,
        value: entry.value,
        detail: `${name} is part of ${provider.name}’s URLs, so it may hold only letters, digits, ".", "-" and "_"`,
      });
    }
    if (name === SANDBOX_URL_VARIABLE) {
      issues.push({
        in: 'body',
        name: `${prefix}providerMetadata.${name}`,
        detail: `${SANDBOX_URL_VARIABLE} is set by Ferry (FERRY_SANDBOX_URL), not by connections`,
      });
    }
  }
  if (issues.length) throw ProblemError.invalid(issues);
}

/** Fills a provider URL template; a missing variable is a 400 naming the body field that sets it. */
export function renderProviderUrl(template: string, vars: Record<string, string>, prefix = ''): string {
  const missing = templateVariables(template).filter((name) => !vars[name]);
  if (missing.length) {
    throw ProblemError.invalid(
      missing.map((name) => ({
        in: 'body' as const,
        name: `${prefix}${fieldOfVariable(name)}`,
        detail: `this provider’s URL ${template} needs "${name}"; set ${fieldOfVariable(name)}`,
      })),
    );
  }
  return renderProviderTemplate(template, vars);
}

// ---------------------------------------------------------------------------------------------
// Token responses

/** What a token response tells about a connection: times, granted scopes and provider facts. */
export interface TokenFacts {
  scopes: string[];
  accessTokenIssuedAt: Date;
  accessTokenExpiresAt?: Date;
  providerConsumerRef?: string;
  providerWorkspaceRef?: string;
  providerMetadata: ProviderMetadata;
}

export function tokenFacts(
  provider: Provider,
  tokens: TokenResponse,
  requestedScopes: string[],
  now = new Date(),
): TokenFacts {
  const fields = provider.oauth2Opts?.tokenMetadataFields ?? {};
  const asText = (value: unknown) =>
    typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
  const scopeValue = fields.scopesField ? valueAtPath(tokens.raw, fields.scopesField) : tokens.scope;
  const scopes = Array.isArray(scopeValue)
    ? scopeValue.filter((scope): scope is string => typeof scope === 'string')
    : typeof scopeValue === 'string'
      ? splitScopes(scopeValue)
      : requestedScopes;
  const providerMetadata: ProviderMetadata = {};
  for (const field of fields.otherFields ?? []) {
    const value = asText(valueAtPath(tokens.raw, field.path));
    if (value !== undefined) providerMetadata[field.name] = { value, source: 'token' };
  }
  return {
    scopes,
    accessTokenIssuedAt: now,
    accessTokenExpiresAt: tokens.expiresIn ? new Date(now.getTime() + tokens.expiresIn * 1000) : undefined,
    providerConsumerRef: fields.consumerRefField
      ? asText(valueAtPath(tokens.raw, fields.consumerRefField))
      : undefined,
    providerWorkspaceRef: fields.workspaceRefField
      ? asText(valueAtPath(tokens.raw, fields.workspaceRefField))
      : undefined,
    providerMetadata,
  };
}

// ---------------------------------------------------------------------------------------------
// Lookups, views and events

export async function findConnection(em: EntityManager, projectId: string, id: string): Promise<Connection> {
  const connection = isUuid(id) ? await em.findOne(ConnectionEntity, { id, projectId }) : null;
  if (!connection) {
    throw ProblemError.notFound(
      `Connection "${id}" was not found.`,
      'Check the connection ID and the project ID.',
    );
  }
  return connection;
}

export interface ConnectionFilters {
  provider?: string;
  groupRef?: string;
  consumerRef?: string;
}

export async function listConnections(
  em: EntityManager,
  projectId: string,
  filters: ConnectionFilters,
): Promise<Connection[]> {
  const where: Record<string, unknown> = { projectId };
  if (filters.provider) where.provider = filters.provider;
  if (filters.groupRef) {
    const group = await em.findOne(GroupEntity, { projectId, groupRef: filters.groupRef });
    if (!group) return [];
    where.groupId = group.id;
  }
  if (filters.consumerRef) {
    const consumer = await em.findOne(ConsumerEntity, { projectId, consumerRef: filters.consumerRef });
    if (!consumer) return [];
    where.consumerId = consumer.id;
  }
  return em.find(ConnectionEntity, where, { orderBy: { createTime: 'asc', id: 'asc' } });
}

async function partiesOf(
  em: EntityManager,
  connection: Connection,
): Promise<{ group: Group; consumer: Consumer }> {
  const group = await em.findOneOrFail(GroupEntity, { id: connection.groupId });
  const consumer = await em.findOneOrFail(ConsumerEntity, { id: connection.consumerId });
  return { group, consumer };
}

/**
 * Writes a `connection.*` notification in the caller's transaction. The payload names the
 * connection the way installation events do; `connection.error` adds `error`.
 */
export async function recordConnectionEvent(
  em: EntityManager,
  connection: Connection,
  type: Extract<EventType, `connection.${string}`>,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const { group, consumer } = await partiesOf(em, connection);
  recordEvent(em, connection.projectId, type, {
    projectId: connection.projectId,
    provider: connection.provider,
    connectionId: connection.id,
    groupRef: group.groupRef,
    groupName: group.groupName,
    consumerRef: consumer.consumerRef,
    consumerName: consumer.consumerName,
    ...(connection.providerWorkspaceRef && { providerWorkspaceRef: connection.providerWorkspaceRef }),
    authScheme: connection.authScheme,
    status: connection.status,
    ...extra,
  });
}

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
    case authSchemes.apiKey:
      return credentials?.kind === 'apiKey' ? { apiKey: credentials.apiKey } : {};
    case authSchemes.basic:
      return credentials?.kind === 'basic'
        ? { basicAuth: { username: credentials.username, password: credentials.password } }
        : {};
    default:
      return {};
  }
}

/** The spec's Connection for each row, with group, consumer and provider app loaded in three queries. */
export async function connectionViews(
  em: EntityManager,
  connections: Connection[],
  options: ViewOptions = {},
): Promise<ConnectionView[]> {
  if (connections.length === 0) return [];
  const ids = <K extends keyof Connection>(key: K) => [
    ...new Set(connections.map((connection) => connection[key]).filter(Boolean) as string[]),
  ];
  const [groups, consumers, apps] = [
    await em.find(GroupEntity, { id: { $in: ids('groupId') } }),
    await em.find(ConsumerEntity, { id: { $in: ids('consumerId') } }),
    await em.find(ProviderAppEntity, { id: { $in: ids('providerAppId') } }),
  ];
  const byId = <T extends { id: string }>(rows: T[]) => new Map(rows.map((row) => [row.id, row]));
  const [groupById, consumerById, appById] = [byId(groups), byId(consumers), byId(apps)];
  return connections.map((connection) => {
    const app = connection.providerAppId ? appById.get(connection.providerAppId) : undefined;
    return {
      id: connection.id,
      projectId: connection.projectId,
      provider: connection.provider,
      group: groupView(groupById.get(connection.groupId)!),
      consumer: consumerView(consumerById.get(connection.consumerId)!),
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
  });
}

export async function connectionView(
  em: EntityManager,
  connection: Connection,
  options: ViewOptions = {},
): Promise<ConnectionView> {
  return (await connectionViews(em, [connection], options))[0];
}

// ---------------------------------------------------------------------------------------------
// Writes

/** Everything a new or renewed set of credentials says about a connection. */
export interface ConnectionWrite {
  provider: string;
  group: Group;
  consumer: Consumer;
  providerAppId?: string;
  providerWorkspaceRef?: string;
  providerConsumerRef?: string;
  /** Merged over the connection's current metadata. */
  providerMetadata: ProviderMetadata;
  credentials: StoredCredentials;
  scopes: string[];
  accessTokenIssuedAt?: Date;
  accessTokenExpiresAt?: Date;
  refreshTokenIssuedAt?: Date;
}

/**
 * Some providers (Google, for one) send a refresh token only on the first consent; re-authorizing
 * must not throw away the one the connection already holds.
 */
function keepRefreshToken(write: ConnectionWrite, existing: Connection | null): void {
  if (!existing || write.credentials.kind !== 'oauth2AuthorizationCode' || write.credentials.refreshToken)
    return;
  const previous = openCredentials(existing);
  if (previous.kind === 'oauth2AuthorizationCode' && previous.refreshToken) {
    write.credentials = { ...write.credentials, refreshToken: previous.refreshToken };
    write.refreshTokenIssuedAt ??= existing.refreshTokenIssuedAt;
  }
}

/**
 * Creates the group's connection for the provider, or renews it (or the one named by `connectionId`)
 * with new credentials, back to `working`; writes `connection.created` or `connection.updated`.
 */
export async function saveConnection(
  em: EntityManager,
  projectId: string,
  write: ConnectionWrite,
  connectionId?: string,
): Promise<{ connection: Connection; created: boolean }> {
  const existing = connectionId
    ? await em.findOne(ConnectionEntity, { id: connectionId, projectId, provider: write.provider })
    : await em.findOne(ConnectionEntity, { projectId, groupId: write.group.id, provider: write.provider });
  if (connectionId && !existing) {
    throw ProblemError.notFound(`Connection "${connectionId}" no longer exists.`);
  }
  keepRefreshToken(write, existing);
  const fields = {
    consumerId: write.consumer.id,
    authScheme: authSchemes[write.credentials.kind],
    status: 'working' as const,
    credentialsEncrypted: sealCredentials(write.credentials),
    scopes: write.scopes,
    // null, not undefined: a renewed connection must lose the times its old credentials had.
    accessTokenIssuedAt: write.accessTokenIssuedAt ?? (null as unknown as undefined),
    accessTokenExpiresAt: write.accessTokenExpiresAt ?? (null as unknown as undefined),
    refreshTokenIssuedAt: write.refreshTokenIssuedAt ?? (null as unknown as undefined),
    lastError: null as unknown as undefined,
  };
  if (existing) {
    Object.assign(existing, fields);
    existing.providerAppId = write.providerAppId ?? (null as unknown as undefined);
    if (write.providerWorkspaceRef) existing.providerWorkspaceRef = write.providerWorkspaceRef;
    if (write.providerConsumerRef) existing.providerConsumerRef = write.providerConsumerRef;
    existing.providerMetadata = { ...existing.providerMetadata, ...write.providerMetadata };
    await recordConnectionEvent(em, existing, 'connection.updated');
    return { connection: existing, created: false };
  }
  const now = new Date();
  const connection = em.create(ConnectionEntity, {
    id: randomUUID(),
    projectId,
    provider: write.provider,
    groupId: write.group.id,
    providerAppId: write.providerAppId,
    providerWorkspaceRef: write.providerWorkspaceRef,
    providerConsumerRef: write.providerConsumerRef,
    providerMetadata: write.providerMetadata,
    ...fields,
    createTime: now,
    updateTime: now,
  });
  em.persist(connection);
  await recordConnectionEvent(em, connection, 'connection.created');
  return { connection, created: true };
}


export async function updateConnection(
  em: EntityManager,
  connection: Connection,
  input: UpdateConnectionInput,
): Promise<void> {
  const draft: Partial<UpdateConnectionInput['connection']> = {};
  applyUpdateMask(draft, input.connection, input.updateMask, UpdateConnectionBody.properties.connection, 'connection');
  const provider = getProvider(connection.provider);
  if (draft.providerMetadata !== undefined) {
    const metadata = normaliseProviderMetadata(draft.providerMetadata as ProviderMetadataInputValue);
    if (provider) checkTemplateValues(provider, metadata, 'connection.');
    connection.providerMetadata = metadata;
  }
  if (draft.providerWorkspaceRef !== undefined) {
    connection.providerWorkspaceRef = draft.providerWorkspaceRef as string;
  }
  await recordConnectionEvent(em, connection, 'connection.updated');
}

/** Refused while an installation uses the connection: it would be left without credentials. */
export async function deleteConnection(em: EntityManager, connection: Connection): Promise<void> {
  const installations = await em.count(InstallationEntity, { connectionId: connection.id });
  if (installations > 0) {
    throw ProblemError.conflict(
      `Connection "${connection.id}" is used by ${installations} installation${installations === 1 ? '' : 's'}; delete ${installations === 1 ? 'it' : 'them'} first.`,
    );
  }
  await recordConnectionEvent(em, connection, 'connection.deleted');
  em.remove(connection);
}

// ---------------------------------------------------------------------------------------------
// connections:generate

const credentialFields = [
  'apiKey',
  'basicAuth',
  'oauth2ClientCredentials',
  'oauth2AuthorizationCode',
] as const;
type CredentialField = (typeof credentialFields)[number];

function invalidCredential(field: string, detail: string, value?: unknown): ProblemError {
  return ProblemError.invalid([{ in: 'body', name: field, detail, ...(value !== undefined && { value }) }]);
}

/** Which credential kinds a provider's auth type accepts. */
function acceptedCredentialFields(provider: Provider): CredentialField[] {
  switch (provider.authType) {
    case 'apiKey':
      return ['apiKey'];
    case 'basic':
      return provider.basicOpts?.apiKeyAsBasic ? ['apiKey', 'basicAuth'] : ['basicAuth'];
    case 'oauth2':
      return ['authorizationCode', 'authorizationCodePKCE'].includes(provider.oauth2Opts?.grantType ?? '')
        ? ['oauth2AuthorizationCode', 'oauth2ClientCredentials']
        : ['oauth2ClientCredentials'];
    default:
      return [];
  }
}

function importedToken(value: TokenInputValue): { token: string; issuedAt?: Date; expiresAt?: Date } {
  if (typeof value === 'string') return { token: value };
  return {
    token: value.token,
    issuedAt: value.issuedAt ? new Date(value.issuedAt) : undefined,
    expiresAt: value.expiresAt ? new Date(value.expiresAt) : undefined,
  };
}

type GeneratedCredentials = Pick<
  ConnectionWrite,
  'credentials' | 'scopes' | 'accessTokenIssuedAt' | 'accessTokenExpiresAt' | 'refreshTokenIssuedAt'
> &
  Partial<Pick<TokenFacts, 'providerConsumerRef' | 'providerWorkspaceRef'>> & {
    tokenMetadata?: ProviderMetadata;
  };

async function clientCredentialsConnection(
  provider: Provider,
  input: NonNullable<GenerateConnectionInput['oauth2ClientCredentials']>,
  vars: Record<string, string>,
): Promise<GeneratedCredentials> {
  const opts = provider.oauth2Opts!;
  const tokenUrl = renderProviderUrl(opts.tokenURL, vars);
  const scopes = input.scopes ?? [];
  let tokens: TokenResponse;
  try {
    tokens = await clientCredentialsToken(
      {
        tokenUrl,
        client: { clientId: input.clientId, clientSecret: input.clientSecret },
        authMethod: opts.clientAuthMethod,
      },
      scopes,
      opts.scopeSeparator,
    );
  } catch (error) {
    if (error instanceof TokenEndpointError && error.kind === 'rejected') {
      throw invalidCredential(
        'oauth2ClientCredentials',
        `${provider.name} refused these client credentials: ${error.message}`,
      );
    }
    if (error instanceof TokenEndpointError) throw ProblemError.badGateway(error.message);
    throw error;
  }
  const facts = tokenFacts(provider, tokens, scopes);
  return {
    credentials: {
      kind: 'oauth2ClientCredentials',
      clientId: input.clientId,
      clientSecret: input.clientSecret,
      accessToken: tokens.accessToken,
      tokenType: tokens.tokenType,
    },
    scopes: facts.scopes,
    accessTokenIssuedAt: facts.accessTokenIssuedAt,
    accessTokenExpiresAt: facts.accessTokenExpiresAt,
    providerConsumerRef: facts.providerConsumerRef,
    providerWorkspaceRef: facts.providerWorkspaceRef,
    tokenMetadata: facts.providerMetadata,
  };
}

function importedAuthorizationCode(
  input: NonNullable<GenerateConnectionInput['oauth2AuthorizationCode']>,
): GeneratedCredentials {
  const access = importedToken(input.accessToken);
  const refresh = input.refreshToken ? importedToken(input.refreshToken) : undefined;
  if (access.issuedAt && access.expiresAt && access.expiresAt <= access.issuedAt) {
    throw invalidCredential(
      'oauth2AuthorizationCode.accessToken.expiresAt',
      'expiresAt must be after issuedAt',
      access.expiresAt.toISOString(),
    );
  }
  return {
    credentials: { kind: 'oauth2AuthorizationCode', accessToken: access.token, refreshToken: refresh?.token },
    scopes: input.scopes ?? [],
    accessTokenIssuedAt: access.issuedAt ?? new Date(),
    accessTokenExpiresAt: access.expiresAt,
    refreshTokenIssuedAt: refresh ? (refresh.issuedAt ?? new Date()) : undefined,
  };
}

/**
 * `POST connections:generate`: a connection from credentials the caller already has. Client
 * credentials are exchanged for a token first, so a connection is only saved when they work.
 */
export async function generateConnection(
  em: EntityManager,
  projectId: string,
  input: GenerateConnectionInput,
): Promise<{ connection: Connection; created: boolean }> {
  const provider = getProvider(input.provider);
  if (!provider) {
    throw invalidCredential(
      'provider',
      `"${input.provider}" is not a provider in Ferry’s catalog`,
      input.provider,
    );
  }
  const given = credentialFields.filter((field) => input[field] !== undefined);
  const accepted = acceptedCredentialFields(provider);
  if (given.length !== 1) {
    throw ProblemError.invalid(
      (given.length ? given : ['credentials']).map((field) => ({
        in: 'body' as const,
        name: field,
        detail: `give exactly one of ${credentialFields.join(', ')}; ${provider.name} accepts ${accepted.join(' or ') || 'none of them'}`,
      })),
    );
  }
  const field = given[0];
  if (!accepted.includes(field)) {
    throw invalidCredential(
      field,
      `${provider.name} authenticates with ${provider.authType}${provider.oauth2Opts ? ` (${provider.oauth2Opts.grantType})` : ''}; give ${accepted.join(' or ') || 'nothing: Ferry cannot hold its credentials yet'}`,
    );
  }
  const metadata = normaliseProviderMetadata(input.providerMetadata);
  checkTemplateValues(provider, metadata);
  const vars = templateVars(provider, {
    providerWorkspaceRef: input.providerWorkspaceRef,
    providerMetadata: metadata,
  });

  let generated: GeneratedCredentials;
  let providerAppId: string | undefined;
  switch (field) {
    case 'apiKey':
      generated = { credentials: { kind: 'apiKey', apiKey: input.apiKey! }, scopes: [] };
      break;
    case 'basicAuth':
      generated = { credentials: { kind: 'basic', ...input.basicAuth! }, scopes: [] };
      break;
    case 'oauth2ClientCredentials':
      generated = await clientCredentialsConnection(provider, input.oauth2ClientCredentials!, vars);
      break;
    case 'oauth2AuthorizationCode':
      generated = importedAuthorizationCode(input.oauth2AuthorizationCode!);
      // The project's app for the provider is what can refresh these tokens later.
      providerAppId = (await defaultProviderApp(em, projectId, provider.name))?.id;
      break;
  }
  const { tokenMetadata, providerConsumerRef, providerWorkspaceRef, ...credentialColumns } = generated;
  return em.transactional(async (tx) => {
    const group = await ensureGroup(tx, projectId, input.groupRef, input.groupName);
    const consumer = await ensureConsumer(tx, projectId, input.consumerRef, input.consumerName);
    return saveConnection(tx, projectId, {
      provider: provider.name,
      group,
      consumer,
      providerAppId,
      providerWorkspaceRef: input.providerWorkspaceRef ?? providerWorkspaceRef,
      providerConsumerRef,
      providerMetadata: { ...tokenMetadata, ...metadata },
      ...credentialColumns,
    });
  });
}

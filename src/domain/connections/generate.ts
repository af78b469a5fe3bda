import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../../core/problem.js';
import { ConsumerEntity, GroupEntity, type Connection } from '../../db/entities/connection.js';
import {
  acceptedCredentialKinds,
  authMethodFor,
  authMethods,
  credentialKinds,
  describeAuthMethod,
  providerWithAuthMethod,
  type CredentialKind,
} from '../../providers/catalog/auth-methods.js';
import { getProvider, templateVariables, type Provider } from '../../providers/catalog/index.js';
import {
  clientCredentialsToken,
  TokenEndpointError,
  type TokenResponse,
} from '../../providers/oauth-client.js';
import {
  rotatableCredentials,
  type GenerateConnectionInput,
  type ProviderMetadata,
  type TokenInputValue,
  type UpdateConnectionInput,
} from '../../schemas/connections.js';
import { InvalidPrivateKeyError, parseRsaPrivateKey } from '../../providers/jwt-assertion.js';
import { ensureConsumer, ensureGroup } from '../groups.js';
import { requestJwtBearerToken } from './jwt-bearer.js';
import { requestPasswordToken } from './password-grant.js';
import { isSendableHeaderValue } from '../../core/header-values.js';
import { defaultProviderApp } from '../provider-apps.js';
import {
  checkTemplateValues,
  normaliseProviderMetadata,
  renderProviderUrl,
  templateVars,
} from './provider-metadata.js';
import { tokenFacts, type TokenFacts } from './token-facts.js';
import { saveConnection, type ConnectionWrite } from './writes.js';

/**
 * Connections from credentials the caller already holds, rather than from the OAuth flow: which
 * credential kinds a provider accepts (those of its main auth method and of its alternatives, one
 * method per kind), and how each becomes stored credentials. The stored kind (the connection's
 * `authScheme`) is what later says which method the connection uses.
 */

const credentialFields = credentialKinds;
type CredentialField = CredentialKind;

function invalidCredential(field: string, detail: string, value?: unknown): ProblemError {
  return ProblemError.invalid([{ in: 'body', name: field, detail, ...(value !== undefined && { value }) }]);
}

/** What the provider takes, for messages: each accepted kind with the method that takes it. */
function acceptedDescription(provider: Provider): string {
  const accepted = acceptedCredentialKinds(provider).map(
    (kind) => `${kind} (${describeAuthMethod(authMethodFor(provider, kind)!)})`,
  );
  return accepted.length ? accepted.join(', ') : 'nothing: Ferry cannot hold its credentials yet';
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
  | 'credentials'
  | 'scopes'
  | 'accessTokenIssuedAt'
  | 'accessTokenExpiresAt'
  | 'refreshTokenIssuedAt'
  | 'refreshTokenExpiresAt'
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
    throw tokenEndpointProblem(error, provider, 'oauth2ClientCredentials', 'these client credentials');
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
    ...grantedFields(facts),
  };
}

/** What a token fetched at connect time fills on the connection, whichever grant fetched it. */
function grantedFields(facts: TokenFacts) {
  return {
    scopes: facts.scopes,
    accessTokenIssuedAt: facts.accessTokenIssuedAt,
    accessTokenExpiresAt: facts.accessTokenExpiresAt,
    refreshTokenIssuedAt: facts.refreshTokenIssuedAt,
    refreshTokenExpiresAt: facts.refreshTokenExpiresAt,
    providerConsumerRef: facts.providerConsumerRef,
    providerWorkspaceRef: facts.providerWorkspaceRef,
    tokenMetadata: facts.providerMetadata,
  };
}

/** The provider refused (400, the caller's credentials) or could not be reached (502). */
function tokenEndpointProblem(error: unknown, provider: Provider, field: string, what: string): unknown {
  if (error instanceof TokenEndpointError && error.kind === 'rejected') {
    return invalidCredential(field, `${provider.name} refused ${what}: ${error.message}`);
  }
  if (error instanceof TokenEndpointError) return ProblemError.badGateway(error.message);
  return error;
}

/**
 * A JWT bearer connection (RFC 7523): the key is checked, an assertion signed and exchanged now, and
 * the connection saved only when the provider issues a token. The key is never echoed back.
 */
async function jwtConnection(
  provider: Provider,
  input: NonNullable<GenerateConnectionInput['jwt']>,
  vars: Record<string, string>,
): Promise<GeneratedCredentials> {
  const opts = provider.jwtOpts!;
  const issues = [];
  try {
    parseRsaPrivateKey(input.privateKey);
  } catch (error) {
    if (!(error instanceof InvalidPrivateKeyError)) throw error;
    issues.push({ in: 'body' as const, name: 'jwt.privateKey', detail: `jwt.privateKey ${error.message}` });
  }
  if (opts.subjectRequired && !input.subject) {
    issues.push({
      in: 'body' as const,
      name: 'jwt.subject',
      detail: `jwt.subject is required: ${provider.name} needs the user the service acts as`,
    });
  }
  if (issues.length) throw ProblemError.invalid(issues);
  const scopes = input.scopes ?? opts.defaultScopes ?? [];
  const identity = {
    privateKey: input.privateKey,
    issuer: input.issuer,
    subject: input.subject,
    keyId: input.keyId,
  };
  let tokens: TokenResponse;
  try {
    tokens = await requestJwtBearerToken(provider, vars, identity, scopes);
  } catch (error) {
    throw tokenEndpointProblem(error, provider, 'jwt', 'the signed assertion');
  }
  const facts = tokenFacts(provider, tokens, scopes);
  return {
    credentials: {
      kind: 'jwtBearer',
      ...identity,
      accessToken: tokens.accessToken,
      tokenType: tokens.tokenType,
    },
    ...grantedFields(facts),
  };
}

/** A password-grant connection: a token is fetched now, and the connection saved only if it comes. */
async function passwordConnection(
  provider: Provider,
  input: NonNullable<GenerateConnectionInput['oauth2Password']>,
  vars: Record<string, string>,
): Promise<GeneratedCredentials> {
  const scopes = input.scopes ?? provider.oauth2Opts?.defaultScopes ?? [];
  const identity = {
    username: input.username,
    password: input.password,
    clientId: input.clientId,
    clientSecret: input.clientSecret,
  };
  let tokens: TokenResponse;
  try {
    tokens = await requestPasswordToken(provider, vars, identity, scopes);
  } catch (error) {
    throw tokenEndpointProblem(error, provider, 'oauth2Password', 'this username and password');
  }
  const facts = tokenFacts(provider, tokens, scopes);
  return {
    credentials: {
      kind: 'oauth2Password',
      ...identity,
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      tokenType: tokens.tokenType,
    },
    ...grantedFields(facts),
  };
}

/** A value for each of the provider's custom inputs, and nothing else; none may break a header. */
function customCredentials(provider: Provider, values: Record<string, string>): GeneratedCredentials {
  const inputs = provider.customOpts?.inputs ?? [];
  const known = new Set(inputs.map((input) => input.name));
  const inHeaders = new Set(
    (provider.customOpts?.headers ?? []).flatMap((header) => templateVariables(header.valueTemplate)),
  );
  // Query values are encoded; header values must be sendable as they are.
  const fitsWhereUsed = (name: string, value: string) =>
    inHeaders.has(name) ? isSendableHeaderValue(value) : !/[\r\n\0]/.test(value);
  const issues = [
    ...inputs
      .filter((input) => !values[input.name])
      .map((input) => ({
        in: 'body' as const,
        name: `customAuth.${input.name}`,
        detail: `customAuth.${input.name} is required: ${input.displayName}`,
      })),
    ...Object.keys(values)
      .filter((name) => !known.has(name))
      .map((name) => ({
        in: 'body' as const,
        name: `customAuth.${name}`,
        detail: `customAuth.${name} is not an input of ${provider.name} (its inputs: ${[...known].join(', ') || 'none'})`,
      })),
    ...Object.entries(values)
      .filter(([name, value]) => known.has(name) && !fitsWhereUsed(name, value))
      .map(([name]) => ({
        in: 'body' as const,
        name: `customAuth.${name}`,
        detail: inHeaders.has(name)
          ? `customAuth.${name} goes into an HTTP header: printable characters only, no line breaks`
          : `customAuth.${name} may not contain line breaks or NUL characters`,
      })),
  ];
  if (issues.length) throw ProblemError.invalid(issues);
  return { credentials: { kind: 'custom', values: { ...values } }, scopes: [] };
}

function importedAuthorizationCode(
  input: NonNullable<GenerateConnectionInput['oauth2AuthorizationCode']>,
): GeneratedCredentials {
  const access = importedToken(input.accessToken);
  const refresh = input.refreshToken ? importedToken(input.refreshToken) : undefined;
  const now = new Date();
  if (access.issuedAt && access.expiresAt && access.expiresAt <= access.issuedAt) {
    throw invalidCredential(
      'oauth2AuthorizationCode.accessToken.expiresAt',
      'expiresAt must be after issuedAt',
      access.expiresAt.toISOString(),
    );
  }
  // An access token may arrive expired (it is refreshed on first use); a refresh token may not.
  if (
    refresh?.expiresAt &&
    (refresh.expiresAt <= now || (refresh.issuedAt && refresh.expiresAt <= refresh.issuedAt))
  ) {
    throw invalidCredential(
      'oauth2AuthorizationCode.refreshToken.expiresAt',
      refresh.expiresAt <= now ? 'expiresAt must be in the future' : 'expiresAt must be after issuedAt',
      refresh.expiresAt.toISOString(),
    );
  }
  return {
    credentials: { kind: 'oauth2AuthorizationCode', accessToken: access.token, refreshToken: refresh?.token },
    scopes: input.scopes ?? [],
    accessTokenIssuedAt: access.issuedAt ?? now,
    accessTokenExpiresAt: access.expiresAt,
    refreshTokenIssuedAt: refresh ? (refresh.issuedAt ?? now) : undefined,
    refreshTokenExpiresAt: refresh?.expiresAt,
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
  const catalogProvider = getProvider(input.provider);
  if (!catalogProvider) {
    throw invalidCredential(
      'provider',
      `"${input.provider}" is not a provider in Ferry’s catalog`,
      input.provider,
    );
  }
  let provider = catalogProvider;
  const given = credentialFields.filter((field) => input[field] !== undefined);
  const accepted = acceptedCredentialKinds(provider);
  if (provider.authType === 'none' && given.length > 0) {
    throw ProblemError.invalid(
      given.map((field) => ({
        in: 'body' as const,
        name: field,
        detail: `${provider.name} needs no credentials (authType none); leave ${field} out`,
      })),
    );
  }
  if (provider.authType !== 'none' && given.length !== 1) {
    throw ProblemError.invalid(
      (given.length ? given : ['credentials']).map((field) => ({
        in: 'body' as const,
        name: field,
        detail: `give exactly one of ${credentialFields.join(', ')}; ${provider.name} accepts ${accepted.length ? acceptedDescription(provider) : 'none of them'}`,
      })),
    );
  }
  const field: CredentialField | undefined = given[0];
  if (field && !accepted.includes(field)) {
    throw invalidCredential(
      field,
      `${provider.name} takes no ${field}; it authenticates with ${authMethods(catalogProvider)
        .map(describeAuthMethod)
        .join(' or ')}: give ${acceptedDescription(provider)}`,
    );
  }
  // From here on the provider is as the chosen method sees it: its token URL, its options.
  const method = field ? authMethodFor(provider, field) : undefined;
  if (method) provider = providerWithAuthMethod(catalogProvider, method);
  const metadata = normaliseProviderMetadata(input.providerMetadata);
  checkTemplateValues(provider, metadata);
  const vars = templateVars(provider, {
    providerWorkspaceRef: input.providerWorkspaceRef,
    providerMetadata: metadata,
  });

  let generated: GeneratedCredentials;
  let providerAppId: string | undefined;
  switch (field) {
    case undefined:
      generated = { credentials: { kind: 'none' }, scopes: [] };
      break;
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
    case 'oauth2Password':
      generated = await passwordConnection(provider, input.oauth2Password!, vars);
      break;
    case 'jwt':
      generated = await jwtConnection(provider, input.jwt!, vars);
      break;
    case 'customAuth':
      generated = customCredentials(provider, input.customAuth!);
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

/**
 * `PATCH connections/{id}` with `apiKey`, `basicAuth` or `oauth2ClientCredentials` in its mask: new
 * credentials for the connection, checked as `connections:generate` checks them (client credentials
 * must fetch a token), keeping its group, consumer, workspace and metadata. The connection is back to
 * `working`. Returns it unchanged when the mask names no credential.
 */
export async function rotateConnectionCredentials(
  em: EntityManager,
  connection: Connection,
  input: UpdateConnectionInput,
): Promise<Connection> {
  const named = rotatableCredentials.filter((field) => input.updateMask.includes(field));
  if (named.length === 0) return connection;
  const missing = named.filter((field) => input.connection[field] === undefined);
  if (named.length > 1 || missing.length) {
    throw ProblemError.invalid(
      (missing.length ? missing : named).map((field) => ({
        in: 'body' as const,
        name: `connection.${field}`,
        detail: missing.length
          ? `connection.${field} is named by updateMask but not given`
          : 'updateMask may name one credential at a time',
      })),
    );
  }
  const group = await em.findOneOrFail(GroupEntity, { id: connection.groupId });
  const consumer = await em.findOneOrFail(ConsumerEntity, { id: connection.consumerId });
  const { connection: renewed } = await generateConnection(em, connection.projectId, {
    provider: connection.provider,
    groupRef: group.groupRef,
    consumerRef: consumer.consumerRef,
    ...(connection.providerWorkspaceRef && { providerWorkspaceRef: connection.providerWorkspaceRef }),
    providerMetadata: connection.providerMetadata as ProviderMetadata,
    [named[0]]: input.connection[named[0]],
  });
  return renewed;
}

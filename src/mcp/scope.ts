import type { EntityManager } from '@mikro-orm/postgresql';
import { canonicalName } from '../core/names.js';
import type { Principal } from '../core/principal.js';
import { ProblemError, type ProblemIssue } from '../core/problem.js';
import { hashToken } from '../crypto/secrets.js';
import type { Installation } from '../db/entities/installation.js';
import { resolveProject } from '../domain/project-access.js';
import type { Config } from '../config.js';
import { verifyProjectJwt } from '../domain/project-jwt.js';
import { findInstallationForGroup } from '../domain/reads/installation-context.js';
import { authenticateApiKey } from '../api/auth.js';

/**
 * What an MCP session may touch: one project, one integration and one group, hence that group's one
 * installation. Chosen when the session opens and never widened; every later request of the session
 * must present the same credential, checked again (a revoked key or an expired token ends access).
 */

export interface SessionTarget {
  project?: string;
  integration?: string;
  groupRef?: string;
}

export interface SessionCredentials {
  /** A full-scope API key of the project (`X-Api-Key`, or `apiKey` in the query). */
  apiKey?: string;
  /** A project JWT minted for the group (`Authorization: Bearer`, RS256 with a `groupRef` claim). */
  bearer?: string;
}

export interface McpScope {
  projectId: string;
  projectName: string;
  integrationId: string;
  integrationName: string;
  groupRef: string;
  /** Who opened the session, for the operations it records (never the credential itself). */
  caller: { kind: 'apiKey'; apiKeyId: string } | { kind: 'projectJwt'; keyId: string; subject?: string };
  /** The credential's hash: later requests of the session must present the same one. */
  credentialHash: string;
}

/** Where each part of the target is given, for messages that name what to send. */
export const targetSources = {
  project: '`project` query parameter or `X-Ferry-Project` header',
  integration: '`integration` query parameter or `X-Ferry-Integration` header',
  groupRef: '`groupRef` query parameter or `X-Ferry-Group-Ref` header',
} as const;

function missingTarget(target: SessionTarget): ProblemIssue[] {
  return (Object.keys(targetSources) as (keyof SessionTarget)[])
    .filter((name) => !target[name]?.trim())
    .map((name) => ({
      in: 'query',
      name,
      detail: `${name} is required: an MCP session acts for one project, integration and group (${targetSources[name]})`,
    }));
}

/** What checking a session's credential needs of the settings (a project JWT's longest lifetime). */
type ScopeSettings = Pick<Config, 'projectJwtMaxLifetimeSeconds'>;

/** The principal of the credential, refusing what may not open a session here. */
async function principalOf(
  em: EntityManager,
  credentials: SessionCredentials,
  groupRef: string,
  settings: ScopeSettings,
): Promise<Principal & { kind: 'apiKey' | 'projectJwt' }> {
  if (credentials.apiKey) {
    const principal = await authenticateApiKey(credentials.apiKey, em);
    if (principal.kind !== 'apiKey') throw ProblemError.unauthorized('The API key is not valid.');
    if (principal.frontendOnly) {
      throw new ProblemError({
        status: 403,
        detail: 'This API key has only the frontend scope: it opens no MCP session.',
        remedy: 'Use a full-scope API key, or a project JWT minted for the group (a `groupRef` claim).',
        retryable: false,
      });
    }
    return principal;
  }
  if (credentials.bearer) {
    const principal = await verifyProjectJwt(credentials.bearer, em, settings);
    if (!principal || principal.kind !== 'projectJwt') {
      throw ProblemError.unauthorized(
        'The bearer token is not a project JWT; send an API key, or a project JWT signed with one of the project’s JWT keys.',
      );
    }
    if (principal.groupRef === undefined) {
      throw new ProblemError({
        status: 403,
        detail:
          'A project JWT opens an MCP session only for the group it names: mint it with a `groupRef` claim.',
        retryable: false,
      });
    }
    if (principal.groupRef !== groupRef) {
      throw new ProblemError({
        status: 403,
        detail: `This token acts for group "${principal.groupRef}", not "${groupRef}".`,
        retryable: false,
      });
    }
    return principal;
  }
  throw ProblemError.unauthorized(
    'Send an API key (`X-Api-Key` header, or `apiKey` query parameter) or a group-scoped project JWT (`Authorization: Bearer`).',
  );
}

/** Authenticates a new session and binds it to its target; a problem (401/403/404/400) otherwise. */
export async function openScope(
  em: EntityManager,
  target: SessionTarget,
  credentials: SessionCredentials,
  settings: ScopeSettings,
): Promise<McpScope> {
  const missing = missingTarget(target);
  if (missing.length) throw ProblemError.invalid(missing, 'The MCP session names no target.');
  const groupRef = canonicalName(target.groupRef!.trim());
  const principal = await principalOf(em, credentials, groupRef, settings);
  // Another project's key or token finds nothing: the same 404 as a project that does not exist.
  const project = await resolveProject(principal, target.project!.trim(), em, { plain: true });
  const { integration } = await findInstallationForGroup(
    em,
    project.id,
    target.integration!.trim(),
    groupRef,
  );
  return {
    projectId: project.id,
    projectName: project.name,
    integrationId: integration.id,
    integrationName: integration.name,
    groupRef,
    caller:
      principal.kind === 'apiKey'
        ? { kind: 'apiKey', apiKeyId: principal.apiKeyId }
        : {
            kind: 'projectJwt',
            keyId: principal.keyId,
            ...(principal.subject !== undefined && { subject: principal.subject }),
          },
    credentialHash: hashToken(credentials.apiKey ?? credentials.bearer!),
  };
}

/**
 * Checks a later request of an open session: the same credential as the one that opened it, still
 * valid (a deactivated key, an expired token: 401).
 */
export async function confirmScope(
  em: EntityManager,
  scope: McpScope,
  credentials: SessionCredentials,
  settings: ScopeSettings,
): Promise<void> {
  const credential = credentials.apiKey ?? credentials.bearer;
  if (!credential || hashToken(credential) !== scope.credentialHash) {
    throw new ProblemError({
      status: 403,
      detail: 'This MCP session was opened with another credential; send the one that opened it.',
      retryable: false,
    });
  }
  await principalOf(em, credentials, scope.groupRef, settings);
}

/** The session's installation as it is now (it may have been reinstalled or removed since the session opened). */
export async function currentInstallation(em: EntityManager, scope: McpScope): Promise<Installation> {
  return (await findInstallationForGroup(em, scope.projectId, scope.integrationId, scope.groupRef))
    .installation;
}

import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../../core/problem.js';
import { InstallationConfigEntity, type Installation } from '../../db/entities/installation.js';
import { findInstallation } from '../../domain/installations/lookups.js';
import { findInstallationForGroup } from '../../domain/reads/installation-context.js';
import { refuseFrontendKey } from '../../core/principal.js';
import { authenticateApiKey } from '../auth.js';
import type { ProxyHeaders } from './headers.js';

/**
 * Who may proxy through which installation: the API key must belong to the project the request
 * names, the installation must be that project's, and its config must enable the proxy.
 */
export async function resolveProxyInstallation(
  em: EntityManager,
  headers: ProxyHeaders,
): Promise<Installation> {
  const principal = await authenticateApiKey(headers.apiKey, em);
  if (principal.kind !== 'apiKey' || principal.projectId !== headers.projectId) {
    throw new ProblemError({
      status: 403,
      detail: 'The API key does not belong to the project in x-amp-project-id.',
    });
  }
  refuseFrontendKey(principal);
  const installation = headers.installationId
    ? await findInstallation(em, headers.projectId, headers.installationId)
    : (await findInstallationForGroup(em, headers.projectId, headers.integrationName!, headers.groupRef!))
        .installation;
  await assertProxyEnabled(em, installation);
  return installation;
}

/** 403 unless the installation's config enables the proxy (`config.content.proxy.enabled`). */
export async function assertProxyEnabled(em: EntityManager, installation: Installation): Promise<void> {
  const config = await em.findOne(InstallationConfigEntity, { id: installation.configId });
  const proxy = config?.content.proxy as { enabled?: unknown } | undefined;
  if (proxy?.enabled !== true) {
    throw new ProblemError({
      status: 403,
      detail: `The proxy is not enabled for installation "${installation.id}".`,
      remedy:
        'Set config.content.proxy.enabled to true on the installation (the integration must offer proxy).',
      retryable: false,
    });
  }
}

import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../core/problem.js';
import { InstallationConfigEntity, type Installation } from '../db/entities/installation.js';
import { RevisionEntity } from '../db/entities/integration.js';
import { readPlan } from '../domain/installations/read-plan.js';
import type { InstallationConfigContent, WriteConfig } from '../schemas/installations.js';
import type { IntegrationContent } from '../schemas/integration-content.js';

/**
 * The objects an agent may touch through one installation, from its current config: those it reads
 * (by provider name or `mapToName`), those it writes (with or without deletes), and whether its
 * config enables the proxy. Anything else is "not in the installation".
 */

export interface InstallationObjects {
  provider: string;
  read: { objectName: string; mapToName?: string }[];
  write: { objectName: string; deletes: boolean }[];
  proxyEnabled: boolean;
}

export async function installationObjects(
  em: EntityManager,
  installation: Installation,
): Promise<InstallationObjects> {
  const config = await em.findOneOrFail(InstallationConfigEntity, { id: installation.configId });
  const revision = await em.findOneOrFail(RevisionEntity, { id: config.revisionId });
  const content = config.content as unknown as InstallationConfigContent;
  const manifest = revision.content as IntegrationContent;
  const declared = new Map((manifest.read?.objects ?? []).map((object) => [object.objectName, object]));
  const writes = Object.entries(content.write?.objects ?? {}) as [string, WriteConfig][];
  return {
    provider: content.provider,
    read: readPlan(content, manifest).map(({ objectName }) => {
      const mapToName = declared.get(objectName)?.mapToName;
      return { objectName, ...(mapToName && { mapToName }) };
    }),
    write: writes.map(([objectName, object]) => ({
      objectName,
      deletes: object.deletionSettings?.enabled === true,
    })),
    proxyEnabled: (content.proxy as { enabled?: unknown } | undefined)?.enabled === true,
  };
}

/** The provider's name of an object of the installation (read or written), or a 404 naming those it has. */
export function objectOfInstallation(objects: InstallationObjects, name: string): string {
  const read = objects.read.find((object) => object.objectName === name || object.mapToName === name);
  if (read) return read.objectName;
  if (objects.write.some((object) => object.objectName === name)) return name;
  throw notInInstallation(objects, name);
}

export function notInInstallation(objects: InstallationObjects, name: string): ProblemError {
  const names = [
    ...new Set([
      ...objects.read.map((object) => object.mapToName ?? object.objectName),
      ...objects.write.map((object) => object.objectName),
    ]),
  ];
  return ProblemError.notFound(
    `Object "${name}" is not in this installation.`,
    names.length
      ? `Use one of: ${names.join(', ')} (list_objects says what each allows).`
      : 'This installation reads and writes no objects.',
  );
}

import type { EntityManager } from '@mikro-orm/postgresql';
import { defineRoute } from './route.js';
import { ProblemError } from '../core/problem.js';
import { ConfigContentParams, ConfigContentPatchBody, InstallationSchema } from '../schemas/installations.js';
import { GroupEntity } from '../db/entities/connection.js';
import { InstallationEntity, type Installation } from '../db/entities/installation.js';
import { RevisionEntity, type Integration } from '../db/entities/integration.js';
import { findIntegration } from '../domain/integrations.js';
import { changeInstallationConfig } from '../domain/installations/lifecycle.js';
import { findInstallation } from '../domain/installations/lookups.js';
import { manifestObjectNames } from '../domain/installations/config-validation.js';
import { currentConfig } from '../domain/installations/event-data.js';
import { patchObjectConfig } from '../domain/installations/json-patch.js';

/** The installation a config-content patch names by `installationId` or by `groupRef` (both must agree). */
async function targetInstallation(
  em: EntityManager,
  projectId: string,
  integration: Integration,
  body: { groupRef?: string; installationId?: string },
): Promise<Installation> {
  if (body.installationId === undefined && body.groupRef === undefined) {
    throw ProblemError.invalid([
      {
        in: 'body',
        name: 'groupRef',
        detail: 'groupRef or installationId is required to name the installation',
      },
    ]);
  }
  let installation: Installation | null = null;
  if (body.installationId !== undefined) {
    installation = await findInstallation(em, projectId, body.installationId, integration.id);
  }
  if (body.groupRef !== undefined) {
    const group = await em.findOne(GroupEntity, { projectId, groupRef: body.groupRef });
    const byGroup =
      group && (await em.findOne(InstallationEntity, { integrationId: integration.id, groupId: group.id }));
    if (!byGroup) {
      throw ProblemError.notFound(
        `Group "${body.groupRef}" has no installation of integration "${integration.name}".`,
      );
    }
    if (installation && installation.id !== byGroup.id) {
      throw ProblemError.invalid([
        {
          in: 'body',
          name: 'installationId',
          value: body.installationId,
          detail: `installationId is not the installation of group "${body.groupRef}"`,
        },
      ]);
    }
    installation = byGroup;
  }
  return installation!;
}

export const configContentRoutes = [
  defineRoute({
    method: 'PATCH',
    path: '/projects/{projectIdOrName}/integrations/{integrationId}/objects/{objectName}/config-content',
    operationId: 'patchObjectConfigContent',
    summary: 'Patch one object’s config inside an installation (JSON Patch)',
    description:
      '`changes` are JSON Patch operations (RFC 6902) on the object config at `config.content.{action}.objects.{objectName}` (an absent one starts as `{objectName}`), e.g. `{"op":"replace","path":"/schedule","value":"0 * * * *"}` or `{"op":"add","path":"/selectedFields/email","value":true}`. They apply atomically: if one fails, or the resulting config is invalid, nothing changes. `objectName` must be declared in the manifest for `action`.',
    tags: ['Installations'],
    auth: ['apiKey', 'bearer'],
    params: ConfigContentParams,
    body: ConfigContentPatchBody,
    responses: { 200: { description: 'The updated installation', schema: InstallationSchema } },
  }).handle(async ({ em, project, params, body, principal, settings }) => {
    const integration = await findIntegration(em, project.id, params.integrationId);
    const installation = await targetInstallation(em, project.id, integration, body);
    const config = await currentConfig(em, installation);
    const revision = await em.findOneOrFail(RevisionEntity, { id: config.revisionId });
    const declared = manifestObjectNames(revision.content, body.action);
    if (!declared.includes(params.objectName)) {
      throw ProblemError.invalid([
        {
          in: 'path',
          name: 'objectName',
          value: params.objectName,
          detail: `objectName "${params.objectName}" is not declared for ${body.action} in the integration's manifest${declared.length ? ` (declared: ${declared.join(', ')})` : ''}`,
        },
      ]);
    }
    const view = await changeInstallationConfig(
      em,
      project,
      integration,
      installation.id,
      principal,
      {
        change: async (current) => {
          const objects = (current.content[body.action]?.objects ?? {}) as Record<
            string,
            Record<string, unknown>
          >;
          const patched = patchObjectConfig(
            objects[params.objectName] ?? { objectName: params.objectName },
            body.changes,
          );
          return {
            revisionId: current.revisionId,
            content: {
              ...current.content,
              [body.action]: {
                ...current.content[body.action],
                objects: { ...objects, [params.objectName]: patched },
              },
            },
          };
        },
      },
      settings,
    );
    return { status: 200, body: view };
  }),
];

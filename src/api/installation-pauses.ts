import { defineRoute, type AnyRoute } from './route.js';
import { ProblemError } from '../core/problem.js';
import { InstallationParams, PauseBody } from '../schemas/installations.js';
import { findIntegration } from '../domain/integrations.js';
import { findInstallation, plannedReadObjects } from '../domain/installations/lookups.js';
import { pauseInstallation, resumeInstallation } from '../domain/installations/workflow.js';

/**
 * Pause and unpause send the workflow's `pause` / `resume` Signals, exactly what an operator sends
 * from the Temporal UI, so both paths have one effect. Names are checked here first, since the
 * workflow ignores names it does not know (a Signal cannot answer).
 */
function pauseRoute(kind: 'pause' | 'unpause'): AnyRoute {
  return defineRoute({
    method: 'POST',
    path: `/projects/{projectIdOrName}/integrations/{integrationId}/installations/{installationId}:${kind}`,
    operationId: kind === 'pause' ? 'pauseInstallationReads' : 'unpauseInstallationReads',
    summary: kind === 'pause' ? 'Pause scheduled reads' : 'Resume paused reads',
    description:
      kind === 'pause'
        ? 'Stops new reads of the named objects (all when `objects` is omitted); a read in progress finishes. Triggered reads wait until resumed.'
        : 'Resumes the named objects (all when `objects` is omitted); the next read is planned from now, missed fires are not replayed.',
    tags: ['Installations'],
    hosts: ['read'],
    auth: ['apiKey', 'bearer'],
    params: InstallationParams,
    body: PauseBody,
    responses: { 204: { description: kind === 'pause' ? 'Paused' : 'Resumed' } },
  }).handle(async ({ em, project, params, body }) => {
    const integration = await findIntegration(em, project.id, params.integrationId);
    const installation = await findInstallation(em, project.id, params.installationId, integration.id);
    if (body.objects?.length) {
      const known = new Set(await plannedReadObjects(em, installation));
      const unknown = body.objects.filter((name) => !known.has(name));
      if (unknown.length) {
        throw ProblemError.invalid(
          unknown.map((name) => ({
            in: 'body' as const,
            name: 'objects',
            value: name,
            detail: `"${name}" is not an object this installation reads (reads: ${[...known].join(', ') || 'none'})`,
          })),
        );
      }
    }
    if (kind === 'pause') {
      await pauseInstallation(em, installation.id, {
        ...(body.objects && { objects: body.objects }),
        ...(body.note !== undefined && { note: body.note }),
      });
    } else {
      await resumeInstallation(em, installation.id, {
        ...(body.objects && { objects: body.objects }),
      });
    }
    return { status: 204 };
  });
}

export const installationPauseRoutes = [pauseRoute('pause'), pauseRoute('unpause')];

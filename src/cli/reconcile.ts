import { parseArgs } from 'node:util';
import { closeOrm, em as newEntityManager } from '../db/orm.js';
import { closeTemporalClient } from '../temporal/client.js';
import { findProject } from '../domain/project-access.js';
import { reconcileInstallations } from '../domain/installations/reconcile.js';

/** `ferry reconcile [--project <idOrName>]`: prints the result as JSON. */
export async function reconcileCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { project: { type: 'string' } }, strict: true });
  try {
    let projectId: string | undefined;
    if (values.project) {
      const project = await findProject(await newEntityManager(), values.project);
      if (!project) throw new Error(`project "${values.project}" was not found`);
      projectId = project.id;
    }
    const result = await reconcileInstallations({ projectId });
    process.stdout.write(`${JSON.stringify(result)}\n`);
    if (result.failed) process.exitCode = 1;
  } finally {
    await closeTemporalClient();
    await closeOrm();
  }
}

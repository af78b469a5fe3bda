import { transaction } from '../src/db/orm.js';
import { InstallationEntity } from '../src/db/entities/installation.js';
import { OperationEntity } from '../src/db/entities/operation.js';
import type { ReadObjectInput } from '../src/temporal/contracts/read.js';

/** The installation workflow's real activities, plus the bench read's one. */
export * from '../activities/installation.js';

/** Records the read as a finished operation, as a real read would, without calling a provider. */
export async function recordBenchRead(input: ReadObjectInput): Promise<void> {
  await transaction(async (em) => {
    const installation = await em.findOneOrFail(InstallationEntity, { id: input.installationId });
    if (await em.count(OperationEntity, { id: input.operationId })) return;
    const now = new Date();
    em.create(OperationEntity, {
      id: input.operationId,
      projectId: installation.projectId,
      integrationId: installation.integrationId,
      installationId: installation.id,
      configId: installation.configId,
      actionType: 'read',
      status: 'success',
      result: 'bench read: nothing read',
      metadata: { objects: [input.objectName], readType: input.readType },
      createTime: now,
      updateTime: now,
    });
  });
}

import { InstallationEntity } from '../../db/entities/installation.js';
import { transaction } from '../../db/orm.js';
import { recordEvent } from '../events.js';
import { installationEventBase, installationParties } from './installation-context.js';

/**
 * A read asked of the installation's workflow by a Signal that it could not run (an unknown object,
 * a window it refuses): `read.triggered.error` with the reason, so the one who asked hears of it.
 */
export async function recordIgnoredOperatorMessage(input: {
  installationId: string;
  message: 'triggerRead' | 'backfill' | 'pause' | 'resume';
  reason: string;
  objectName?: string;
}): Promise<void> {
  if (input.message !== 'triggerRead' && input.message !== 'backfill') return;
  await transaction(async (tx) => {
    const installation = await tx.findOne(InstallationEntity, { id: input.installationId });
    if (!installation) return;
    recordEvent(tx, installation.projectId, 'read.triggered.error', {
      ...installationEventBase(installation, await installationParties(tx, installation)),
      objectName: input.objectName ?? null,
      operationId: null,
      fromTimestamp: null,
      untilTimestamp: null,
      error: `The ${input.message} message was not acted on: ${input.reason}.`,
    });
  });
}

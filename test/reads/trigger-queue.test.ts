import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { transaction } from '../../src/db/orm.js';
import { InstallationEntity } from '../../src/db/entities/installation.js';
import { OperationEntity, type Operation } from '../../src/db/entities/operation.js';
import { createReadOperation } from '../../src/domain/reads/read-operation.js';
import { MAX_QUEUED_TRIGGERED_READS } from '../../src/domain/reads/requests.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { createReadFixture, type ReadFixture } from './fixtures.js';

/**
 * Triggered reads of one object wait in the installation workflow's state; past a cap a trigger is
 * refused with a 429 that says when to ask again, and leaves nothing behind.
 */

let stack: TestStack;
let fixture: ReadFixture;

beforeAll(async () => {
  stack = await startTestStack();
  fixture = await createReadFixture(stack);
});

afterAll(async () => {
  fixture?.receiver.stop();
  await stack?.close();
});

/** Records `count` triggered reads of the object, in progress, as triggers that were queued would be. */
async function queueTriggers(count: number, objectName = 'contacts', status = 'in_progress'): Promise<void> {
  await transaction(async (em) => {
    const installation = await em.findOneOrFail(InstallationEntity, { id: fixture.installationId });
    for (let index = 0; index < count; index++) {
      const operation = createReadOperation(em, installation, {
        operationId: randomUUID(),
        objectName,
        readType: 'triggered',
      });
      operation.status = status as Operation['status'];
    }
  });
}

const readsOf = async () =>
  transaction((em) => em.count(OperationEntity, { installationId: fixture.installationId }));

describe('a triggered read', () => {
  it('over the object’s queue cap is refused with 429, Retry-After and problem details, recording nothing', async () => {
    // Finished reads and another object's reads take no place in the queue.
    await queueTriggers(3, 'contacts', 'success');
    await queueTriggers(2, 'companies');
    await queueTriggers(MAX_QUEUED_TRIGGERED_READS);
    const before = await readsOf();
    const path = `/projects/${stack.project.id}/integrations/${fixture.integrationId}/objects/contacts`;
    const refused = await stack.read('POST', path, {
      body: { groupRef: fixture.groupRef, mode: 'async' },
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.body).toMatchObject({
      status: 429,
      detail: expect.stringContaining(`the most it queues (${MAX_QUEUED_TRIGGERED_READS})`),
      retryable: true,
    });
    expect(await readsOf()).toBe(before);
  });
});

import { config } from '../../src/config.js';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { em as newEntityManager, transaction } from '../../src/db/orm.js';
import { GroupEntity } from '../../src/db/entities/connection.js';
import { NotificationEventEntity } from '../../src/db/entities/event.js';
import { InstallationConfigEntity, InstallationEntity } from '../../src/db/entities/installation.js';
import { createIntegration } from '../../src/domain/integrations.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { temporalClient } from '../../src/temporal/client.js';
import { PublicApi } from '../support/public-api.js';
import { runAttributes } from '../support/run-attributes.js';
import type { TestStack } from '../support/stack.js';
import { generateConnection, startStackWithSandbox } from './api-helpers.js';

let stack: TestStack;
let sandbox: Sandbox;
let p: string;
let integrationName: string;
const groupRef = 'acme';

/** An installation writing deals (defaults, deletes enabled) and contacts, from rows written directly. */
async function createWriteInstallation(): Promise<void> {
  const connection = await generateConnection(stack, {
    provider: 'sandboxApiKey',
    groupRef,
    apiKey: 'sandbox-demo-key',
  });
  integrationName = `writes-${randomUUID().slice(0, 8)}`;
  await transaction(async (em) => {
    const { integration, revision } = await createIntegration(
      em,
      stack.project.id,
      {
        name: integrationName,
        provider: 'sandboxApiKey',
        specVersion: '1.0.0',
        content: {
          name: integrationName,
          provider: 'sandboxApiKey',
          write: { objects: [{ objectName: 'deals' }, { objectName: 'contacts' }] },
        },
      },
      config(),
    );
    const group = await em.findOneOrFail(GroupEntity, { projectId: stack.project.id, groupRef });
    const installationId = randomUUID();
    const configId = randomUUID();
    em.create(InstallationEntity, {
      id: installationId,
      projectId: stack.project.id,
      integrationId: integration.id,
      groupId: group.id,
      connectionId: connection.id,
      configId,
      createdBy: 'consumer:test',
      healthStatus: 'healthy',
      createTime: new Date(),
      updateTime: new Date(),
    });
    em.create(InstallationConfigEntity, {
      id: configId,
      projectId: stack.project.id,
      installationId,
      revisionId: revision.id,
      content: {
        provider: 'sandboxApiKey',
        write: {
          objects: {
            deals: {
              objectName: 'deals',
              selectedValueDefaults: {
                stage: { value: 'qualification', applyOnUpdate: 'never' },
                amount: { value: 100, applyOnUpdate: 'always' },
              },
              deletionSettings: { enabled: true },
            },
            contacts: { objectName: 'contacts' },
          },
        },
      },
      createdBy: 'builder:test',
      createTime: new Date(),
    });
  });
}

beforeAll(async () => {
  ({ stack, sandbox } = await startStackWithSandbox({ worker: true }));
  p = `/projects/${stack.project.name}`;
  await createWriteInstallation();
});
afterAll(async () => {
  await stack.close();
  await sandbox.close();
});

const writePath = (object: string, integration = integrationName) =>
  `${p}/integrations/${integration}/objects/${object}`;

async function operation(operationId: string) {
  return (await stack.api('GET', `${p}/operations/${operationId}`)).body;
}

async function waitForOperation(operationId: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = await operation(operationId);
    if (current.status !== 'in_progress') return current;
    if (Date.now() > deadline) throw new Error(`operation ${operationId} still in progress`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function asyncDoneEvent(operationId: string) {
  const em = await newEntityManager();
  const events = await em.find(NotificationEventEntity, {
    projectId: stack.project.id,
    type: 'write.async.done',
  });
  return events.find((event) => event.data.operationId === operationId);
}

describe('synchronous writes', () => {
  it('creates a record, filling defaults the record leaves out, and records the operation', async () => {
    const response = await stack.write('POST', writePath('deals'), {
      body: { groupRef, type: 'create', record: { name: 'Big deal', stage: 'proposal' } },
    });
    expect(response.status).toBe(200);
    const { operationId, result } = response.body;
    expect(result).toMatchObject({ success: true, recordId: expect.any(String) });
    expect(result.data).toMatchObject({
      id: result.recordId,
      name: 'Big deal',
      stage: 'proposal',
      amount: 100,
    });

    const op = await operation(operationId);
    expect(op).toMatchObject({
      actionType: 'write',
      status: 'success',
      result: 'Created 1 of 1 deals records',
      metadata: { objects: ['deals'], successfulRecordIds: [result.recordId] },
    });
    const logs = (await stack.api('GET', `${p}/operations/${operationId}/logs`)).body;
    expect(logs.map((log: { message: { msg: string } }) => log.message.msg)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^POST .*\/api\/v1\/deals → 201/),
        `Created deals record ${result.recordId}`,
      ]),
    );
    expect(JSON.stringify(logs)).not.toContain('sandbox-demo-key');
  });

  it('updates by record.id, applying only defaults marked applyOnUpdate: always', async () => {
    const created = await stack.write('POST', writePath('deals'), {
      body: { groupRef, type: 'create', record: { name: 'To update', amount: 5 } },
    });
    const id = created.body.result.recordId;
    const updated = await stack.write('POST', writePath('deals'), {
      body: { groupRef, type: 'update', record: { id, name: 'Updated', stage: null } },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.result).toMatchObject({
      success: true,
      recordId: id,
      data: { name: 'Updated', amount: 100, stage: null },
    });
  });

  it('deletes where the config enables deletes, and only there', async () => {
    const created = await stack.write('POST', writePath('deals'), {
      body: { groupRef, type: 'create', record: { name: 'Doomed' } },
    });
    const id = created.body.result.recordId;
    const deleted = await stack.write('POST', writePath('deals'), {
      body: { groupRef, type: 'delete', record: { id } },
    });
    expect(deleted.status).toBe(200);
    expect(deleted.body.result).toEqual({ success: true, recordId: id });

    const refused = await stack.write('POST', writePath('contacts'), {
      body: { groupRef, type: 'delete', record: { id: 'contact_1' } },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toMatch(/deletionSettings\.enabled/);
  });

  it('answers the provider’s refusal as 422, naming the failed operation', async () => {
    const response = await stack.write('POST', writePath('contacts'), {
      body: { groupRef, type: 'create', record: { email: 'not-an-email' } },
    });
    expect(response.status).toBe(422);
    expect(response.headers.get('content-type')).toMatch(/problem\+json/);
    expect(response.body.context).toMatchObject({ provider: 'sandboxApiKey', providerStatus: 400 });
    const op = await operation(response.body.context.operationId);
    expect(op).toMatchObject({ status: 'failure', result: 'Created 0 of 1 contacts records' });
  });

  it('writes a batch record by record, reporting each', async () => {
    const response = await stack.write('POST', writePath('contacts'), {
      body: {
        groupRef,
        type: 'create',
        batch: [
          { record: { email: 'a@example.com' } },
          { record: { email: 'nope' } },
          { record: { email: 'c@example.com' } },
        ],
      },
    });
    expect(response.status).toBe(200);
    expect(response.body.results.map((r: { success: boolean }) => r.success)).toEqual([true, false, true]);
    expect(response.body.results[1].error).toMatch(/invalid/);
    // The counts the public API's batch answer carries.
    expect(response.body).toMatchObject({ successCount: 2, failureCount: 1 });
    const op = await operation(response.body.operationId);
    expect(op).toMatchObject({ status: 'failure', result: 'Created 2 of 3 contacts records' });
    expect(op.metadata.successfulRecordIds).toHaveLength(2);
  });
});

describe('asynchronous writes', () => {
  it('answers at once, writes in a workflow and reports write.async.done', async () => {
    const response = await stack.write('POST', writePath('deals'), {
      body: {
        groupRef,
        type: 'create',
        mode: 'asynchronous',
        batch: [{ record: { name: 'Async 1' } }, { record: { name: 'Async 2' } }],
      },
    });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(['operationId']);
    const op = await waitForOperation(response.body.operationId);
    expect(op).toMatchObject({ status: 'success', result: 'Created 2 of 2 deals records' });
    expect(await runAttributes(`write/${op.id}`)).toMatchObject({
      installationId: op.installationId,
      provider: 'sandboxApiKey',
      groupRef,
    });
    // Asynchronous writes run on a task queue of their own, apart from installations and deliveries.
    const client = await temporalClient();
    expect((await client.workflow.getHandle(`write/${op.id}`).describe()).taskQueue).toBe(
      `${stack.taskQueue}-writes`,
    );
    const event = await asyncDoneEvent(response.body.operationId);
    expect(event?.data).toMatchObject({
      objectName: 'deals',
      groupRef,
      provider: 'sandboxApiKey',
      success: true,
      successfulRecordIds: op.metadata.successfulRecordIds,
      errors: [],
    });
  });

  it('reports records the provider refused in the event’s errors, as strings like the public payload', async () => {
    const response = await stack.write('POST', writePath('contacts'), {
      body: { groupRef, type: 'create', mode: 'asynchronous', record: { email: 'bad' } },
    });
    expect(response.status).toBe(200);
    const op = await waitForOperation(response.body.operationId);
    expect(op.status).toBe('failure');
    const event = await asyncDoneEvent(response.body.operationId);
    expect(event?.data).toMatchObject({
      success: false,
      successfulRecordIds: [],
      errors: [expect.stringMatching(/^record 0: .*invalid/)],
    });
    expect(
      new PublicApi().checkNotification({ notificationType: 'write.async.done', data: event?.data }),
    ).toEqual([]);
  });
});

describe('write request errors', () => {
  const expectIssue = async (body: Record<string, unknown>, name: string) => {
    const response = await stack.write('POST', writePath('deals'), { body: { groupRef, ...body } });
    expect(response.status).toBe(400);
    expect(response.body.issues.map((issue: { name: string }) => issue.name)).toContain(name);
  };

  it('needs exactly one of record and batch', async () => {
    await expectIssue({ type: 'create' }, 'record');
    await expectIssue({ type: 'create', record: {}, batch: [{ record: {} }] }, 'record');
  });

  it('needs record ids to update or delete', async () => {
    await expectIssue({ type: 'update', record: { name: 'x' } }, 'record.id');
    await expectIssue(
      { type: 'update', batch: [{ record: { id: 'deal_1' } }, { record: {} }] },
      'batch[1].record.id',
    );
  });

  it('refuses asynchronous deletes, unknown types and oversized batches', async () => {
    await expectIssue({ type: 'delete', mode: 'asynchronous', record: { id: 'deal_1' } }, 'mode');
    await expectIssue({ type: 'upsert', record: {} }, 'type');
    await expectIssue(
      { type: 'create', batch: Array.from({ length: 101 }, () => ({ record: {} })) },
      'batch',
    );
  });

  it('answers 404 for a group without an installation, an object outside the config, an unknown integration', async () => {
    const noGroup = await stack.write('POST', writePath('deals'), {
      body: { groupRef: 'nobody', type: 'create', record: { name: 'x' } },
    });
    expect(noGroup.status).toBe(404);
    const notConfigured = await stack.write('POST', writePath('companies'), {
      body: { groupRef, type: 'create', record: { name: 'x' } },
    });
    expect(notConfigured.status).toBe(404);
    expect(notConfigured.body.detail).toMatch(/not a write object/);
    const noIntegration = await stack.write('POST', writePath('deals', 'missing'), {
      body: { groupRef, type: 'create', record: { name: 'x' } },
    });
    expect(noIntegration.status).toBe(404);
  });

  it('is served by the write host only', async () => {
    const response = await stack.api('POST', writePath('deals'), {
      body: { groupRef, type: 'create', record: {} },
    });
    expect([404, 405]).toContain(response.status);
  });
});

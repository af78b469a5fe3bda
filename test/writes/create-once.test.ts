import { config } from '../../src/config.js';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { transaction } from '../../src/db/orm.js';
import { GroupEntity } from '../../src/db/entities/connection.js';
import { InstallationConfigEntity, InstallationEntity } from '../../src/db/entities/installation.js';
import { connectionTarget } from '../../src/domain/credentials.js';
import { createIntegration } from '../../src/domain/integrations.js';
import { writeRecordWith } from '../../src/domain/writes/run.js';
import { connectorDeclaration } from '../../src/providers/catalog/index.js';
import { connectorFor } from '../../src/providers/connectors/index.js';
import { DeclaredConnector } from '../../src/providers/declarative/connector.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import type { AsyncWriteInput } from '../../src/temporal/contracts/write.js';
import { generateConnection, startStackWithSandbox } from '../providers/api-helpers.js';
import type { TestStack } from '../support/stack.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';

/**
 * No provider write happens twice for one request, even when the activity writing it runs again
 * (its worker died, or its answer was lost): a provider that honours idempotency keys (the sandbox)
 * gets the same key again; for one that does not, a create found sent and unanswered is reported
 * "may have been written" and never sent again.
 */

let stack: TestStack;
let sandbox: Sandbox;
let connectionId: string;
let integrationName: string;
const workers: WorkerProcess[] = [];
const groupRef = 'acme';
const sandboxKey = 'sandbox-demo-key';

async function createWriteInstallation(): Promise<void> {
  const connection = await generateConnection(stack, {
    provider: 'sandboxApiKey',
    groupRef,
    apiKey: sandboxKey,
  });
  connectionId = connection.id;
  integrationName = `create-once-${randomUUID().slice(0, 8)}`;
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
          write: { objects: [{ objectName: 'contacts' }] },
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
        write: { objects: { contacts: { objectName: 'contacts' } } },
      },
      createdBy: 'builder:test',
      createTime: new Date(),
    });
  });
}

beforeAll(async () => {
  // No worker in this process: the only workers are the child processes the tests start and kill.
  ({ stack, sandbox } = await startStackWithSandbox());
  await createWriteInstallation();
});

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.kill('SIGKILL')));
  await stack?.close();
  await sandbox?.close();
});

async function worker(): Promise<WorkerProcess> {
  const started = startWorkerProcess({ FERRY_TASK_QUEUE: stack.taskQueue, FERRY_SANDBOX_URL: sandbox.url });
  workers.push(started);
  await started.ready;
  return started;
}

async function sandboxContacts(): Promise<{ id: string; email?: string }[]> {
  const found: { id: string; email?: string }[] = [];
  let cursor: string | null = null;
  do {
    const url = new URL(`${sandbox.url}/api/v1/contacts`);
    url.searchParams.set('limit', '100');
    if (cursor) url.searchParams.set('cursor', cursor);
    const response = await fetch(url, { headers: { 'x-api-key': sandboxKey } });
    const page = (await response.json()) as {
      results: { id: string; email?: string }[];
      nextCursor: string | null;
    };
    found.push(...page.results);
    cursor = page.nextCursor;
  } while (cursor);
  return found;
}

async function withEmail(email: string) {
  return (await sandboxContacts()).filter((contact) => contact.email === email);
}

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function finished(operationId: string, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const operation = (await stack.api('GET', `/projects/${stack.project.name}/operations/${operationId}`))
      .body;
    if (operation.status !== 'in_progress') return operation;
    if (Date.now() > deadline) throw new Error(`operation ${operationId} still in progress`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('an asynchronous create batch whose worker dies after the provider created a record', () => {
  it('creates each record once: the retried activity sends the same Idempotency-Key and gets the same record', async () => {
    const first = await worker();
    const run = randomUUID().slice(0, 8);
    const emails = [0, 1, 2].map((n) => `crash-${run}-${n}@example.com`);
    // The sandbox applies each create, then holds its answer: the worker dies with the record made.
    sandbox.faults.set({ writeAnswerDelayMs: 10_000 });
    const response = await stack.write(
      'POST',
      `/projects/${stack.project.name}/integrations/${integrationName}/objects/contacts`,
      {
        body: {
          groupRef,
          type: 'create',
          mode: 'asynchronous',
          batch: emails.map((email) => ({ record: { email, firstName: 'Crash' } })),
        },
      },
    );
    expect(response.status).toBe(200);
    await until(async () => (await withEmail(emails[0])).length === 1, 'the first create to be applied');
    expect(await first.kill('SIGKILL')).toBeNull();
    sandbox.faults.set({ writeAnswerDelayMs: 0 });

    await worker();
    const operation = await finished(response.body.operationId);
    expect(operation).toMatchObject({ status: 'success', result: 'Created 3 of 3 contacts records' });
    const created = await Promise.all(emails.map(withEmail));
    expect(created.map((records) => records.length)).toEqual([1, 1, 1]);
    expect(operation.metadata.successfulRecordIds).toEqual(created.map((records) => records[0].id));
  }, 150_000);
});

describe('a retried create to a provider that keeps no idempotency key', () => {
  /** The sandbox's own connector with the key taken out of its create: a provider that keeps none. */
  async function keylessConnector(): Promise<DeclaredConnector> {
    const declaration = structuredClone(connectorDeclaration('sandboxApiKey')!);
    delete declaration.defaults!.write!.create!.request.headers;
    return new DeclaredConnector(await connectionTarget(connectionId), {}, declaration);
  }

  async function writeOperation(): Promise<string> {
    // A finished synchronous write gives the records below an operation to belong to.
    const response = await stack.write(
      'POST',
      `/projects/${stack.project.name}/integrations/${integrationName}/objects/contacts`,
      {
        body: { groupRef, type: 'create', record: { email: `op-${randomUUID()}@example.com` } },
      },
    );
    expect(response.status).toBe(200);
    return response.body.operationId;
  }

  it('reports a create sent but never answered as "may have been written", without sending it again', async () => {
    const keyless = await keylessConnector();
    expect(keyless.honoursIdempotencyKey('contacts', 'create')).toBe(false);
    expect(
      connectorFor(await connectionTarget(connectionId)).honoursIdempotencyKey('contacts', 'create'),
    ).toBe(true);
    const email = `keyless-${randomUUID().slice(0, 8)}@example.com`;
    const input: AsyncWriteInput & { index: number } = {
      operationId: await writeOperation(),
      projectId: stack.project.id,
      installationId: randomUUID(),
      connectionId,
      objectName: 'contacts',
      type: 'create',
      items: [{ record: { email, firstName: 'Keyless' } }],
      index: 0,
    };

    // The first attempt's create is applied and its answer held, as when its worker dies mid-call.
    sandbox.faults.set({ writeAnswerDelayMs: 3_000 });
    const firstAttempt = writeRecordWith(keyless, input);
    await until(async () => (await withEmail(email)).length === 1, 'the first create to be applied');

    // The retry finds the create sent with no answer recorded: it reports it and sends nothing.
    const retry = await writeRecordWith(await keylessConnector(), input);
    expect(retry).toEqual({
      index: 0,
      success: false,
      error: expect.stringContaining('may have been written'),
    });
    expect(retry.error).toContain('"sandboxApiKey"');
    sandbox.faults.set({ writeAnswerDelayMs: 0 });

    // Once the first attempt records its answer, a later retry reports that answer.
    const answered = await firstAttempt;
    expect(answered).toMatchObject({ index: 0, success: true, recordId: expect.any(String) });
    expect(await writeRecordWith(await keylessConnector(), input)).toEqual(answered);
    expect((await withEmail(email)).map((contact) => contact.id)).toEqual([answered.recordId]);
  }, 60_000);

  it('sends a create again after a 429, which the provider surely did not apply', async () => {
    const email = `limited-${randomUUID().slice(0, 8)}@example.com`;
    const input: AsyncWriteInput & { index: number } = {
      operationId: await writeOperation(),
      projectId: stack.project.id,
      installationId: randomUUID(),
      connectionId,
      objectName: 'contacts',
      type: 'create',
      items: [{ record: { email, firstName: 'Limited' } }],
      index: 0,
    };
    // One request left in the window, spent at once: the create is answered 429.
    sandbox.faults.set({ rateLimit: { requests: 1, perSeconds: 60 } });
    await fetch(`${sandbox.url}/api/v1/me`, { headers: { 'x-api-key': sandboxKey } });
    const limited = new DeclaredConnector(
      await connectionTarget(connectionId),
      { retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } },
      (await keylessConnector()).declaration,
    );
    await expect(writeRecordWith(limited, input)).rejects.toThrow();
    sandbox.faults.set({ rateLimit: null });
    expect(await writeRecordWith(await keylessConnector(), input)).toMatchObject({ success: true });
    expect(await withEmail(email)).toHaveLength(1);
  }, 60_000);
});

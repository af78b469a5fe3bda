import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { em as newEntityManager } from '../../src/db/orm.js';
import { NotificationEventEntity } from '../../src/db/entities/event.js';
import { OperationEntity } from '../../src/db/entities/operation.js';
import { generateSigningSecret } from '../../src/delivery/signing.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { PublicApi } from '../support/public-api.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { createReadFixture } from './fixtures.js';
import { eventually } from '../installations/support.js';

const CONTACTS = 260;

let sandbox: Sandbox;
let stack: TestStack;
let receiver: WebhookReceiver;
let integrationId: string;
let installationId: string;
const groupRef = `acme-${randomUUID().slice(0, 8)}`;

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function finishedOperation(operationId: string) {
  return waitFor(`operation ${operationId} to finish`, async () => {
    const response = await stack.api('GET', `/projects/${stack.project.id}/operations/${operationId}`);
    return response.status === 200 && response.body.status !== 'in_progress' ? response.body : undefined;
  });
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: CONTACTS, companies: 5, deals: 5 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  stack = await startTestStack({ worker: true });
  const signingSecret = generateSigningSecret();
  receiver = await WebhookReceiver.start([signingSecret]);
  const destination = await stack.api('POST', `/projects/${stack.project.id}/destinations`, {
    body: {
      name: 'crm-sync',
      type: 'webhook',
      metadata: { url: receiver.url() },
      secrets: { signingSecret },
    },
  });
  expect(destination.status).toBe(201);
  const name = `crm-${randomUUID().slice(0, 8)}`;
  const integration = await stack.api('POST', `/projects/${stack.project.id}/integrations`, {
    body: {
      name,
      provider: 'sandboxApiKey',
      latestRevision: {
        specVersion: '1.0.0',
        content: {
          name,
          provider: 'sandboxApiKey',
          read: {
            objects: [
              {
                objectName: 'contacts',
                destination: 'crm-sync',
                schedule: '0 0 1 1 *',
                requiredFields: [{ fieldName: 'email' }],
                optionalFieldsAuto: 'all',
                backfill: { defaultPeriod: { fullHistory: true } },
                delivery: { pageSize: 100 },
              },
              { objectName: 'deals', destination: 'crm-sync', schedule: '0 0 1 1 *' },
            ],
          },
        },
      },
    },
  });
  expect(integration.status).toBe(201);
  integrationId = integration.body.id;
  const connection = await stack.api('POST', `/projects/${stack.project.id}/connections:generate`, {
    body: { provider: 'sandboxApiKey', groupRef, consumerRef: 'jane', apiKey: 'sandbox-demo-key' },
  });
  expect(connection.status).toBe(201);
  const installation = await stack.api(
    'POST',
    `/projects/${stack.project.id}/integrations/${integrationId}/installations`,
    {
      body: {
        groupRef,
        config: {
          content: {
            provider: 'sandboxApiKey',
            read: {
              objects: {
                contacts: {
                  objectName: 'contacts',
                  schedule: '0 0 1 1 *',
                  destination: 'crm-sync',
                  selectedFields: {},
                  selectedFieldsAuto: 'all',
                },
              },
            },
          },
        },
      },
    },
  );
  expect(installation.status).toBe(201);
  installationId = installation.body.id;
});

afterAll(async () => {
  await receiver?.stop();
  await stack?.close();
  await sandbox?.close();
});

describe('an installation created through the API', () => {
  it('backfills its object and every record arrives, signed', async () => {
    await receiver.waitFor(
      () => new Set(receiver.acceptedRecordIds()).size === CONTACTS,
      60_000,
      'the backfill',
    );
    expect(receiver.requests.every((request) => request.verified)).toBe(true);
    expect(receiver.requests[0].body).toMatchObject({ readType: 'backfill', installationId, groupRef });
    // selectedFieldsAuto: all delivers every field the provider returned
    expect(Object.keys(receiver.requests[0].body.result[0].fields)).toEqual(
      expect.arrayContaining(['email', 'firstname', 'lastname', 'updatedat']),
    );
  });

  it('lists the backfill among the installation’s operations and reports its progress', async () => {
    const list = await waitFor('the backfill operation', async () => {
      const response = await stack.api(
        'GET',
        `/projects/${stack.project.id}/integrations/${integrationId}/installations/${installationId}/operations`,
      );
      return response.body.results?.find((operation: any) => operation.status === 'success')
        ? response.body
        : undefined;
    });
    const backfill = list.results.find((operation: any) => operation.metadata.readType === 'backfill');
    expect(backfill).toMatchObject({ status: 'success', result: `Read ${CONTACTS} contacts in 1 page.` });
    const progress = await stack.api(
      'GET',
      `/projects/${stack.project.id}/integrations/${integrationId}/installations/${installationId}/objects/contacts/backfill-progress`,
    );
    expect(progress.body).toMatchObject({ operationId: backfill.id, recordsProcessed: CONTACTS });
  });

  it('runs a triggered read on the read host and reports it with read.triggered.done', async () => {
    const since = new Date(Date.parse(sandbox.anchor) - 2 * 24 * 3600 * 1000).toISOString();
    const before = receiver.requests.length;
    const response = await stack.read(
      'POST',
      `/projects/${stack.project.id}/integrations/${integrationId}/objects/contacts`,
      {
        body: { groupRef, mode: 'async', sinceTimestamp: since },
      },
    );
    expect(response.status).toBe(201);
    expect(response.body).toEqual({ operationId: expect.any(String) });
    const operation = await finishedOperation(response.body.operationId);
    expect(operation).toMatchObject({
      status: 'success',
      metadata: { readType: 'triggered', backfill: false },
    });
    const delivered = receiver.requests.slice(before);
    expect(delivered.every((request) => request.body.readType === 'triggered')).toBe(true);
    expect(
      delivered.flatMap((request) => request.body.result).every((entry: any) => entry.raw.updatedAt >= since),
    ).toBe(true);
    const events = await (
      await newEntityManager()
    ).find(NotificationEventEntity, {
      projectId: stack.project.id,
      type: 'read.triggered.done',
    });
    const event = events.find((candidate) => candidate.data.operationId === response.body.operationId);
    expect(event?.data).toMatchObject({
      objectName: 'contacts',
      fromTimestamp: since,
      installationId,
      groupRef,
    });
  });

  it('counts a triggered read without sinceTimestamp as a full-history backfill', async () => {
    const response = await stack.read(
      'POST',
      `/projects/${stack.project.id}/integrations/${integrationId}/objects/contacts`,
      {
        body: { groupRef, mode: 'async' },
      },
    );
    expect(response.status).toBe(201);
    const operation = await finishedOperation(response.body.operationId);
    expect(operation).toMatchObject({ status: 'success', metadata: { backfill: true } });
    expect(operation.metadata.progress.recordsProcessed).toBe(CONTACTS);
    const progress = await stack.api(
      'GET',
      `/projects/${stack.project.id}/integrations/${integrationId}/installations/${installationId}/objects/contacts/backfill-progress`,
    );
    expect(progress.body.operationId).toBe(response.body.operationId);
    // It has no start: read.triggered.done leaves fromTimestamp out (the public type is a string).
    const events = await (
      await newEntityManager()
    ).find(NotificationEventEntity, { projectId: stack.project.id, type: 'read.triggered.done' });
    const event = events.find((candidate) => candidate.data.operationId === response.body.operationId);
    expect(event?.data).toMatchObject({ objectName: 'contacts', installationId });
    expect(event?.data).not.toHaveProperty('fromTimestamp');
    expect(new PublicApi().checkNotification({ notificationType: event?.type, data: event?.data })).toEqual(
      [],
    );
  });
});

describe('triggering a read: bad input', () => {
  const trigger = (body: Record<string, unknown>, objectName = 'contacts') =>
    stack.read('POST', `/projects/${stack.project.id}/integrations/${integrationId}/objects/${objectName}`, {
      body,
    });

  it('answers 400 for an object the installation does not read, and creates nothing', async () => {
    const before = await (await newEntityManager()).count(OperationEntity, { installationId });
    const response = await trigger({ groupRef, mode: 'async' }, 'deals');
    expect(response.status).toBe(400);
    expect(response.body.issues[0]).toMatchObject({ in: 'path', name: 'objectName', value: 'deals' });
    expect(await (await newEntityManager()).count(OperationEntity, { installationId })).toBe(before);
    expect((await trigger({ groupRef, mode: 'async' }, 'widgets')).status).toBe(400);
  });

  it('answers 404 for an unknown group or integration', async () => {
    expect((await trigger({ groupRef: 'nobody', mode: 'async' })).status).toBe(404);
    const unknown = await stack.read(
      'POST',
      `/projects/${stack.project.id}/integrations/${randomUUID()}/objects/contacts`,
      {
        body: { groupRef, mode: 'async' },
      },
    );
    expect(unknown.status).toBe(404);
  });

  it.each([
    [{ groupRef, mode: 'sync' }, 'mode'],
    [{ groupRef }, 'mode'],
    [{ mode: 'async' }, 'groupRef'],
    [{ groupRef, mode: 'async', sinceTimestamp: 'yesterday' }, 'sinceTimestamp'],
    [
      {
        groupRef,
        mode: 'async',
        sinceTimestamp: '2026-01-02T00:00:00Z',
        untilTimestamp: '2026-01-01T00:00:00Z',
      },
      'untilTimestamp',
    ],
    [{ groupRef, mode: 'async', extra: true }, 'extra'],
  ])('answers 400 for %j naming %s', async (body, name) => {
    const response = await trigger(body);
    expect(response.status).toBe(400);
    expect(response.body.issues.map((issue: any) => issue.name)).toContain(name);
  });

  it('is served by the read host only', async () => {
    const response = await stack.api(
      'POST',
      `/projects/${stack.project.id}/integrations/${integrationId}/objects/contacts`,
      {
        body: { groupRef, mode: 'async' },
      },
    );
    expect(response.status).toBe(404);
  });

  it('restarts an installation workflow that is not running from PostgreSQL, then runs the read', async () => {
    // The fixture writes the installation's rows directly: no workflow was ever started for it.
    const fixture = await createReadFixture(stack);
    const response = await stack.read(
      'POST',
      `/projects/${stack.project.id}/integrations/${fixture.integrationId}/objects/contacts`,
      {
        body: { groupRef: fixture.groupRef, mode: 'async', sinceTimestamp: '2024-01-01T00:00:00Z' },
      },
    );
    expect(response.status).toBe(201);
    const operationId = response.body.operationId as string;
    await eventually(async () => {
      const operation = await (await newEntityManager()).findOne(OperationEntity, { id: operationId });
      return operation?.status === 'success';
    });
    expect(fixture.receiver.acceptedRecordIds().length).toBeGreaterThan(0);
    await fixture.receiver.stop();
  });

  it('answers 404 for backfill progress of an object without a backfill', async () => {
    const response = await stack.api(
      'GET',
      `/projects/${stack.project.id}/integrations/${integrationId}/installations/${installationId}/objects/deals/backfill-progress`,
    );
    expect(response.status).toBe(404);
    const unknown = await stack.api(
      'GET',
      `/projects/${stack.project.id}/integrations/${integrationId}/installations/${randomUUID()}/objects/contacts/backfill-progress`,
    );
    expect(unknown.status).toBe(404);
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { decryptSecret } from '../../src/crypto/secrets.js';
import { OperationEntity } from '../../src/db/entities/operation.js';
import { SubscriptionEntity, type Subscription } from '../../src/db/entities/subscription.js';
import { SubscriptionEventEntity } from '../../src/db/entities/subscription-event.js';
import { transaction } from '../../src/db/orm.js';
import { generateSigningSecret } from '../../src/delivery/signing.js';
import {
  sandboxSignatureHeader,
  signSandboxPayload,
  startSandbox,
  type Sandbox,
} from '../../src/sandbox/index.js';
import { subscriptionEventWorkflowId } from '../../src/temporal/contracts/workflow-ids.js';
import { runAttributes } from '../support/run-attributes.js';
import { request, startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver, type ReceivedRequest } from '../support/webhook-receiver.js';
import {
  configContent,
  connectGroup,
  createIntegration,
  eventually,
  install,
  type InstallationFixture,
} from '../installations/support.js';

/**
 * Subscribe end to end: the sandbox provider sends signed change events to the URL Ferry registered,
 * and each reaches the subscribed object's destination once, as a subscribe message recorded as an
 * operation; events the config does not watch are kept and skipped; forged ones are refused.
 */

let stack: TestStack;
let sandbox: Sandbox;
let receiver: WebhookReceiver;
let fixture: InstallationFixture;
let installationId: string;
let subscription: Subscription;
let groupRef: string;

const sandboxApi = (method: string, path: string, json?: unknown) =>
  fetch(`${sandbox.url}/api/v1${path}`, {
    method,
    headers: { 'x-api-key': 'sandbox-demo-key', 'content-type': 'application/json' },
    ...(json !== undefined && { body: JSON.stringify(json) }),
  }).then(async (response) => ({
    status: response.status,
    body: (response.status === 204 ? undefined : await response.json()) as any,
  }));

const webhookPath = () => `/v1/webhooks/providers/sandboxApiKey/${subscription.id}`;

/** Posts a body to Ferry's webhook URL as the sandbox would, signed with the subscription's secret. */
function postSigned(event: Record<string, unknown>, secret = decryptSecret(subscription.secretEncrypted!)) {
  const body = JSON.stringify(event);
  return request('POST', `${new URL(stack.urls.api).origin}${webhookPath()}`, {
    rawBody: body,
    headers: {
      'content-type': 'application/json',
      [sandboxSignatureHeader]: signSandboxPayload(secret, body),
    },
  });
}

const subscribeMessages = (): ReceivedRequest[] =>
  receiver.accepted().filter((received) => received.body?.action === 'subscribe');

async function nextMessage(count: number): Promise<ReceivedRequest> {
  await receiver.waitFor(() => subscribeMessages().length >= count, 30_000, `subscribe message ${count}`);
  return subscribeMessages()[count - 1];
}

const eventRows = () =>
  transaction((em) =>
    em.find(SubscriptionEventEntity, { subscriptionId: subscription.id }, { orderBy: { createTime: 'asc' } }),
  );

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 5, companies: 1, deals: 1, webhookRetryDelaysMs: [100] });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  stack = await startTestStack({ worker: true });
  // The webhook URL Ferry registers at the provider names the API listener this test started.
  process.env.FERRY_PUBLIC_API_URL = new URL(stack.urls.api).origin;
  resetConfig();
  const signingSecret = generateSigningSecret();
  receiver = await WebhookReceiver.start([signingSecret]);
  const destination = await stack.api('POST', `/projects/${stack.project.name}/destinations`, {
    body: { name: 'hooks', type: 'webhook', metadata: { url: receiver.url() }, secrets: { signingSecret } },
  });
  expect(destination.status).toBe(201);
  fixture = await createIntegration(stack);
  ({ groupRef } = await connectGroup(stack));
  const created = await install(stack, fixture, groupRef, {
    ...configContent({ selectedFieldMappings: { priority: 'lastName' } }),
    subscribe: {
      objects: {
        contacts: {
          objectName: 'contacts',
          destination: 'hooks',
          inheritFieldsAndMapping: true,
          createEvent: { enabled: 'always' },
          updateEvent: { enabled: 'always', requiredWatchFields: [['firstName']] },
          deleteEvent: { enabled: 'always' },
          otherEvents: [['contacts.merged']],
        },
      },
    },
  });
  installationId = created.id;
  subscription = await eventually(() =>
    transaction((em) => em.findOne(SubscriptionEntity, { installationId })).then((row) => row ?? undefined),
  );
}, 90_000);

afterAll(async () => {
  await stack?.close();
  await sandbox?.close();
  await receiver?.stop();
  delete process.env.FERRY_SANDBOX_URL;
  delete process.env.FERRY_PUBLIC_API_URL;
});

describe('provider change events', () => {
  let contactId: string;

  it('delivers a created record with the installation’s fields and mappings, signed, as a subscribe operation', async () => {
    const created = await sandboxApi('POST', '/contacts', {
      email: 'grace@example.com',
      firstName: 'Grace',
      lastName: 'Hopper',
    });
    expect(created.status).toBe(201);
    contactId = created.body.id;
    const message = await nextMessage(1);
    expect(message.verified).toBe(true);
    expect(message.body).toMatchObject({
      action: 'subscribe',
      projectId: stack.project.id,
      provider: 'sandboxApiKey',
      installationId,
      objectName: 'contacts',
      rawObjectName: 'contacts',
      resultInfo: { type: 'inline', numRecords: 1 },
    });
    const [entry] = message.body.result;
    expect(entry).toMatchObject({
      subscribeEventType: 'create',
      providerEventType: 'contacts.created',
      fields: { email: 'grace@example.com', firstname: 'Grace' },
      mappedFields: { priority: 'Hopper' },
      raw: { id: contactId, email: 'grace@example.com' },
      rawEvent: { type: 'contacts.created', recordId: contactId },
    });
    expect(entry.fields).not.toHaveProperty('lastname');

    const operation = await eventually(async () => {
      const [row] = await eventRows();
      const found = row?.operationId
        ? await transaction((em) => em.findOne(OperationEntity, { id: row.operationId! }))
        : undefined;
      return found?.status === 'success' ? found : undefined;
    });
    expect(operation).toMatchObject({ actionType: 'subscribe', installationId });
    const [row] = await eventRows();
    expect(await runAttributes(subscriptionEventWorkflowId(row.id))).toEqual({
      projectId: stack.project.id,
      integrationId: fixture.integrationId,
      installationId,
      provider: 'sandboxApiKey',
      groupRef,
    });
    const listed = await stack.api('GET', `/projects/${stack.project.name}/operations/${operation.id}/logs`);
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).toContain('contacts.created');
  });

  it('skips updates that change none of the required watch fields, and delivers those that do', async () => {
    expect((await sandboxApi('PATCH', `/contacts/${contactId}`, { lastName: 'Brewster' })).status).toBe(200);
    const skipped = await eventually(async () => (await eventRows()).find((row) => row.skippedReason));
    expect(skipped.skippedReason).toMatch(/watched fields/);

    expect((await sandboxApi('PATCH', `/contacts/${contactId}`, { firstName: 'Amazing' })).status).toBe(200);
    const [entry] = (await nextMessage(2)).body.result;
    expect(entry).toMatchObject({
      subscribeEventType: 'update',
      providerEventType: 'contacts.updated',
      fieldsUpdated: ['firstName'],
      fields: { firstname: 'Amazing' },
    });
    expect(subscribeMessages()).toHaveLength(2);
  });

  it('reads the record from the provider when an event carries only its id', async () => {
    const response = await postSigned({
      id: `evt_${randomUUID()}`,
      type: 'contacts.updated',
      occurredAt: new Date().toISOString(),
      object: 'contacts',
      recordId: contactId,
      changedFields: ['firstName'],
    });
    expect(response).toMatchObject({ status: 200, body: { received: 1, duplicates: 0 } });
    const [entry] = (await nextMessage(3)).body.result;
    expect(entry).toMatchObject({
      subscribeEventType: 'update',
      raw: { id: contactId, firstName: 'Amazing' },
      fields: { firstname: 'Amazing' },
    });
  });

  it('passes the provider events named in otherEvents through, and skips the rest', async () => {
    const merged = await postSigned({
      id: `evt_${randomUUID()}`,
      type: 'contacts.merged',
      occurredAt: new Date().toISOString(),
      object: 'contacts',
      recordId: contactId,
    });
    expect(merged.status).toBe(200);
    const [entry] = (await nextMessage(4)).body.result;
    expect(entry).toMatchObject({ subscribeEventType: 'other', providerEventType: 'contacts.merged' });

    const before = (await eventRows()).length;
    const archived = await postSigned({
      id: `evt_${randomUUID()}`,
      type: 'contacts.archived',
      occurredAt: new Date().toISOString(),
      object: 'contacts',
      recordId: contactId,
    });
    expect(archived.status).toBe(200);
    const skipped = await eventually(async () =>
      (await eventRows()).slice(before).find((row) => row.skippedReason),
    );
    expect(skipped.skippedReason).toMatch(/otherEvents/);
  });

  it('delivers a deletion with the record’s id', async () => {
    expect((await sandboxApi('DELETE', `/contacts/${contactId}`)).status).toBe(204);
    const [entry] = (await nextMessage(5)).body.result;
    expect(entry).toMatchObject({
      subscribeEventType: 'delete',
      providerEventType: 'contacts.deleted',
      id: contactId,
    });
  });

  it('delivers an event the provider sends twice only once', async () => {
    const [first] = await eventRows();
    const rawEvent = (first.event as { rawEvent: Record<string, unknown> }).rawEvent;
    const delivered = subscribeMessages().length;
    const again = await postSigned(rawEvent);
    expect(again).toMatchObject({ status: 200, body: { received: 1, duplicates: 1 } });
    const rows = await eventRows();
    expect(rows.filter((row) => row.providerEventId === first.providerEventId)).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(subscribeMessages()).toHaveLength(delivered);
  });
});

describe('refused webhooks', () => {
  it('answers 401 to a signature that does not check out and keeps nothing', async () => {
    const before = (await eventRows()).length;
    const forged = await postSigned(
      { id: 'evt_forged', type: 'contacts.created', object: 'contacts', recordId: 'x' },
      'not-the-secret',
    );
    expect(forged.status).toBe(401);
    expect(forged.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const unsigned = await request('POST', `${new URL(stack.urls.api).origin}${webhookPath()}`, {
      body: { id: 'evt_x' },
    });
    expect(unsigned.status).toBe(401);
    expect((await eventRows()).length).toBe(before);
  });

  it('answers 404 for a subscription that does not exist or belongs to another provider', async () => {
    const unknown = await request(
      'POST',
      `${stack.urls.api}/webhooks/providers/sandboxApiKey/${randomUUID()}`,
      {
        body: {},
      },
    );
    expect(unknown.status).toBe(404);
    const otherProvider = await request(
      'POST',
      `${stack.urls.api}/webhooks/providers/hubspot/${subscription.id}`,
      {
        body: {},
      },
    );
    expect(otherProvider.status).toBe(404);
  });

  // Last: the flood blocks this caller's address for a minute.
  it('rate-limits a flood of refused webhooks while the API keeps answering', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) {
      const forged = await postSigned({ id: `evt_flood_${i}` }, 'wrong');
      statuses.push(forged.status);
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.at(-1)).toBe(429);
    const limited = await postSigned({ id: 'evt_after' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    const api = await stack.api('GET', `/projects/${stack.project.name}/integrations`);
    expect(api.status).toBe(200);
  });
});

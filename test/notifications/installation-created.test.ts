import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { generateSigningSecret } from '../../src/delivery/signing.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

let sandbox: Sandbox;
let stack: TestStack;
let receiver: WebhookReceiver;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 10, companies: 1, deals: 1 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  stack = await startTestStack({ worker: true });
  const signingSecret = generateSigningSecret();
  receiver = await WebhookReceiver.start([signingSecret]);
  const project = `/projects/${stack.project.id}`;
  const ok = (response: { status: number; body: any }, status: number) => {
    expect(response.status).toBe(status);
    return response.body;
  };
  // The builder wires installation events to their webhook: topic, event route, destination route.
  const destination = ok(
    await stack.api('POST', `${project}/destinations`, {
      body: {
        name: 'events',
        type: 'webhook',
        metadata: { url: receiver.url() },
        secrets: { signingSecret },
      },
    }),
    201,
  );
  const topic = ok(await stack.api('POST', `${project}/topics`, { body: { name: 'lifecycle' } }), 201);
  ok(
    await stack.api('POST', `${project}/notification-event-topic-routes`, {
      body: { eventType: 'installation.created', topicId: topic.id },
    }),
    201,
  );
  ok(
    await stack.api('POST', `${project}/topic-destination-routes`, {
      body: { topicId: topic.id, destinationId: destination.id },
    }),
    201,
  );
});

afterAll(async () => {
  await receiver?.stop();
  await stack?.close();
  await sandbox?.close();
});

describe('the whole notification path', () => {
  it('delivers installation.created, signed, to a webhook subscribed through topic routes', async () => {
    const project = `/projects/${stack.project.id}`;
    const integration = await stack.api('POST', `${project}/integrations`, {
      body: {
        name: 'lifecycle-crm',
        provider: 'sandboxApiKey',
        latestRevision: {
          specVersion: '1.0.0',
          content: {
            name: 'lifecycle-crm',
            provider: 'sandboxApiKey',
            read: { objects: [{ objectName: 'contacts', destination: 'events', schedule: '0 0 1 1 *' }] },
          },
        },
      },
    });
    expect(integration.status).toBe(201);
    const connection = await stack.api('POST', `${project}/connections:generate`, {
      body: { provider: 'sandboxApiKey', groupRef: 'acme', consumerRef: 'alice', apiKey: 'sandbox-demo-key' },
    });
    expect(connection.status).toBe(201);
    const installation = await stack.api('POST', `${project}/integrations/lifecycle-crm/installations`, {
      body: {
        groupRef: 'acme',
        config: {
          content: {
            provider: 'sandboxApiKey',
            read: {
              objects: {
                contacts: {
                  objectName: 'contacts',
                  schedule: '0 0 1 1 *',
                  destination: 'events',
                  selectedFields: {},
                },
              },
            },
          },
        },
      },
    });
    expect(installation.status).toBe(201);

    const find = () =>
      receiver.requests.find((request) => request.body?.notificationType === 'installation.created');
    await receiver.waitFor(() => find() !== undefined, 30_000, 'installation.created');
    const delivered = find()!;
    expect(delivered.verified).toBe(true);
    expect(delivered.messageId).toMatch(/^msg_/);
    expect(delivered.body.data).toMatchObject({
      projectId: stack.project.id,
      provider: 'sandboxApiKey',
      integrationId: integration.body.id,
      integrationName: 'lifecycle-crm',
      installationId: installation.body.id,
      connectionId: connection.body.id,
      groupRef: 'acme',
      consumerRef: 'alice',
    });
    expect(delivered.body.data.config.content.read.objects.contacts.objectName).toBe('contacts');
    // connection.created has no route, so it is kept and listed, not delivered.
    expect(receiver.requests.some((request) => request.body?.notificationType === 'connection.created')).toBe(
      false,
    );
    const unrouted = await stack.api('GET', `${project}/events?eventType=connection.created`);
    expect(unrouted.body.results).toHaveLength(1);
  });
});

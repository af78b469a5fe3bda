import { config } from '../../src/config.js';
import { randomUUID } from 'node:crypto';
import { expect } from '@jest/globals';
import { generateSigningSecret } from '../../src/delivery/signing.js';
import { transaction } from '../../src/db/orm.js';
import { InstallationConfigEntity, InstallationEntity } from '../../src/db/entities/installation.js';
import { createIntegration } from '../../src/domain/integrations.js';
import type { ReadObject, WatchSchema } from '../../src/schemas/integration-content.js';
import type { ReadConfig } from '../../src/schemas/installations.js';
import { temporalClient } from '../../src/temporal/client.js';
import type { ReadObjectInput, ReadObjectResult } from '../../src/temporal/contracts/read.js';
import type { TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * An installation reading the sandbox provider, made of rows written directly (the read pipeline
 * is tested on its own here), and a verifying webhook receiver as its destination.
 */

export interface ReadFixture {
  receiver: WebhookReceiver;
  destinationId: string;
  destinationName: string;
  integrationId: string;
  installationId: string;
  groupRef: string;
  projectId: string;
}

export interface FixtureOptions {
  objectName?: string;
  declared?: Partial<ReadObject>;
  configured?: Partial<ReadConfig>;
  /** Extra objects in the manifest and config. */
  more?: { declared: ReadObject; configured?: ReadConfig }[];
  receiver?: WebhookReceiver;
  /** The provider and the credentials its connection is generated with (default: the sandbox's API key). */
  provider?: string;
  credentials?: Record<string, unknown>;
  /** The manifest's watchSchema, sent to the fixture's destination unless it names another. */
  watchSchema?: Partial<WatchSchema>;
  /** A destination of another type instead of the webhook receiver (which is then left unused). */
  destination?: { type: string; metadata: Record<string, unknown>; secrets?: Record<string, unknown> };
}

export async function createReadFixture(
  stack: TestStack,
  options: FixtureOptions = {},
): Promise<ReadFixture> {
  const objectName = options.objectName ?? 'contacts';
  const provider = options.provider ?? 'sandboxApiKey';
  const signingSecret = generateSigningSecret();
  const receiver = options.receiver ?? (await WebhookReceiver.start());
  receiver.secrets.push(signingSecret);
  const destinationName = `hook-${randomUUID().slice(0, 8)}`;
  const created = await stack.api('POST', `/projects/${stack.project.id}/destinations`, {
    body: options.destination
      ? { name: destinationName, ...options.destination }
      : {
          name: destinationName,
          type: 'webhook',
          metadata: { url: receiver.url() },
          secrets: { signingSecret },
        },
  });
  expect(created.status).toBe(201);

  const groupRef = `group-${randomUUID().slice(0, 8)}`;
  const connection = await stack.api('POST', `/projects/${stack.project.id}/connections:generate`, {
    body: {
      provider,
      groupRef,
      consumerRef: `user-${groupRef}`,
      ...(options.credentials ?? { apiKey: 'sandbox-demo-key' }),
    },
  });
  expect(connection.status).toBe(201);

  const declared: ReadObject = {
    objectName,
    destination: destinationName,
    schedule: '*/30 * * * *',
    requiredFields: [{ fieldName: 'email' }],
    optionalFields: [{ fieldName: 'firstName' }, { fieldName: 'lastName', mapToName: 'surname' }],
    ...options.declared,
  };
  const configured: ReadConfig = {
    objectName,
    schedule: declared.schedule,
    destination: destinationName,
    selectedFields: { firstName: true, lastName: true },
    ...options.configured,
  };
  const more = options.more ?? [];
  // createIntegration checks the content's name against the integration's: build them together.
  const name = `reads-${randomUUID().slice(0, 8)}`;
  return transaction(async (em) => {
    const { integration, revision } = await createIntegration(
      em,
      stack.project.id,
      {
        name,
        provider,
        specVersion: '1.0.0',
        content: {
          name,
          provider,
          read: { objects: [declared, ...more.map((object) => object.declared)] },
          ...(options.watchSchema && {
            watchSchema: { destination: destinationName, ...options.watchSchema },
          }),
        },
      },
      config(),
    );
    const installationId = randomUUID();
    const configId = randomUUID();
    const objects: Record<string, ReadConfig> = { [objectName]: configured };
    for (const object of more) if (object.configured) objects[object.declared.objectName] = object.configured;
    em.create(InstallationEntity, {
      id: installationId,
      projectId: stack.project.id,
      integrationId: integration.id,
      groupId: await groupId(em, stack.project.id, groupRef),
      connectionId: connection.body.id,
      configId,
      createdBy: 'consumer:test',
      healthStatus: 'healthy',
      // Incremental reads without a watermark start at the installation's creation.
      createTime: new Date('2000-01-01T00:00:00Z'),
      updateTime: new Date(),
    });
    em.create(InstallationConfigEntity, {
      id: configId,
      projectId: stack.project.id,
      installationId,
      revisionId: revision.id,
      content: { provider, read: { objects } },
      createdBy: 'builder:test',
      createTime: new Date(),
    });
    return {
      receiver,
      destinationId: created.body.id,
      destinationName,
      integrationId: integration.id,
      installationId,
      groupRef,
      projectId: stack.project.id,
    };
  });
}

async function groupId(
  em: Parameters<Parameters<typeof transaction>[0]>[0],
  projectId: string,
  groupRef: string,
) {
  const rows = await em.execute<{ id: string }[]>(
    'select id from groups where project_id = ? and group_ref = ?',
    [projectId, groupRef],
  );
  return rows[0].id;
}

/** Runs the read child workflow directly, as the installation workflow would. */
export async function runRead(
  stack: TestStack,
  fixture: ReadFixture,
  input: Partial<ReadObjectInput> & Pick<ReadObjectInput, 'readType'>,
): Promise<{ operationId: string; result: ReadObjectResult }> {
  const operationId = input.operationId ?? randomUUID();
  const client = await temporalClient();
  const result = await client.workflow.execute('readObjectWorkflow', {
    taskQueue: stack.taskQueue,
    workflowId: `read/${operationId}`,
    args: [
      {
        operationId,
        installationId: fixture.installationId,
        projectId: fixture.projectId,
        objectName: 'contacts',
        ...input,
      } satisfies ReadObjectInput,
    ],
    workflowExecutionTimeout: '2 minutes',
  });
  return { operationId, result: result as ReadObjectResult };
}

/** Switches the fixture's installation to a revision of its manifest that also writes contacts. */
export async function enableContactWrites(
  stack: TestStack,
  fixture: ReadFixture,
): Promise<{ id: string; name: string }> {
  const path = `/projects/${stack.project.id}/integrations/${fixture.integrationId}`;
  const integration = (await stack.api('GET', path)).body;
  const revision = await stack.api('POST', `${path}/revisions`, {
    body: {
      sourceYaml: [
        'specVersion: 1.0.0',
        'integrations:',
        `  - name: ${integration.name}`,
        '    provider: sandboxApiKey',
        '    read:',
        '      objects:',
        '        - objectName: contacts',
        `          destination: ${fixture.destinationName}`,
        '          schedule: "*/30 * * * *"',
        '    write:',
        '      objects:',
        '        - objectName: contacts',
      ].join('\n'),
    },
  });
  expect(revision.status).toBe(201);
  const patched = await stack.api('PATCH', `${path}/installations/${fixture.installationId}`, {
    body: {
      updateMask: ['config.revisionId', 'config.content.write.objects.contacts'],
      installation: {
        config: {
          revisionId: revision.body.id,
          content: { write: { objects: { contacts: { objectName: 'contacts' } } } },
        },
      },
    },
  });
  expect(patched.status).toBe(200);
  return { id: integration.id, name: integration.name };
}
